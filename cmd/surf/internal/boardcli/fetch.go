package boardcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/report"
)

// ErrNoJournal is Report's error for a task that has no journal on the
// board: it has not run yet, or its worker stored none.
var ErrNoJournal = errors.New("no journal on the board")

// A WriteError is Report's failure to write the page. Journal is the
// journal it was written from, in the temporary directory of the run.
type WriteError struct {
	Journal string
	Err     error
}

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Report writes the report (see internal/report) of the last run of the
// task r: its journal and images are fetched from the board into a
// temporary directory (see FetchRun), removed on return. The page goes to
// w when out is "-", else to the file out. A task without a journal is an
// error wrapping ErrNoJournal that says what state the task is in; a
// journal that does not read is an error naming the task; a page that
// cannot be written is a *WriteError.
func Report(ctx context.Context, b *board.Board, r board.Record, w io.Writer, out string, opts report.Options) (report.Summary, error) {
	id := r.Task.ID
	if r.Result == nil || r.Result.Journal == "" {
		why := fmt.Sprintf("it is %s", r.State)
		if r.State.Terminal() && r.Reason != "" {
			why += ": " + r.Reason
		}
		return report.Summary{}, fmt.Errorf("task %s has %w (%s)", id, ErrNoJournal, why)
	}
	dir, err := os.MkdirTemp("", "surf-board-report-")
	if err != nil {
		return report.Summary{}, err
	}
	defer os.RemoveAll(dir)
	jpath, err := FetchRun(ctx, b, r.Result, dir)
	if err != nil {
		return report.Summary{}, err
	}
	j, err := report.Read(jpath)
	if err != nil {
		return report.Summary{}, fmt.Errorf("task %s: %w", id, err)
	}
	var sum report.Summary
	if out == "-" {
		sum, err = report.Write(w, j, opts)
	} else {
		sum, err = report.WriteFile(jpath, out, opts)
	}
	if err != nil {
		return sum, &WriteError{Journal: jpath, Err: err}
	}
	return sum, nil
}

// FetchRun copies a run's journal, and the images it refers to, from the
// board's file store into dir, laid out as the run wrote them: the images
// at the paths the journal names, relative to it. It returns the journal's
// path. An image the store does not hold, or one the journal names
// outside dir, is left out (the report shows it as missing).
func FetchRun(ctx context.Context, b *board.Board, res *board.Result, dir string) (string, error) {
	jpath := filepath.Join(dir, "journal.jsonl")
	if err := fetchFile(ctx, b, res.Journal, jpath); err != nil {
		return "", err
	}
	j, err := report.Read(jpath)
	if err != nil {
		return jpath, nil // the caller's report.Read says what is wrong
	}
	stored := map[string]string{} // base name -> name in the store
	for _, name := range res.Images {
		stored[path.Base(name)] = name
	}
	done := map[string]bool{}
	for _, e := range j.Entries {
		if e.Image == "" || done[e.Image] {
			continue
		}
		done[e.Image] = true
		rel := filepath.FromSlash(e.Image)
		name, ok := stored[path.Base(filepath.ToSlash(e.Image))]
		if !ok || !filepath.IsLocal(rel) {
			continue
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := fetchFile(ctx, b, name, dst); err != nil {
			return "", err
		}
	}
	return jpath, nil
}

func fetchFile(ctx context.Context, b *board.Board, name, dst string) (err error) {
	rc, err := b.File(ctx, name)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", name, err)
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := io.Copy(f, rc); err != nil {
		return fmt.Errorf("fetching %s: %w", name, err)
	}
	return nil
}

// OpenTasks are those of ids that have not ended, each as "ID (STATE)"
// (an id the board does not know as it is); running reports whether one
// of them is running (when none is, no worker may be attached).
func OpenTasks(ctx context.Context, b *board.Board, ids []string) (open []string, running bool) {
	for _, id := range ids {
		r, err := b.Get(ctx, id)
		if err != nil {
			open = append(open, id)
			continue
		}
		if !r.State.Terminal() {
			open = append(open, fmt.Sprintf("%s (%s)", id, r.State))
			running = running || r.State == board.Running
		}
	}
	return open, running
}
