package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
)

// surf bench board runs every replay scenario on a fresh board, one at a
// time and two at once, and every run replays its recording exactly: a
// run that departs from its cassette fails the task and the benchmark.
func TestBenchBoard(t *testing.T) {
	cmd := surfCmd("bench", "board", "--workers", "1,2", "--tasks", "5", "--model-delay", "0", "--scenarios", "../../testdata/replay", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("surf bench board: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var got []bench.BoardResult
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		var r bench.BoardResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != 2 || got[0].Workers != 1 || got[1].Workers != 2 {
		t.Fatalf("results: %+v", got)
	}
	for _, r := range got {
		if r.Done != 5 || r.Failed != 0 || r.TasksPerMin <= 0 || r.OverheadP50MS <= 0 || r.OverheadMaxMS < r.OverheadP50MS {
			t.Errorf("%d workers: %+v", r.Workers, r)
		}
	}
}

func TestBenchBoardUsage(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--workers 0", "--workers"},
		{"--workers 1,x", "--workers"},
		{"--tasks 0", "--tasks must be 1 to 1000"},
		{"--max-active -1", "--max-active must be 1 to 64"},
		{"--model-delay 2h", "--model-delay must be 0 to 1m"},
		{"--scenarios /nonexistent", "no replay scenarios under /nonexistent"},
	} {
		cmd := surfCmd(append([]string{"bench", "board"}, strings.Fields(c.args)...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("bench board %s: %v\n%s", c.args, err, out)
		}
	}
}
