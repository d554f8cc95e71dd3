package policy

import (
	"strings"
	"testing"
)

// TestActionRulesJudgeFrames checks that a rule with hosts applies to an
// element inside a frame from its host, whatever page frames it, and that
// the strictest verdict of the top page and the frames wins.
func TestActionRulesJudgeFrames(t *testing.T) {
	p := MustNew(Config{
		Allow: mustRules(t, "a.example", "b.example", "c.example"),
		Actions: []ActionRule{
			{Rule: "no-clicks-on-b", Tools: []string{"click"}, Hosts: mustRules(t, "b.example"), Verdict: Deny},
			{Rule: "ask-on-a", Tools: []string{"click"}, Hosts: mustRules(t, "a.example"), Verdict: Ask},
			{Rule: "payments-on-c", Tools: []string{"click"}, Hosts: mustRules(t, "c.example/pay/*"), Verdict: Deny},
		},
	})
	btn := &Element{Role: "button", Name: "Go"}
	for _, c := range []struct {
		name    string
		a       Action
		verdict Verdict
		rule    string
		host    string
		inFrame bool // the rule matched a frame, not the top page
	}{
		{"top page only", Action{Tool: "click", URL: "https://c.example/", Target: btn}, Allow, "", "c.example", false},
		{"b framed by c", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"https://b.example/form"}, Target: btn}, Deny, "no-clicks-on-b", "b.example", true},
		{"b around an inner c frame", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"https://c.example/x", "https://b.example/outer"}, Target: btn}, Deny, "no-clicks-on-b", "b.example", true},
		{"srcdoc frame of b, given by its origin", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"https://b.example"}, Target: btn}, Deny, "no-clicks-on-b", "b.example", true},
		{"path rule on the frame", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"https://c.example/pay/card"}, Target: btn}, Deny, "payments-on-c", "c.example", true},
		// The stricter verdict wins: Ask on the top page, Deny on the frame.
		{"ask on top, deny in frame", Action{Tool: "click", URL: "https://a.example/", Frames: []string{"https://b.example/"}, Target: btn}, Deny, "no-clicks-on-b", "b.example", true},
		{"ask on top, nothing in frame", Action{Tool: "click", URL: "https://a.example/", Frames: []string{"https://c.example/"}, Target: btn}, Ask, "ask-on-a", "a.example", false},
		{"ask in frame only", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"https://a.example/"}, Target: btn}, Ask, "ask-on-a", "a.example", true},
		{"unreadable frame fails closed", Action{Tool: "click", URL: "https://c.example/", Frames: []string{"http://[bad"}, Target: btn}, Deny, "no-clicks-on-b", "", false},
		{"other tools are not concerned", Action{Tool: "hover", URL: "https://c.example/", Frames: []string{"https://b.example/"}, Target: btn}, Allow, "", "c.example", false},
	} {
		d := p.DecideAction(c.a)
		if d.Verdict != c.verdict || d.Rule != c.rule {
			t.Errorf("%s: DecideAction = %s rule %q (%s), want %s rule %q", c.name, d.Verdict, d.Rule, d.Reason, c.verdict, c.rule)
			continue
		}
		if d.Host != c.host {
			t.Errorf("%s: Host = %q, want %q", c.name, d.Host, c.host)
		}
		if c.inFrame != strings.Contains(d.Reason, "in a frame from \""+c.host) {
			t.Errorf("%s: the reason does not say the frame: %s", c.name, d.Reason)
		}
	}
	d := p.DecideAction(Action{Tool: "click", URL: "https://c.example/", Frames: []string{"http://[bad"}, Target: btn})
	if !strings.Contains(d.Reason, "in a frame whose address surf cannot read") {
		t.Errorf("an unreadable frame's denial says %q", d.Reason)
	}
}

func TestHasPlaceholder(t *testing.T) {
	for text, want := range map[string]bool{
		"<secret:PASSWORD>":       true,
		"user <secret:A_1> rest":  true,
		"<secret:>":               false,
		"<secret:1x>":             false,
		"hunter2":                 false,
		"":                        false,
		"<SECRET:PASSWORD>":       false,
		"a <secret:PASSWORD b>":   false,
		"<secret:PASSWORD><x>":    true,
		"&lt;secret:PASSWORD&gt;": false,
		"<secret:PASSWORD\u200b>": false,
	} {
		if got := HasPlaceholder(text); got != want {
			t.Errorf("HasPlaceholder(%q) = %v, want %v", text, got, want)
		}
	}
}
