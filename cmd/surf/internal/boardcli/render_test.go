package boardcli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/policy"
)

// The list's last column is cut so that every line fits the width, and an
// answer over several lines is shown on one.
func TestBoardListFits(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	recs := []board.Record{
		{Task: board.Task{ID: "long"}, State: board.Done, Worker: "host-1/2", Attempts: 1, Created: now.Add(-90 * time.Minute),
			Result: &board.Result{Answer: strings.Repeat("a very long answer ", 20) + "\nsecond line"}},
		{Task: board.Task{ID: "f"}, State: board.Failed, Reason: "dependency long failed: it broke", Created: now.Add(-3 * 24 * time.Hour)},
		{Task: board.Task{ID: "p"}, State: board.Pending, Created: now.Add(-5 * time.Second)},
	}
	var buf bytes.Buffer
	Table(&buf, recs, now, 70)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines, want 4:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		if n := len([]rune(l)); n > 70 {
			t.Errorf("line of %d runes, wider than 70: %q", n, l)
		}
	}
	for i, want := range []string{
		"ID    STATE    WORKER    ATTEMPTS  AGE  ANSWER",
		"long  done     host-1/2  1         1h   a very long answer a very",
		"f     failed   -         0         3d   dependency long failed: it",
		"p     pending  -         0         5s",
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d = %q, want it to start with %q", i, lines[i], want)
		}
	}
	if !strings.HasSuffix(lines[1], "…") {
		t.Errorf("a cut answer ends with an ellipsis: %q", lines[1])
	}
}

// Show prints every field a record has, and nothing for the ones it has
// not; text from the board is made safe for a terminal.
func TestShow(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	deny, err := policy.ParseHostRule("ads.example.com")
	if err != nil {
		t.Fatal(err)
	}
	r := board.Record{
		Task: board.Task{ID: "plan", Instruction: "plan a day\nat the harbour", After: []string{"hotels", "sights"}, RunAfterFailure: true,
			Policy: &board.Policy{Deny: []policy.HostRule{deny}}, MaxSteps: 7, Labels: map[string]string{"z": "1", "batch": "trip"}},
		State: board.Done, Worker: "host/1", Attempts: 2, Created: now.Add(-3 * time.Hour), Finished: now.Add(-90 * time.Second),
		Notes:  []string{"attempt 1 lost", "attempt 2 ran"},
		Result: &board.Result{Answer: "go at 9\x1b[31m", EndReason: "answered", Steps: 4, Tokens: 12345, Journal: "plan/attempt-2/journal.jsonl", Images: []string{"a.png", "b.png"}},
	}
	var buf bytes.Buffer
	Show(&buf, r, now)
	want := `id           plan
instruction  plan a day at the harbour
after        hotels, sights (runs even when they fail)
policy       deny ads.example.com
limits       7 steps
labels       batch=trip, z=1
state        done
worker       host/1
attempts     2
created      2026-03-14T09:00:00Z (3h ago)
finished     2026-03-14T11:58:30Z (1m ago)
notes        attempt 1 lost
             attempt 2 ran
answer       go at 9\x1b[31m
end reason   answered
steps        4
tokens       12,345
journal      plan/attempt-2/journal.jsonl
images       a.png
             b.png
`
	if got := buf.String(); got != want {
		t.Errorf("Show:\n%s\nwant:\n%s", got, want)
	}
}

func TestChangeLineAndWatchTable(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	running := board.Record{Task: board.Task{ID: "b"}, State: board.Running, Worker: "w/1", Attempts: 1, Started: now.Add(-75 * time.Second), Progress: "step 2:\nclick"}
	for _, tc := range []struct {
		r    board.Record
		want string
	}{
		{running, "12:00:00 b running w/1 attempt 1: step 2: click"},
		{board.Record{Task: board.Task{ID: "a"}, State: board.Ready, Worker: "w/1"}, "12:00:00 a ready"},
		{board.Record{Task: board.Task{ID: "a"}, State: board.Failed, Worker: "w/1", Reason: "it broke"}, "12:00:00 a failed: it broke"},
		{board.Record{Task: board.Task{ID: "a"}, State: board.Done, Result: &board.Result{Answer: "9 to 5"}}, "12:00:00 a done: 9 to 5"},
	} {
		if got := ChangeLine(tc.r, now); got != tc.want {
			t.Errorf("ChangeLine = %q, want %q", got, tc.want)
		}
	}
	var buf bytes.Buffer
	WatchTable(&buf, map[string]board.Record{"a": {State: board.Done}, "b": running}, now, 80)
	want := "2 tasks  pending 0  ready 0  running 1  done 1  failed 0  cancelled 0\n" +
		"WORKER  ID  ATTEMPT  FOR  PROGRESS\n" +
		"w/1     b   1        1m   step 2: click\n"
	if buf.String() != want {
		t.Errorf("WatchTable:\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	WatchTable(&buf, map[string]board.Record{}, now, 80)
	if want := "0 tasks  pending 0  ready 0  running 0  done 0  failed 0  cancelled 0\nnothing running\n"; buf.String() != want {
		t.Errorf("WatchTable of an empty board: %q, want %q", buf.String(), want)
	}
}
