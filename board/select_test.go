package board_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/policy"
)

// A program reads a batch of tasks written as JSONL, as surf board add
// --from does; each task keeps the line it came from.
func ExampleReadTasks() {
	batch := `# the harbour trip
{"id": "hotels", "instruction": "find three hotels near the harbour", "labels": {"batch": "trip"}}

{"id": "plan", "instruction": "plan a day", "after": ["hotels"]}
`
	tasks, lines, err := board.ReadTasks(strings.NewReader(batch), "trip.jsonl")
	if err != nil {
		log.Fatal(err)
	}
	for i, t := range tasks {
		fmt.Printf("line %d: %s after %v\n", lines[i], t.ID, t.After)
	}
	_, _, err = board.ReadTasks(strings.NewReader(`{"id": "x", "instructions": "typo"}`), "bad.jsonl")
	fmt.Println(err)
	// Output:
	// line 2: hotels after []
	// line 4: plan after [hotels]
	// bad.jsonl line 1: unknown field "instructions"
}

// A program picks the failed and cancelled tasks of one batch, as surf
// board list --state failed,cancelled --label batch=trip does.
func ExampleFilter() {
	recs := []board.Record{
		{Task: board.Task{ID: "hotels", Labels: map[string]string{"batch": "trip"}}, State: board.Done},
		{Task: board.Task{ID: "sights", Labels: map[string]string{"batch": "trip"}}, State: board.Failed, Reason: "the page is gone"},
		{Task: board.Task{ID: "prices"}, State: board.Cancelled},
	}
	states, err := board.ParseStates("failed,cancelled")
	if err != nil {
		log.Fatal(err)
	}
	labels, err := board.ParseLabels("batch=trip")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range (board.Filter{States: states, Labels: labels}).Select(recs) {
		fmt.Printf("%s: %s\n", r.Task.ID, r.Outcome())
	}
	// Output:
	// sights: the page is gone
}

func TestParseStates(t *testing.T) {
	got, err := board.ParseStates("Failed, cancelled", "failed", " done ")
	if err != nil {
		t.Fatal(err)
	}
	if want := []board.State{board.Failed, board.Cancelled, board.Done}; !slices.Equal(got, want) {
		t.Errorf("ParseStates = %v, want %v", got, want)
	}
	if got, err := board.ParseStates(); err != nil || got != nil {
		t.Errorf("ParseStates() = %v, %v; want nil, nil", got, err)
	}
	for _, bad := range []string{"finished", "done,", ""} {
		if _, err := board.ParseStates(bad); err == nil || !strings.Contains(err.Error(), "the states are pending, ready, running, done, failed and cancelled") {
			t.Errorf("ParseStates(%q) = %v, want an error listing the states", bad, err)
		}
	}
}

func TestParseLabels(t *testing.T) {
	got, err := board.ParseLabels(" batch =prices", "note=a=b", "empty=")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"batch": "prices", "note": "a=b", "empty": ""}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("ParseLabels = %v, want %v", got, want)
	}
	for _, bad := range []string{"novalue", "=v", " =v"} {
		if _, err := board.ParseLabels(bad); err == nil || !strings.Contains(err.Error(), "write it as KEY=VALUE") {
			t.Errorf("ParseLabels(%q) = %v, want an error", bad, err)
		}
	}
}

func TestFilter(t *testing.T) {
	recs := []board.Record{
		{Task: board.Task{ID: "a", Labels: map[string]string{"k": "v", "x": "1"}}, State: board.Done},
		{Task: board.Task{ID: "b", Labels: map[string]string{"k": "w"}}, State: board.Done},
		{Task: board.Task{ID: "c"}, State: board.Pending},
	}
	ids := func(rs []board.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Task.ID)
		}
		return out
	}
	for _, tc := range []struct {
		f    board.Filter
		want []string
	}{
		{board.Filter{}, []string{"a", "b", "c"}},
		{board.Filter{States: []board.State{board.Done}}, []string{"a", "b"}},
		{board.Filter{Labels: map[string]string{"k": "v"}}, []string{"a"}},
		{board.Filter{Labels: map[string]string{"k": "v", "x": "2"}}, nil},
		{board.Filter{Labels: map[string]string{"k": ""}}, nil},
		{board.Filter{States: []board.State{board.Pending, board.Done}, Labels: map[string]string{"k": "w"}}, []string{"b"}},
	} {
		got := tc.f.Select(recs)
		if got == nil {
			t.Errorf("%+v: Select returned nil, want an empty slice", tc.f)
		}
		if !slices.Equal(ids(got), tc.want) {
			t.Errorf("%+v: selected %v, want %v", tc.f, ids(got), tc.want)
		}
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		r    board.Record
		want string
	}{
		{board.Record{State: board.Done, Result: &board.Result{Answer: "9 to 5"}}, "9 to 5"},
		{board.Record{State: board.Failed, Reason: "it broke", Result: &board.Result{Answer: "half"}}, "it broke"},
		{board.Record{State: board.Cancelled}, "cancelled"},
		{board.Record{State: board.Running}, ""},
	} {
		if got := tc.r.Outcome(); got != tc.want {
			t.Errorf("Outcome of %+v = %q, want %q", tc.r, got, tc.want)
		}
	}
}

func TestReadTasksBadLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"not json", "\n# c\n{\"instruction\": \"x\"}\nnot json\n", 4, "invalid character"},
		{"two values", `{"instruction": "x"} {"instruction": "y"}`, 1, "more than one JSON value on the line"},
		{"no instruction", `{"id": "x", "instruction": "  "}`, 1, "the task has no instruction"},
		{"unknown field", `{"instruction": "x", "colour": "red"}`, 1, `unknown field "colour"`},
		{"too long", "{\"instruction\": \"x\"}\n" + `{"instruction": "` + strings.Repeat("a", board.MaxTaskLine) + `"}`, 2, "the line is longer than 1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks, _, err := board.ReadTasks(strings.NewReader(tc.in), "in")
			var le *board.LineError
			if !errors.As(err, &le) || le.Line != tc.line || le.Name != "in" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ReadTasks = %v, %v; want a LineError at line %d with %q", tasks, err, tc.line, tc.want)
			}
			if tasks != nil {
				t.Errorf("a bad batch returned tasks: %v", tasks)
			}
		})
	}
	// secrets in a task's policy: refused, naming the line
	_, _, err := board.ReadTasks(strings.NewReader(`{"instruction": "x", "policy": {"secrets": [{"name": "pw", "value": "hunter2"}]}}`), "in")
	if !errors.Is(err, board.ErrPolicySecrets) || !strings.HasPrefix(err.Error(), "in line 1: ") {
		t.Errorf("a task with secrets: %v, want ErrPolicySecrets at line 1", err)
	}
	// a batch with nothing in it is no error: Add refuses it
	if tasks, lines, err := board.ReadTasks(strings.NewReader("# nothing\n\n"), "in"); err != nil || len(tasks) != 0 || len(lines) != 0 {
		t.Errorf("an empty batch: %v, %v, %v", tasks, lines, err)
	}
}

func TestTaskPolicy(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	host := func(s string) policy.HostRule {
		r, err := policy.ParseHostRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if p, err := board.TaskPolicy("", nil, nil); p != nil || err != nil {
		t.Errorf("no narrowing: %+v, %v; want nil, nil", p, err)
	}
	p, err := board.TaskPolicy("", []policy.HostRule{host("example.com")}, []policy.HostRule{host("ads.example.com")})
	if err != nil || len(p.Allow) != 1 || len(p.Deny) != 1 {
		t.Errorf("allow and deny: %+v, %v", p, err)
	}
	file := write("p.yaml", "allow:\n  - host: example.com\ndeny:\n  - host: evil.example\n")
	p, err = board.TaskPolicy(file, nil, []policy.HostRule{host("ads.example.com")})
	if err != nil || len(p.Allow) != 1 || len(p.Deny) != 2 {
		t.Errorf("a file with deny added: %+v, %v", p, err)
	}
	if p, err := board.TaskPolicy(write("empty.yaml", "allow: []\n"), nil, nil); p != nil || err != nil {
		t.Errorf("a file with no rules: %+v, %v; want nil, nil", p, err)
	}
	_, err = board.TaskPolicy(write("s.yaml", "allow:\n  - host: example.com\nsecrets:\n  - name: pw\n    value: env:PW\n"), nil, nil)
	if !errors.Is(err, board.ErrPolicySecrets) || !strings.Contains(err.Error(), "s.yaml:3: ") {
		t.Errorf("a file with secrets: %v, want ErrPolicySecrets naming line 3", err)
	}
	var pe *os.PathError
	if _, err := board.TaskPolicy(filepath.Join(dir, "missing.yaml"), nil, nil); !errors.As(err, &pe) {
		t.Errorf("a missing file: %v, want a *fs.PathError", err)
	}
	if _, err := board.TaskPolicy(write("bad.yaml", "allow: [[\n"), nil, nil); err == nil || errors.Is(err, board.ErrPolicySecrets) {
		t.Errorf("a file that does not parse: %v, want policy.Load's error", err)
	}
}
