package taskref

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	refs, err := Parse("Plan from {{B.answer}} and {{ C.result.price }}, all: {{C.result}}")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 3 || refs[0].Task != "B" || refs[0].Field != "answer" || refs[1].Task != "C" || strings.Join(refs[1].Path, ".") != "price" || refs[2].Path != nil {
		t.Fatalf("refs: %+v", refs)
	}
	for _, bad := range []string{"{{B}}", "{{B.answr}}", "{{B.answer.x}}", "{{}}", "{{B C.answer}}", "{{B.result..x}}"} {
		if _, err := Parse("x " + bad); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

func TestExpandAndLookup(t *testing.T) {
	in := "a {{B.answer}} b {{C.result.items.1}} c {{D.answer}}"
	refs, _ := Parse(in)
	data := []byte(`{"items":["x",{"n":2}],"s":"str"}`)
	got := Expand(in, refs, func(r Ref) (string, bool) {
		switch r.Task {
		case "B":
			return "[B]", true
		case "C":
			return Lookup(data, r.Path)
		}
		return "", false
	})
	if got != `a [B] b {"n":2} c {{D.answer}}` {
		t.Errorf("Expand = %q", got)
	}
	if v, ok := Lookup(data, []string{"s"}); !ok || v != "str" {
		t.Errorf("Lookup s = %q %v", v, ok)
	}
	for _, p := range [][]string{{"nope"}, {"items", "9"}, {"s", "x"}} {
		if _, ok := Lookup(data, p); ok {
			t.Errorf("Lookup %v found something", p)
		}
	}
}
