package tools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOutputSchemaRefusesBadSchemas(t *testing.T) {
	for _, tc := range []struct{ schema, want string }{
		{``, "empty"},
		{`[1]`, "not a JSON object"},
		{`{"type":"objekt"}`, `unknown type "objekt"`},
		{`{"type":"object","properties":{"a":{"type":["string","nope"]}}}`, `unknown type "nope"`},
		{`{"$ref":"https://example.com/s.json"}`, "cannot resolve remote schemas"},
		{`{"type":`, "output schema"},
		{`{"type":"string","x":"` + strings.Repeat("a", MaxOutputSchemaBytes) + `"}`, "more than"},
	} {
		_, err := ParseOutputSchema([]byte(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseOutputSchema(%.40q) = %v; want an error with %q", tc.schema, err, tc.want)
		}
	}
}

func TestOutputSchemaValidate(t *testing.T) {
	o, err := ParseOutputSchema([]byte(`{"type":"object","properties":{"price":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},"enum":{"enum":[{"type":"x"}]}},"required":["price","tags"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	for data, want := range map[string]string{
		`{"price":12.5,"tags":["a"]}`:      "",
		`{"price":"12","tags":["a"]}`:      `want "number"`,
		`{"price":12,"tags":[1]}`:          `want "string"`,
		`{"price":12}`:                     "missing properties",
		`{"price":12,"tags":[],"other":1}`: "additional properties",
		`{"price":1,"price":2,"tags":[]}`:  "not valid JSON",
		``:                                 "no data",
	} {
		err := o.Validate([]byte(data))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("Validate(%s) = %v; want %q", data, err, want)
		}
	}
}

// TestReadOutputSchema checks reading a schema file: a schema parses, a
// missing file is an *fs.PathError, a file over the limit and a bad
// schema are the parse's errors.
func TestReadOutputSchema(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s, err := ReadOutputSchema(write("ok.json", `{"type": "object", "properties": {"n": {"type": "number"}}}`))
	if err != nil || s == nil {
		t.Fatalf("a schema: %v", err)
	}
	var pe *fs.PathError
	if _, err := ReadOutputSchema(filepath.Join(dir, "missing.json")); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want an *fs.PathError", err)
	}
	big := write("big.json", `{"type": "object", "description": "`+strings.Repeat("x", 2*MaxOutputSchemaBytes)+`"}`)
	if _, err := ReadOutputSchema(big); err == nil || errors.As(err, &pe) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("a file over the limit: %v", err)
	}
	if _, err := ReadOutputSchema(write("bad.json", `{"type": "num"}`)); err == nil || errors.As(err, &pe) {
		t.Errorf("a bad schema: %v", err)
	}
}
