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
