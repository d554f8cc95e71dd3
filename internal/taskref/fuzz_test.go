package taskref

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse: any instruction either parses into references that sit where
// they say, in order, and expand away, or is refused with a message that
// is valid text; Lookup never panics on any result and path.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Plan from {{B.answer}} and {{ C.result.price }}, all: {{C.result}}",
		"{{B.result.items.0}}", "{{B}}", "{{}}", "{{{{A.answer}}}}", "{{A.answer}",
		"{{" + strings.Repeat("é", 60) + "}}", "no references at all",
	} {
		f.Add(s, `{"items":["x",{"n":2}],"price":12}`)
	}
	f.Fuzz(func(t *testing.T, instr, data string) {
		refs, err := Parse(instr)
		if err != nil {
			if utf8.ValidString(instr) && !utf8.ValidString(err.Error()) {
				t.Fatalf("Parse(%q): the error is not valid UTF-8: %q", instr, err)
			}
			return
		}
		last := 0
		for _, r := range refs {
			if r.Start < last || r.End <= r.Start || r.End > len(instr) || instr[r.Start:r.End] != r.Text {
				t.Fatalf("Parse(%q): %+v does not sit where it says", instr, r)
			}
			if r.Field != "answer" && r.Field != "result" {
				t.Fatalf("Parse(%q): field %q", instr, r.Field)
			}
			last = r.End
			_, _ = Lookup(json.RawMessage(data), r.Path)
		}
		out := Expand(instr, refs, func(Ref) (string, bool) { return "", true })
		if want := len(instr) - sumLen(refs); len(out) != want {
			t.Fatalf("Expand(%q) with empty values is %d bytes, want %d", instr, len(out), want)
		}
	})
}

func sumLen(refs []Ref) int {
	n := 0
	for _, r := range refs {
		n += len(r.Text)
	}
	return n
}
