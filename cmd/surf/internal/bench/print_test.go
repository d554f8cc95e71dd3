package bench

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseCounts(t *testing.T) {
	got, err := ParseCounts("1, 4,8", "count", 8)
	if err != nil || !slices.Equal(got, []int{1, 4, 8}) {
		t.Errorf("1, 4,8: %v %v", got, err)
	}
	for _, bad := range []string{"", "0", "9", "1,,2", "x", "-1"} {
		if _, err := ParseCounts(bad, "session count", 8); err == nil || !strings.Contains(err.Error(), "is not a session count from 1 to 8") {
			t.Errorf("%q: got %v, want an error naming the count", bad, err)
		}
	}
}

func TestWriteTables(t *testing.T) {
	var b bytes.Buffer
	WriteBoard(&b, []BoardResult{{Workers: 2, Done: 3, Failed: 1, Errors: []string{"boom"}, WallMS: 1500}}, 4, 2, time.Second, 3)
	for _, want := range []string{"4 tasks from 2 scenarios, model delay 1s per call, at most 3", "workers", "   1.5s", "failed: boom"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("board table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	WriteSessions(&b, &SessionsResult{Sessions: 4, Calls: 10, OK: 9, Failed: 1, FailedFirst: 1, Errors: []string{"refused"}})
	if lines := strings.Split(strings.TrimSpace(b.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[2], "error: refused") {
		t.Errorf("sessions row:\n%s", b.String())
	}
	b.Reset()
	WriteActions(&b, ActionsResult{Rounds: 2, Kinds: []KindMeasure{{Kind: "click_link", RatioP50: 0.5}}})
	if !strings.Contains(b.String(), "click_link") || !strings.Contains(b.String(), "0.50") {
		t.Errorf("actions table:\n%s", b.String())
	}
}
