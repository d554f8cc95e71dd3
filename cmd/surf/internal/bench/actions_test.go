package bench

import (
	"errors"
	"strings"
	"testing"
)

func TestSnapshotRef(t *testing.T) {
	snap := "```yaml\n- generic [ref=e1]:\n  - navigation [ref=e4]:\n    - link \"Next page\" [ref=e5] [cursor=pointer]:\n      - /url: /next\n    - link \"Next page two\" [ref=e6]\n  - button \"Go\" [ref=f1e7]\n  - button \"Twice\" [ref=e8]\n  - button \"Twice\" [ref=e9]\n```"
	for _, c := range []struct{ role, name, want, err string }{
		{"link", "Next page", "e5", ""},
		{"link", "Next page two", "e6", ""},
		{"button", "Go", "f1e7", ""},
		{"button", "Twice", "", `2 elements button "Twice"`},
		{"button", "Next page", "", `no button "Next page"`},
	} {
		got, err := snapshotRef(snap, c.role, c.name)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("snapshotRef(%s %q) = %q, %v; want %q, %q", c.role, c.name, got, err, c.want, c.err)
		}
	}
}

func TestObservationID(t *testing.T) {
	obs := "observation 1: url \"http://127.0.0.1/\" title \"Bench start\"\nelements on screen (id role \"name\" state):\n1 link \"Next page\"\n3 button \"Show details\"\n12 combobox \"Colour\" value=\"Red\" collapsed\nbelow the viewport (1): 13 link \"Next page\"\nvisible text <<<x\n4 button \"Show details\"\nx>>>\n"
	for _, c := range []struct {
		role, name string
		want       int
		err        string
	}{
		{"link", "Next page", 1, ""},
		{"combobox", "Colour", 12, ""},
		{"textbox", "Search", 0, `no textbox "Search"`},
	} {
		got, err := observationID(obs, c.role, c.name)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("observationID(%s %q) = %d, %v; want %d, %q", c.role, c.name, got, err, c.want, c.err)
		}
	}
	// The page's own text cannot pass for an element line.
	if id, err := observationID(obs, "button", "Show details"); id != 3 || err != nil {
		t.Errorf("a line of the visible text read as an element: %d, %v", id, err)
	}
	dup := strings.Replace(obs, "3 button", "2 link \"Next page\"\n3 button", 1)
	if _, err := observationID(dup, "link", "Next page"); err == nil || !strings.Contains(err.Error(), `2 elements link "Next page"`) {
		t.Errorf("two elements of the same role and name: %v", err)
	}
}

// A failed sample is counted and reported, never timed.
func TestActionSeries(t *testing.T) {
	var s Series
	s.add(sampleResult{ms: 100, tokens: 50, imageBytes: 1000, serverMS: 90})
	s.add(sampleResult{ms: 5, err: errors.New("click: error result: no element 99 on this page")})
	s.add(sampleResult{ms: 300, tokens: 70, imageBytes: 3000, serverMS: 280, snapshot: true})
	s.finish()
	if s.OK != 2 || s.Failed != 1 || s.MSP50 != 100 || s.MSP90 != 300 || s.TokensP50 != 50 || s.ImageBytesP50 != 1000 || s.ServerMSP50 != 90 || s.SnapshotCalls != 1 {
		t.Errorf("%+v", s)
	}
	if len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "no element 99") {
		t.Errorf("errors %q", s.Errors)
	}
}
