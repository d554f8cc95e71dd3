package worker_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/worker"
)

// TestFilesTravelWithTheTask: a task's attachment is in its run's uploads
// directory, so the page gets it from upload_file; what the run
// downloads is on the board once the worker and the board are closed,
// listed in the result and read back byte-identical (and kept in the
// worker's own downloads directory, under the task and attempt).
func TestFilesTravelWithTheTask(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	site := browsertest.ServeSites(t)
	var mu sync.Mutex
	var uploaded []string
	site.Handle("/got", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		uploaded = append(uploaded, string(b))
		mu.Unlock()
	})
	data, err := os.ReadFile(filepath.Join(browsertest.RepoRoot(), "testdata", "sites", "actions", "files-data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	model := fakeModel(t,
		fakeopenai.CallTool("upload_file", `{"target_id": 1, "path": "note.txt"}`),
		fakeopenai.CallTool("click", `{"target_id": 2}`),
		fakeopenai.CallTool("stop_action", `{"answer": "uploaded and downloaded"}`),
	)
	dir := t.TempDir()
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	allow, _ := policy.ParseHostRule(site.HostA())
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{allow}})
	if err != nil {
		t.Fatal(err)
	}
	keep := t.TempDir() // the worker keeps downloads too (surf work --downloads)
	w, err := worker.New(ctx, worker.Config{
		Sandbox: sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol},
		Session: sandbox.SessionConfig{DownloadsDir: keep},
		Model:   model, MaxSteps: 5,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	task := board.Task{ID: "files", Instruction: "Upload note.txt, then get the data.", StartURL: site.A + "/actions/files.html"}
	task.Attach("note.txt", func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader([]byte("attached-42\n"))), nil })
	if _, err := b.Add(ctx, task); err != nil {
		t.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- b.Work(work, board.WorkConfig{Run: w.Run, Workers: 1, MaxAttempts: 1}) }()
	recs, err := b.Wait(ctx, "files")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if rec := recs[0]; rec.State != board.Done {
		t.Fatalf("the task ended %s: %s %v", rec.State, rec.Reason, rec.Notes)
	}
	mu.Lock()
	got := uploaded
	mu.Unlock()
	if len(got) != 1 || got[0] != "attached-42\n" {
		t.Errorf("the page got %q, want the attachment", got)
	}
	if kept, err := os.ReadFile(filepath.Join(keep, "files", "attempt-1", "data.bin")); err != nil || !bytes.Equal(kept, data) {
		t.Errorf("the worker's downloads directory does not keep the run's download under TASK/attempt-N: %v", err)
	}
	// The worker and the board are gone: a new board reads the download.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b.Close()
	b2, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	rec, err := b2.Get(ctx, "files")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Result == nil || len(rec.Result.Downloads) != 1 {
		t.Fatalf("the result lists downloads %+v", rec.Result)
	}
	f := rec.Result.Downloads[0]
	if f.Name != "data.bin" || f.Path != "files/attempt-1/downloads/data.bin" || f.Size != int64(len(data)) {
		t.Errorf("the download is listed as %+v", f)
	}
	var buf bytes.Buffer
	if err := b2.ReadFile(ctx, f, &buf); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("the download on the board is %d bytes, not the %d served", buf.Len(), len(data))
	}
}
