// Package taskref parses the references a board task's instruction makes
// to the results of the tasks it runs after: {{B.answer}} is task B's
// answer, {{B.result}} its whole structured result and
// {{B.result.price}} (or {{B.result.items.0}}) one value in it. The board
// checks them when a task is added; the agent loop replaces them with the
// quoted values when the task runs.
package taskref

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Ref is one reference in an instruction.
type Ref struct {
	// Text is the reference as written, braces included.
	Text string
	// Task is the id of the task referred to.
	Task string
	// Field is "answer" or "result".
	Field string
	// Path are the keys (or array indexes) into the structured result.
	Path []string
	// Start and End are Text's byte offsets in the instruction.
	Start, End int
}

var (
	braces = regexp.MustCompile(`\{\{(.*?)\}\}`)
	valid  = regexp.MustCompile(`^\s*([A-Za-z0-9_-]{1,64})\.(answer|result)((?:\.[A-Za-z0-9_-]{1,64}){0,8})\s*$`)
)

// Parse returns the references of an instruction in order. Anything
// between {{ and }} that is not a reference is an error that says what a
// reference looks like.
func Parse(instr string) ([]Ref, error) {
	var out []Ref
	for _, m := range braces.FindAllStringSubmatchIndex(instr, -1) {
		text, inner := instr[m[0]:m[1]], instr[m[2]:m[3]]
		p := valid.FindStringSubmatch(inner)
		if p == nil {
			return nil, fmt.Errorf("%q is not a reference to a task's result: write {{ID.answer}}, {{ID.result}} or {{ID.result.KEY}}", cut(text))
		}
		r := Ref{Text: text, Task: p[1], Field: p[2], Start: m[0], End: m[1]}
		if p[3] != "" {
			if r.Field == "answer" {
				return nil, fmt.Errorf("%q: an answer is text and has no keys; use {{%s.result.KEY}} for a structured result", cut(text), r.Task)
			}
			r.Path = strings.Split(p[3][1:], ".")
		}
		out = append(out, r)
	}
	return out, nil
}

// Expand replaces each reference of instr for which value reports a
// value; the others stay as written.
func Expand(instr string, refs []Ref, value func(Ref) (string, bool)) string {
	var b strings.Builder
	last := 0
	for _, r := range refs {
		v, ok := value(r)
		if !ok {
			continue
		}
		b.WriteString(instr[last:r.Start])
		b.WriteString(v)
		last = r.End
	}
	b.WriteString(instr[last:])
	return b.String()
}

// Lookup follows path into a structured result: a string value is
// returned as it is, any other value as JSON. It reports false when the
// path leads nowhere.
func Lookup(data json.RawMessage, path []string) (string, bool) {
	var v any
	if len(data) == 0 || json.Unmarshal(data, &v) != nil {
		return "", false
	}
	for _, k := range path {
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[k]
			if !ok {
				return "", false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(c) {
				return "", false
			}
			v = c[i]
		default:
			return "", false
		}
	}
	if s, ok := v.(string); ok {
		return s, true
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", false
	}
	return string(b), true
}

func cut(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
