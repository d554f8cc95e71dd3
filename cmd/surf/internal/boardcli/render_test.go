package boardcli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
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
