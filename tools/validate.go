package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxDepth bounds the nesting of argument JSON. Surf's inputs are flat; the
// bound keeps hostile input from costing deep recursion.
const maxDepth = 32

// maxProblems bounds how many problems one error result lists.
const maxProblems = 8

// parseArgs turns the raw arguments of a call into a JSON object, tolerating
// the usual model quirks: empty or whitespace-only arguments and a literal
// null mean {}, and an object encoded as a JSON string (once or twice) is
// unwrapped. Duplicate keys, trailing data and non-object values are
// refused. Numbers are kept as json.Number so that no precision is lost
// before validation.
func parseArgs(raw []byte) (map[string]any, error) {
	for range 3 {
		trimmed := bytes.TrimSpace(raw)
		if len(trimmed) == 0 {
			return map[string]any{}, nil
		}
		v, err := decodeJSON(trimmed)
		if err != nil {
			return nil, fmt.Errorf("arguments are not valid JSON (%v): %s", err, preview(string(trimmed), 60))
		}
		switch v := v.(type) {
		case nil:
			return map[string]any{}, nil
		case map[string]any:
			return v, nil
		case string:
			s := strings.TrimSpace(v)
			if s != "" && s[0] != '{' && s[0] != '"' {
				return nil, fmt.Errorf("arguments must be a JSON object, got a string: %s", preview(v, 60))
			}
			raw = []byte(s)
		default:
			return nil, fmt.Errorf("arguments must be a JSON object, got %s", describe(v))
		}
	}
	return nil, errors.New("arguments must be a JSON object, got a string nested too deeply")
}

// decodeJSON decodes exactly one JSON value, refusing duplicate object keys
// (a model that repeats a key is ambiguous) and nesting beyond maxDepth.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, json.Number, bool or nil
	}
	if depth >= maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch d {
	case '{':
		m := map[string]any{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key is not a string at offset %d", dec.InputOffset())
			}
			if _, dup := m[k]; dup {
				return nil, fmt.Errorf("duplicate key %s", preview(k, 40))
			}
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			m[k] = v
		}
		if _, err := dec.Token(); err != nil { // '}'
			return nil, err
		}
		return m, nil
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		if _, err := dec.Token(); err != nil { // ']'
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("unexpected %v at offset %d", d, dec.InputOffset())
}

// checker validates a decoded argument object against a canonical schema
// (see checkSupported for the keywords it understands) and produces the
// normalized value the handler's input is decoded from: defaults filled in,
// optional nulls dropped, and lenient spellings converted (see Call).
type checker struct {
	problems []string
	more     int
}

func (c *checker) addf(path, format string, args ...any) {
	if len(c.problems) >= maxProblems {
		c.more++
		return
	}
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	c.problems = append(c.problems, msg)
}

func (c *checker) err() error {
	if len(c.problems) == 0 {
		return nil
	}
	msg := strings.Join(c.problems, "; ")
	if c.more > 0 {
		msg += fmt.Sprintf("; and %d more", c.more)
	}
	return errors.New(msg)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object checks an object's fields and returns the normalized object:
// unknown fields refused, nulls and absent optional fields dropped or
// replaced by their defaults.
func (c *checker) object(path string, s *jsonschema.Schema, m map[string]any) map[string]any {
	out := make(map[string]any, len(s.Properties))
	// Unknown keys first, in sorted order, so the message is stable.
	var unknown []string
	for k := range m {
		if _, ok := s.Properties[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		hint := ""
		if alt := similarProperty(s, k); alt != "" {
			hint = fmt.Sprintf(" (did you mean %s?)", alt)
		}
		c.addf(path, "unknown field %s%s", preview(k, 40), hint)
	}
	for _, name := range s.PropertyOrder {
		ps := s.Properties[name]
		v, present := m[name]
		if present && v == nil {
			present = false // null means absent
		}
		if !present {
			if isRequired(s, name) {
				c.addf("", "missing required field %s (%s)", join(path, name), shortType(ps))
				continue
			}
			if ps.Default != nil {
				var d any
				if err := json.Unmarshal(ps.Default, &d); err == nil {
					if nv, ok := c.value(join(path, name), ps, d); ok {
						out[name] = nv
					}
				}
			}
			continue
		}
		if nv, ok := c.value(join(path, name), ps, v); ok {
			out[name] = nv
		}
	}
	return out
}

// similarProperty suggests a declared property that k probably meant:
// same letters ignoring case, '_' and '-' (targetId for target_id).
func similarProperty(s *jsonschema.Schema, k string) string {
	norm := func(x string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(x))
	}
	nk := norm(k)
	for _, name := range s.PropertyOrder {
		if norm(name) == nk {
			return name
		}
	}
	return ""
}

// value checks one value against s and returns its normalized form:
// string, int64, float64, bool, []any or map[string]any.
func (c *checker) value(path string, s *jsonschema.Schema, v any) (any, bool) {
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			c.addf(path, "expected an object, got %s", describe(v))
			return nil, false
		}
		n := len(c.problems) + c.more
		out := c.object(path, s, m)
		return out, len(c.problems)+c.more == n
	case "array":
		a, ok := v.([]any)
		if !ok {
			if _, isObj := v.(map[string]any); isObj {
				c.addf(path, "expected an array, got %s", describe(v))
				return nil, false
			}
			a = []any{v} // a single value where a list is expected
		}
		if s.MinItems != nil && len(a) < *s.MinItems {
			c.addf(path, "expected at least %d items, got %d", *s.MinItems, len(a))
			return nil, false
		}
		if s.MaxItems != nil && len(a) > *s.MaxItems {
			c.addf(path, "expected at most %d items, got %d", *s.MaxItems, len(a))
			return nil, false
		}
		out := make([]any, 0, len(a))
		good := true
		for i, x := range a {
			ip := fmt.Sprintf("%s[%d]", path, i)
			if x == nil {
				c.addf(ip, "expected %s, got null", shortType(s.Items))
				good = false
				continue
			}
			nx, ok := c.value(ip, s.Items, x)
			good = good && ok
			out = append(out, nx)
		}
		return out, good
	case "string":
		str, ok := v.(string)
		if !ok {
			c.addf(path, "expected a string, got %s", describe(v))
			return nil, false
		}
		n := utf8.RuneCountInString(str)
		if s.MinLength != nil && n < *s.MinLength {
			if n == 0 {
				c.addf(path, "must not be empty")
			} else {
				c.addf(path, "expected at least %d characters, got %d", *s.MinLength, n)
			}
			return nil, false
		}
		if s.MaxLength != nil && n > *s.MaxLength {
			c.addf(path, "too long: %d characters, at most %d allowed", n, *s.MaxLength)
			return nil, false
		}
		if !c.enum(path, s, str) {
			return nil, false
		}
		return str, true
	case "integer", "number":
		f, ok := c.number(path, s, v)
		if !ok {
			return nil, false
		}
		if !c.bounds(path, s, f) {
			return nil, false
		}
		var out any = f
		if s.Type == "integer" {
			out = int64(f)
		}
		if !c.enum(path, s, f) {
			return nil, false
		}
		return out, true
	case "boolean":
		switch b := v.(type) {
		case bool:
			return b, true
		case string:
			switch strings.ToLower(strings.TrimSpace(b)) {
			case "true":
				return true, true
			case "false":
				return false, true
			}
		}
		c.addf(path, "expected a boolean (true or false), got %s", describe(v))
		return nil, false
	}
	// checkSupported refuses anything else at registration.
	c.addf(path, "cannot be checked (schema type %q)", typeName(s))
	return nil, false
}

// number reads a JSON number, or a string holding one (models often quote
// ids: "12"). Integers must be whole and within ±2^53.
func (c *checker) number(path string, s *jsonschema.Schema, v any) (float64, bool) {
	want := "a number"
	if s.Type == "integer" {
		want = "an integer"
	}
	var lit string
	switch x := v.(type) {
	case json.Number:
		lit = x.String()
	case float64: // defaults decoded without UseNumber
		lit = strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		lit = strings.TrimSpace(x)
		if !isNumberLiteral(lit) {
			c.addf(path, "expected %s, got %s", want, describe(v))
			return 0, false
		}
	default:
		c.addf(path, "expected %s, got %s", want, describe(v))
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		c.addf(path, "number %s is out of range", preview(lit, 40))
		return 0, false
	}
	if s.Type == "integer" {
		if f != math.Trunc(f) {
			c.addf(path, "expected an integer, got %s", preview(lit, 40))
			return 0, false
		}
		if math.Abs(f) > maxSafeInteger {
			c.addf(path, "integer %s is out of range", preview(lit, 40))
			return 0, false
		}
	}
	return f, true
}

// isNumberLiteral reports whether s is a JSON number literal, optionally
// with a leading '+'. Hex, "NaN", "Inf" and the like are refused.
func isNumberLiteral(s string) bool {
	s = strings.TrimPrefix(s, "+")
	if s == "" || len(s) > 64 {
		return false
	}
	return json.Valid([]byte(s)) && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9'))
}

func (c *checker) bounds(path string, s *jsonschema.Schema, f float64) bool {
	g := formatNumber(f)
	switch {
	case s.Minimum != nil && f < *s.Minimum:
		c.addf(path, "%s is below the minimum %s", g, formatNumber(*s.Minimum))
	case s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum:
		c.addf(path, "%s must be greater than %s", g, formatNumber(*s.ExclusiveMinimum))
	case s.Maximum != nil && f > *s.Maximum:
		c.addf(path, "%s is above the maximum %s", g, formatNumber(*s.Maximum))
	case s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum:
		c.addf(path, "%s must be less than %s", g, formatNumber(*s.ExclusiveMaximum))
	default:
		return true
	}
	return false
}

func (c *checker) enum(path string, s *jsonschema.Schema, v any) bool {
	if s.Enum == nil {
		return true
	}
	for _, e := range s.Enum {
		switch e := e.(type) {
		case string:
			if v == e {
				return true
			}
		case float64:
			if f, ok := v.(float64); ok && f == e {
				return true
			}
		case int:
			if f, ok := v.(float64); ok && f == float64(e) {
				return true
			}
		case int64:
			if f, ok := v.(float64); ok && f == float64(e) {
				return true
			}
		}
	}
	c.addf(path, "%s is not one of %s", describe(v), shortType(s))
	return false
}

func formatNumber(f float64) string {
	if a := math.Abs(f); a < 1e21 && (a >= 1e-6 || a == 0) {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// describe names a decoded JSON value for an error message, quoting at
// most a short prefix of strings.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + preview(x, 40)
	case json.Number:
		return "number " + preview(x.String(), 40)
	case float64:
		return "number " + formatNumber(x)
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case []any:
		return fmt.Sprintf("an array of %d items", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// preview quotes s, cut to at most n runes, so that hostile or huge input
// never floods a message.
func preview(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return strconv.Quote(s)
	}
	i, count := 0, 0
	for i = range s {
		if count == n {
			break
		}
		count++
	}
	return strconv.Quote(s[:i]) + fmt.Sprintf("... (%d bytes)", len(s))
}
