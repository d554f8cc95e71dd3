package boardcli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/journal"
)

// FetchRun lays a run out as it was written: the journal, and the images
// it names at their paths; an image the store lacks, or one the journal
// names outside the directory, is left out.
func TestFetchRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := board.Open(ctx, board.Config{Dir: filepath.Join(t.TempDir(), "board")})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	src := t.TempDir()
	w, err := journal.Open(filepath.Join(src, "journal.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(journal.Entry{Event: journal.KindRunStarted, Task: "find the hours"})
	for i, img := range []string{"shots/1.png", "shots/1.png", "shots/gone.png", "../escape.png"} {
		w.Write(journal.Entry{Event: journal.KindObserved, Step: i + 1, URL: "http://127.0.0.1/", Image: img})
	}
	w.Write(journal.Entry{Event: journal.KindEnded, Step: 4, Steps: 4, EndReason: journal.EndAnswered, Answer: "9 to 5"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	journalData, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, data []byte) {
		if err := b.PutFile(ctx, name, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	put("hours/attempt-1/journal.jsonl", journalData)
	put("hours/attempt-1/1.png", []byte("png one"))
	put("hours/attempt-1/escape.png", []byte("outside"))
	res := &board.Result{Journal: "hours/attempt-1/journal.jsonl", Images: []string{"hours/attempt-1/1.png", "hours/attempt-1/escape.png"}}

	root := t.TempDir()
	dir := filepath.Join(root, "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	jpath, err := FetchRun(ctx, b, res, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(jpath); err != nil || !bytes.Equal(got, journalData) {
		t.Errorf("the journal at %s: %v, %d bytes, want the stored one", jpath, err, len(got))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "shots", "1.png")); err != nil || string(got) != "png one" {
		t.Errorf("shots/1.png: %q, %v", got, err)
	}
	for _, p := range []string{filepath.Join(dir, "shots", "gone.png"), filepath.Join(root, "escape.png")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}

	// A journal the store does not hold is an error naming it.
	_, err = FetchRun(ctx, b, &board.Result{Journal: "nope/journal.jsonl"}, t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "fetching nope/journal.jsonl") {
		t.Errorf("a missing journal: %v", err)
	}

	// Report writes the page of the run; a task that has not run has no
	// journal to show.
	var page bytes.Buffer
	sum, err := Report(ctx, b, board.Record{Task: board.Task{ID: "hours"}, State: board.Done, Result: res}, &page, "-", report.Options{})
	if err != nil || sum.Steps != 4 || !strings.Contains(page.String(), "find the hours") {
		t.Errorf("Report: %+v, %v, a page of %d bytes", sum, err, page.Len())
	}
	_, err = Report(ctx, b, board.Record{Task: board.Task{ID: "later"}, State: board.Cancelled, Reason: "not needed"}, &page, "-", report.Options{})
	if !errors.Is(err, ErrNoJournal) || err.Error() != "task later has no journal on the board (it is cancelled: not needed)" {
		t.Errorf("Report of a task that has not run: %v", err)
	}
	var we *WriteError
	_, err = Report(ctx, b, board.Record{Task: board.Task{ID: "hours"}, State: board.Done, Result: res}, nil, filepath.Join(root, "no", "such", "dir", "x.html"), report.Options{})
	if !errors.As(err, &we) || we.Journal == "" {
		t.Errorf("Report to a directory that does not exist: %v, want a *WriteError", err)
	}
}
