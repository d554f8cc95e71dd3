package bench

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
)

// TestServeCorpus checks that the corpus is served on loopback, file by
// file.
func TestServeCorpus(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.html"), []byte("<title>A</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := ServeCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Errorf("URL %s is not on loopback", srv.URL)
	}
	resp, err := http.Get(srv.URL + "/a.html")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "<title>A</title>" {
		t.Errorf("GET /a.html: %d %q", resp.StatusCode, body)
	}
}

// TestBoardSeries runs the replay scenarios' tasks on embedded boards with
// one and two workers (a run that answers at once) and checks each result
// and the speedups.
func TestBoardSeries(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	scens, err := LoadScenarios(filepath.Join("..", "..", "..", "..", "testdata", "replay"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, c *board.Claim) (*board.Result, error) {
		return &board.Result{EndReason: "answered", Answer: "ok", Steps: 1}, nil
	}
	var seen []BoardResult
	results, err := BoardSeries(ctx, run, scens, []int{1, 2}, 4, nil, func(r BoardResult) { seen = append(seen, r) })
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || len(seen) != 2 || results[0].Workers != 1 || results[1].Workers != 2 {
		t.Fatalf("results %+v, seen %+v", results, seen)
	}
	for i, r := range results {
		if r.Done != 4 || r.Failed != 0 || r.TasksPerMin <= 0 || seen[i].Speedup != r.Speedup {
			t.Errorf("%d workers: %+v", r.Workers, r)
		}
	}
	if results[0].Speedup != 1 {
		t.Errorf("the first speedup is %v, want 1", results[0].Speedup)
	}
	if want := results[1].TasksPerMin / results[0].TasksPerMin; math.Abs(results[1].Speedup-want) > 1e-9 {
		t.Errorf("the second speedup is %v, want %v", results[1].Speedup, want)
	}
}
