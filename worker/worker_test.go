package worker_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
	"github.com/surfkit/surf/worker"
)

// TestNewRefusesBadConfig: a worker without a model or a policy, or with
// negative limits, is an error from New, before any browser starts.
func TestNewRefusesBadConfig(t *testing.T) {
	ctx := context.Background()
	// never called: New refuses each config before a task runs
	model, err := llm.New(ctx, llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	pol := browsertest.Policy()
	for name, cfg := range map[string]worker.Config{
		"zero":            {},
		"no model":        {Policy: pol},
		"no policy":       {Model: model},
		"negative steps":  {Policy: pol, Model: model, MaxSteps: -1},
		"negative time":   {Policy: pol, Model: model, MaxTime: -time.Second},
		"negative active": {Policy: pol, Model: model, MaxActive: -1},
	} {
		w, err := worker.New(ctx, cfg)
		if err == nil {
			w.Close()
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
}

func fakeModel(t *testing.T, turns ...fakeopenai.Turn) websurfer.Model {
	t.Helper()
	srv := fakeopenai.Start(t, fakeopenai.NewScript(turns...))
	m, err := llm.New(context.Background(), llm.Config{BaseURL: srv.URL(), Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// recorder is a Watcher that records what it sees.
type recorder struct {
	mu     sync.Mutex
	events []string
}

var _ worker.Watcher = (*recorder)(nil)

func (r *recorder) add(e string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Watch(_ context.Context, run *worker.Run) (worker.Watch, error) {
	if run.Session == nil || run.Surf == nil || run.Surf.Session != run.Session {
		r.add("watch without its session")
	}
	r.add("watch " + run.Claim.Task.ID)
	return recordWatch{r}, nil
}

type recordWatch struct{ r *recorder }

func (w recordWatch) Begin(ctx context.Context, s *websurfer.Surfer, opts *websurfer.RunOptions) (context.Context, func()) {
	if s == nil || opts.Journal == nil {
		w.r.add("begin without surfer or journal")
	}
	w.r.add("begin")
	return ctx, func() { w.r.add("end") }
}

func (w recordWatch) Step(st *websurfer.Step) {
	if st != nil && st.Done {
		w.r.add("step done " + string(st.EndReason))
	}
}

func (w recordWatch) Close() { w.r.add("close") }

// TestRunWithWatcher runs a claim through Run: the task's result, its
// files on the board, the Watcher's calls in order, and the task's start
// URL checked against its own narrowed policy.
func TestRunWithWatcher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	site := browsertest.ServeSites(t)
	model := fakeModel(t, fakeopenai.CallTool("stop_action", `{"answer": "seen"}`))
	b, err := board.Open(ctx, board.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rec := &recorder{}
	allow, _ := policy.ParseHostRule(site.HostA())
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{allow}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(ctx, worker.Config{
		Sandbox: sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol},
		Model:   model, Watcher: rec, MaxSteps: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := b.Add(ctx,
		board.Task{ID: "ok", Instruction: "Say what you see.", StartURL: site.A + "/library"},
		board.Task{ID: "denied", Instruction: "Say what you see.", StartURL: site.A + "/library",
			Policy: &board.Policy{Deny: []policy.HostRule{allow}}},
	); err != nil {
		t.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	go b.Work(work, board.WorkConfig{Run: w.Run, Workers: 1, MaxAttempts: 1})
	recs, err := b.Wait(ctx, "ok", "denied")
	if err != nil {
		t.Fatal(err)
	}
	ok, denied := recs[0], recs[1]
	if ok.State != board.Done || ok.Result == nil || ok.Result.Answer != "seen" || ok.Result.Journal == "" || ok.Result.Report == "" || len(ok.Result.Images) == 0 {
		t.Errorf("task ok: %+v %+v", ok, ok.Result)
	}
	if denied.State != board.Failed || !strings.Contains(denied.Reason, "is denied") {
		t.Errorf("task denied: state %s, error %q", denied.State, denied.Reason)
	}
	rec.mu.Lock()
	got := strings.Join(rec.events, ", ")
	rec.mu.Unlock()
	if want := "watch ok, begin, step done answered, end, close"; got != want {
		t.Errorf("the watcher saw %q, want %q (the denied task is never watched)", got, want)
	}
}
