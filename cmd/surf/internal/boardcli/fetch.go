package boardcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/report"
)

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
