package policy

import (
	"encoding/json"
	"reflect"
	"testing"
)

// An action rule written as JSON reads back as it was: the board keeps
// task policies as JSON.
func TestActionRuleJSONRoundTrip(t *testing.T) {
	in := []ActionRule{
		{Tools: []string{"type_text"}, Verdict: Ask, Reason: "typing"},
		{Rule: "no-buy", Tools: []string{"click"}, Name: "(?i)buy", Verdict: Deny},
		{Tools: []string{"*"}, Verdict: Allow},
	}
	data, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out []ActionRule
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatalf("reading %s back: %v", data, err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip of %s = %+v, want %+v", data, out, in)
	}
	var v Verdict
	if err := json.Unmarshal([]byte(`"maybe"`), &v); err == nil {
		t.Errorf("verdict \"maybe\" read as %s, want an error", v)
	}
}

func TestHostRuleJSONForms(t *testing.T) {
	var got struct{ Allow []HostRule }
	if err := json.Unmarshal([]byte(`{"Allow": ["https://*.example.com:8443/docs/*", {"host": "a.example", "ports": [80, 8080]}]}`), &got); err != nil {
		t.Fatal(err)
	}
	want := []HostRule{{Host: "*.example.com", Ports: []int{8443}, Paths: []string{"/docs/*"}, Schemes: []string{"https"}}, {Host: "a.example", Ports: []int{80, 8080}}}
	if !reflect.DeepEqual(got.Allow, want) {
		t.Errorf("got %+v, want %+v", got.Allow, want)
	}
	for _, bad := range []string{`["exa mple.com"]`, `[42]`, `[""]`} {
		var rs []HostRule
		if err := json.Unmarshal([]byte(bad), &rs); err == nil {
			t.Errorf("%s: no error, got %+v", bad, rs)
		}
	}
}
