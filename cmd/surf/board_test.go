package main

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/journal"
)

// runBoardCLI runs one surf command line in this process against the board
// in dir and returns its exit code, stdout and stderr.
func runBoardCLI(t *testing.T, ctx context.Context, dir string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cli := &CLI{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	code := cli.Run(ctx, append(args, "--data", dir))
	return code, stdout.String(), stderr.String()
}

// pngOf is a small real PNG.
func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// storeRun writes a two-step journal with one set-of-mark image, as a run
// does, and stores it on the board through the claim, as a worker does.
func storeRun(ctx context.Context, t *testing.T, c *board.Claim, answer string) (*board.Result, error) {
	dir := t.TempDir()
	w, err := journal.Open(filepath.Join(dir, "journal.jsonl"), nil)
	if err != nil {
		return nil, err
	}
	img, err := w.SaveImage(1, 1, pngOf(t, 160, 120), "image/png")
	if err != nil {
		return nil, err
	}
	w.Write(journal.Entry{Event: journal.KindRunStarted, Task: c.Task.Instruction, Config: json.RawMessage(`{"model":"fake","max_steps":5}`)})
	w.Write(journal.Entry{Event: journal.KindObserved, Step: 1, URL: "http://127.0.0.1:8080/hours", Title: "Opening hours", Elements: 3, Tokens: 90, Image: img, Seq: 1})
	w.Write(journal.Entry{Event: journal.KindReasoned, Step: 1, Calls: []journal.Call{{Tool: "answer", Args: json.RawMessage(`{"text":"` + answer + `"}`)}}, Usage: &journal.Usage{Prompt: 400, Completion: 12, Total: 412}})
	w.Write(journal.Entry{Event: journal.KindGated, Step: 1, Tool: "answer", Verdict: "allow"})
	w.Write(journal.Entry{Event: journal.KindEnded, Step: 1, Steps: 1, EndReason: journal.EndAnswered, Answer: answer})
	if err := w.Close(); err != nil {
		return nil, err
	}
	res := &board.Result{Answer: answer, EndReason: "answered", Steps: 1, Tokens: 412, Duration: board.Duration(1500 * time.Millisecond)}
	put := func(path, name string) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return c.PutFile(ctx, name, f)
	}
	if res.Journal, err = put(w.Path(), "journal.jsonl"); err != nil {
		return nil, err
	}
	stored, err := put(filepath.Join(dir, filepath.FromSlash(img)), filepath.Base(img))
	if err != nil {
		return nil, err
	}
	res.Images = []string{stored}
	return res, nil
}

// TestBoardReportOfFinishedTask runs a task on a board with board.Work and
// a RunFunc that stores a real journal and image, then reads it back with
// surf board show, list, wait and report.
func TestBoardReportOfFinishedTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "board")
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx,
		board.Task{ID: "hours", Instruction: "Find the <b>opening hours</b>", StartURL: "http://127.0.0.1:8080/"},
		board.Task{ID: "later", Instruction: "Runs after hours", After: []string{"hours"}},
	); err != nil {
		t.Fatal(err)
	}
	// Only "hours" runs: "later" is cancelled first, so that the worker
	// stops once the board has nothing left.
	if _, err := b.Cancel(ctx, "later", "not needed"); err != nil {
		t.Fatal(err)
	}
	wctx, stopWork := context.WithCancel(ctx)
	workDone := make(chan error, 1)
	go func() {
		workDone <- b.Work(wctx, board.WorkConfig{Name: "tw", Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
			c.Progress(ctx, "step 1: reading the hours")
			return storeRun(ctx, t, c, "9 to 5")
		}})
	}()
	recs, err := b.Wait(ctx, "hours")
	stopWork()
	if werr := <-workDone; werr != nil && wctx.Err() == nil {
		t.Fatalf("Work: %v", werr)
	}
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].State != board.Done {
		t.Fatalf("task hours is %s (%s), want done", recs[0].State, recs[0].Reason)
	}
	b.Close()

	// show: the result and the stored files.
	code, out, errOut := runBoardCLI(t, ctx, dir, "board", "show", "hours")
	if code != 0 {
		t.Fatalf("board show: exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"state        done", "worker       tw/1", "attempts     1", "answer       9 to 5",
		"end reason   answered", "steps        1", "tokens       412", "duration     1.5s",
		"journal      hours/attempt-1/journal.jsonl", "images       hours/attempt-1/step-001-obs-001.png",
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("board show lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runBoardCLI(t, ctx, dir, "board", "show", "hours", "--json")
	var rec board.Record
	if code != 0 || json.Unmarshal([]byte(out), &rec) != nil || rec.Result == nil || rec.Result.Answer != "9 to 5" || rec.Task.ID != "hours" {
		t.Errorf("board show --json: exit %d, record %+v:\n%s", code, rec, out)
	}

	// list and wait: the answer, the reason.
	code, out, _ = runBoardCLI(t, ctx, dir, "board", "list")
	if code != 0 || !strings.Contains(out, "hours  done       tw/1    1") || !strings.Contains(out, "9 to 5") || !strings.Contains(out, "not needed") {
		t.Errorf("board list: exit %d:\n%s", code, out)
	}
	code, out, errOut = runBoardCLI(t, ctx, dir, "board", "wait", "hours")
	if code != 0 || out != "hours\tdone\t9 to 5\n" || errOut != "" {
		t.Errorf("board wait hours: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, _, errOut = runBoardCLI(t, ctx, dir, "board", "wait", "hours", "later")
	if code != 1 || !strings.Contains(errOut, "1 of 2 tasks did not end done: later (cancelled)") {
		t.Errorf("board wait hours later: exit %d, stderr %q", code, errOut)
	}

	// report: the page holds the task, the step, the inlined image and
	// the answer.
	page := filepath.Join(t.TempDir(), "hours.html")
	code, out, errOut = runBoardCLI(t, ctx, dir, "board", "report", "hours", "-o", page)
	if code != 0 {
		t.Fatalf("board report: exit %d: %s", code, errOut)
	}
	if want := "wrote " + page + ": 1 step, 1 image, "; !strings.HasPrefix(out, want) {
		t.Errorf("board report printed %q, want it to start with %q", out, want)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`id="step-1"`, "data:image/png;base64,", "9 to 5", "Find the &lt;b&gt;opening hours&lt;/b&gt;", "Opening hours",
	} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if bytes.Contains(html, []byte("is missing")) {
		t.Errorf("the report says an image is missing")
	}
	// --json and -o - (the page on stdout).
	code, out, _ = runBoardCLI(t, ctx, dir, "board", "report", "hours", "-o", page, "--json")
	var sum struct {
		Output string `json:"output"`
		Steps  int    `json:"steps"`
		Images int    `json:"images"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.Output != page || sum.Steps != 1 || sum.Images != 1 {
		t.Errorf("board report --json: exit %d: %s", code, out)
	}
	code, out, _ = runBoardCLI(t, ctx, dir, "board", "report", "hours", "-o", "-")
	if code != 0 || !strings.HasPrefix(out, "<!doctype html>") || !strings.Contains(out, "data:image/png;base64,") {
		t.Errorf("board report -o -: exit %d, %d bytes", code, len(out))
	}

	// A task without a journal: a clear error, and no page.
	nopage := filepath.Join(t.TempDir(), "later.html")
	code, _, errOut = runBoardCLI(t, ctx, dir, "board", "report", "later", "-o", nopage)
	if code != 1 || !strings.Contains(errOut, "surf: error: task later has no journal on the board (it is cancelled: not needed)") {
		t.Errorf("board report later: exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(nopage); err == nil {
		t.Errorf("board report of a task without a journal wrote %s", nopage)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// TestBoardWatchLines follows a board with surf board watch (not on a
// terminal: one line per change, --json: one event per line) while a task
// runs, reports progress and ends.
func TestBoardWatchLines(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := filepath.Join(t.TempDir(), "board")
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx, board.Task{ID: "first", Instruction: "already there"}); err != nil {
		t.Fatal(err)
	}

	type watcher struct {
		out, errOut syncBuffer
		code        chan int
	}
	start := func(ctx context.Context, args ...string) *watcher {
		w := &watcher{code: make(chan int, 1)}
		cli := &CLI{Stdin: strings.NewReader(""), Stdout: &w.out, Stderr: &w.errOut, Getenv: func(string) string { return "" }}
		go func() { w.code <- cli.Run(ctx, append(args, "--data", dir)) }()
		return w
	}
	// waitFor waits until w's output holds every string of want, or the
	// test's deadline.
	waitFor := func(w *watcher, want ...string) {
		t.Helper()
		for {
			s := w.out.String()
			all := true
			for _, x := range want {
				all = all && strings.Contains(s, x)
			}
			if all {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("watch output lacks one of %q:\n%s\nstderr:\n%s", want, s, w.errOut.String())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	lines := start(wctx, "board", "watch")
	events := start(wctx, "board", "watch", "--json")
	// The table as it is, then a line per change.
	waitFor(lines, "1 task  pending 0  ready 1  running 0", "nothing running\n")
	waitFor(events, `"id":"first"`)

	progressed := make(chan struct{})
	release := make(chan struct{})
	workCtx, stopWork := context.WithCancel(ctx)
	workDone := make(chan error, 1)
	go func() {
		workDone <- b.Work(workCtx, board.WorkConfig{Name: "ww", Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
			c.Progress(ctx, "step 2: click Hours")
			close(progressed)
			select {
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &board.Result{Answer: "9 to 5", EndReason: "answered", Steps: 2}, nil
		}})
	}()
	<-progressed
	waitFor(lines, " first running ww/1 attempt 1: step 2: click Hours\n")
	waitFor(events, `"progress":"step 2: click Hours"`)
	close(release)
	if _, err := b.Wait(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	stopWork()
	<-workDone
	waitFor(lines, " first done: 9 to 5\n")
	waitFor(events, `"state":"done"`, `"answer":"9 to 5"`)

	// A task added while watching shows up too; Ctrl-C (ctx ending) ends
	// the watch with exit 0.
	if _, err := b.Add(ctx, board.Task{ID: "second", Instruction: "added later"}); err != nil {
		t.Fatal(err)
	}
	waitFor(lines, " second ready\n")
	stopWatch()
	for _, w := range []*watcher{lines, events} {
		if code := <-w.code; code != 0 {
			t.Errorf("watch ended with exit %d: %s", code, w.errOut.String())
		}
	}
	// Each JSON line is one event.
	for _, l := range strings.Split(strings.TrimSpace(events.out.String()), "\n") {
		var ev struct {
			Record  board.Record `json:"record"`
			Initial bool         `json:"initial"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Record.Task.ID == "" {
			t.Errorf("watch --json line %q: %v", l, err)
		}
	}
}
