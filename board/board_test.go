package board

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

func openTest(t *testing.T, dir string) *Board {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Open(ctx, Config{Dir: dir, Lease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// span is when a task ran, in a test's run function.
type span struct{ start, end time.Time }

type recorder struct {
	mu    sync.Mutex
	spans map[string]span
}

func (r *recorder) run(d time.Duration, fail map[string]string) RunFunc {
	return func(ctx context.Context, c *Claim) (*Result, error) {
		s := span{start: time.Now()}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
		s.end = time.Now()
		r.mu.Lock()
		if r.spans == nil {
			r.spans = map[string]span{}
		}
		r.spans[c.Task.ID] = s
		r.mu.Unlock()
		if why, ok := fail[c.Task.ID]; ok {
			return &Result{EndReason: "error"}, errors.New(why)
		}
		return &Result{Answer: "answer of " + c.Task.ID, EndReason: "answered", Steps: 1}, nil
	}
}

func TestDiamond(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	recs, err := b.Add(ctx,
		Task{ID: "D", Instruction: "join", After: []string{"B", "C"}},
		Task{ID: "A", Instruction: "first"},
		Task{ID: "B", Instruction: "left", After: []string{"A"}},
		Task{ID: "C", Instruction: "right", After: []string{"A"}},
	)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]State{}
	for _, r := range recs {
		states[r.Task.ID] = r.State
	}
	if states["A"] != Ready || states["B"] != Pending || states["D"] != Pending {
		t.Fatalf("states after add: %v", states)
	}
	rec := &recorder{}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- b.Work(wctx, WorkConfig{Workers: 3, Run: rec.run(300*time.Millisecond, nil)}) }()
	got, err := b.Wait(ctx, "A", "B", "C", "D")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.State != Done || r.Attempts != 1 || r.Result == nil || r.Result.Answer != "answer of "+r.Task.ID {
			t.Fatalf("%s: %+v", r.Task.ID, r)
		}
	}
	s := rec.spans
	if !s["A"].end.Before(s["B"].start) || !s["A"].end.Before(s["C"].start) {
		t.Errorf("B or C started before A ended: %v", s)
	}
	if !s["B"].end.Before(s["D"].start) || !s["C"].end.Before(s["D"].start) {
		t.Errorf("D started before B and C ended: %v", s)
	}
	if !(s["B"].start.Before(s["C"].end) && s["C"].start.Before(s["B"].end)) {
		t.Errorf("B and C did not run in parallel: %v", s)
	}
}

func TestAddRefusesBadGraphs(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx, Task{ID: "base", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tasks []Task
		want  string
	}{
		{[]Task{{ID: "a", Instruction: "x", After: []string{"c"}}, {ID: "b", Instruction: "x", After: []string{"a"}}, {ID: "c", Instruction: "x", After: []string{"b"}}},
			"cycle: a -> c -> b -> a"},
		{[]Task{{ID: "a", Instruction: "x", After: []string{"a"}}}, "runs after itself"},
		{[]Task{{ID: "a", Instruction: "x", After: []string{"nope"}}}, "runs after nope, which is not on the board"},
		{[]Task{{ID: "base", Instruction: "x"}}, "already on the board"},
		{[]Task{{ID: "a", Instruction: "x"}, {ID: "a", Instruction: "y"}}, "appears twice"},
		{[]Task{{ID: "a b", Instruction: "x"}}, "task id \"a b\""},
		{[]Task{{ID: "a", Instruction: "  "}}, "instruction is empty"},
		{[]Task{{ID: "a", Instruction: "x", StartURL: "file:///etc/passwd"}}, "not an http(s) URL"},
		{[]Task{{ID: "a", Instruction: "x", MaxSteps: -1}}, "negative"},
	}
	for _, c := range cases {
		_, err := b.Add(ctx, c.tasks...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Add(%v): error %v, want %q", c.tasks, err, c.want)
		}
	}
	// The refusals a caller branches on are typed.
	for _, c := range []struct {
		tasks []Task
		is    error
	}{
		{[]Task{{ID: "a", Instruction: "x", After: []string{"b"}}, {ID: "b", Instruction: "x", After: []string{"a"}}}, ErrCycle},
		{[]Task{{ID: "a", Instruction: "x", After: []string{"nope"}}}, ErrUnknownDependency},
		{[]Task{{ID: "a", Instruction: "x"}, {ID: "base", Instruction: "x"}}, ErrExists},
	} {
		if _, err := b.Add(ctx, c.tasks...); !errors.Is(err, c.is) {
			t.Errorf("Add(%v): error %v, want %v", c.tasks, err, c.is)
		}
	}
	var te *TaskError
	_, err := b.Add(ctx, Task{ID: "fine", Instruction: "x"}, Task{ID: "bad", Instruction: "x", MaxSteps: -1})
	if !errors.As(err, &te) || te.Index != 1 || te.ID != "bad" || !strings.HasPrefix(err.Error(), "task 2 (bad): ") {
		t.Errorf("a malformed second task: %v, want a *TaskError of index 1", err)
	}
	all, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Errorf("refused batches left tasks on the board: %d records", len(all))
	}
}

func TestFailurePropagates(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx,
		Task{ID: "A", Instruction: "first"},
		Task{ID: "B", Instruction: "left", After: []string{"A"}},
		Task{ID: "C", Instruction: "right", After: []string{"A"}},
		Task{ID: "D", Instruction: "join", After: []string{"B", "C"}},
		Task{ID: "E", Instruction: "after D", After: []string{"D"}},
		Task{ID: "F", Instruction: "cleanup", After: []string{"B"}, RunAfterFailure: true},
	); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, WorkConfig{Workers: 2, Run: rec.run(50*time.Millisecond, map[string]string{"B": "the site was down"})})
	}()
	got, err := b.Wait(ctx, "A", "B", "C", "D", "E", "F")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]State{"A": Done, "B": Failed, "C": Done, "D": Failed, "E": Failed, "F": Done}
	for _, r := range got {
		if r.State != want[r.Task.ID] {
			t.Errorf("%s: %s (%s), want %s", r.Task.ID, r.State, r.Reason, want[r.Task.ID])
		}
	}
	if r := got[3]; r.Reason != "dependency B failed: the site was down" {
		t.Errorf("D's reason: %q", r.Reason)
	}
	if r := got[4]; r.Reason != "dependency D failed: dependency B failed: the site was down" {
		t.Errorf("E's reason: %q", r.Reason)
	}
	if _, ran := rec.spans["D"]; ran {
		t.Error("D ran after B failed")
	}
}

func TestCancel(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx,
		Task{ID: "slow", Instruction: "takes long"},
		Task{ID: "later", Instruction: "after slow", After: []string{"slow"}},
		Task{ID: "queued", Instruction: "never runs"},
	); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Cancel(ctx, "queued", ""); err != nil {
		t.Fatal(err)
	}
	var ran sync.Map
	started := make(chan struct{}, 4)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, WorkConfig{Run: func(ctx context.Context, c *Claim) (*Result, error) {
			ran.Store(c.Task.ID, true)
			started <- struct{}{}
			<-ctx.Done()
			return &Result{EndReason: "cancelled", Steps: 2}, ctx.Err()
		}})
	}()
	<-started
	if _, err := b.Cancel(ctx, "slow", "not needed any more"); err != nil {
		t.Fatal(err)
	}
	got, err := b.Wait(ctx, "slow", "later", "queued")
	if err != nil {
		t.Fatal(err)
	}
	// the worker comes free and finds nothing more to run
	time.Sleep(300 * time.Millisecond)
	stop()
	<-done
	if got[0].State != Cancelled || got[0].Reason != "not needed any more" {
		t.Errorf("slow: %+v", got[0])
	}
	if got[1].State != Failed || got[1].Reason != "dependency slow was cancelled: not needed any more" {
		t.Errorf("later: %+v", got[1])
	}
	if _, ok := ran.Load("queued"); ok {
		t.Error("a cancelled task ran")
	}
	if _, err := b.Cancel(ctx, "slow", ""); err == nil || !strings.Contains(err.Error(), "already ended") {
		t.Errorf("cancelling an ended task: %v", err)
	}
	if _, err := b.Cancel(ctx, "nope", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("cancelling an unknown task: %v", err)
	}
}

// A worker that stops heartbeating (here: its process is simulated by a
// run that never returns and a heartbeat that never comes, because the
// lease is short and the worker's board connection is closed) loses its
// task to another worker after the lease.
func TestLostWorkerTaskIsRetried(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	b1 := openTest(t, dir)
	b2 := openTest(t, dir)
	if _, err := b2.Add(ctx, Task{ID: "T", Instruction: "survive"}); err != nil {
		t.Fatal(err)
	}
	// the first worker claims the task and then goes silent: its
	// connection to the board is cut while it runs
	claimed := make(chan struct{})
	w1ctx, stop1 := context.WithCancel(ctx)
	defer stop1()
	go b1.Work(w1ctx, WorkConfig{Name: "w1", Run: func(ctx context.Context, c *Claim) (*Result, error) {
		close(claimed)
		b1.nc.Close()
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	<-claimed
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b2.Work(wctx, WorkConfig{Name: "w2", Run: func(ctx context.Context, c *Claim) (*Result, error) {
			return &Result{Answer: "ok", EndReason: "answered"}, nil
		}})
	}()
	got, err := b2.Wait(ctx, "T")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	r := got[0]
	if r.State != Done || r.Attempts != 2 || r.Worker != "w2/1" || len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "w1/1 did not finish") {
		t.Fatalf("record: %+v", r)
	}
}

func TestMaxAttempts(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx, Task{ID: "flaky", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, WorkConfig{MaxAttempts: 2, Run: func(ctx context.Context, c *Claim) (*Result, error) {
			runs.Add(1)
			return nil, Retry(fmt.Errorf("browser died (attempt %d)", c.Attempt))
		}})
	}()
	got, err := b.Wait(ctx, "flaky")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got[0].State != Failed || got[0].Attempts != 2 || runs.Load() != 2 || got[0].Reason != "browser died (attempt 2)" {
		t.Fatalf("record %+v after %d runs", got[0], runs.Load())
	}
}

// The board survives its processes: a board closed and opened again over
// the same directory holds every task and result.
func TestRestartKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	b := openTest(t, dir)
	if _, err := b.Add(ctx, Task{ID: "one", Instruction: "x"}, Task{ID: "two", Instruction: "y", After: []string{"one"}}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, WorkConfig{Idle: 500 * time.Millisecond, Run: (&recorder{}).run(10*time.Millisecond, nil)})
	}()
	if err := <-done; err != nil {
		t.Fatalf("idle workers: %v", err)
	}
	stop()
	b.Close()
	b2 := openTest(t, dir)
	all, err := b2.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[0].Task.ID != "one" || all[1].State != Done || all[1].Result.Answer != "answer of two" {
		t.Fatalf("after restart: %+v", all)
	}
}

// Processes that open the same directory share one server; when the one
// running it closes, another takes it over and the board goes on.
func TestSharedServerTakeover(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	owner := openTest(t, dir)
	client := openTest(t, dir)
	if owner.emb.srv == nil || client.emb.srv != nil {
		t.Fatal("the first board should run the server and the second connect to it")
	}
	if _, err := client.Add(ctx, Task{ID: "x", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	owner.Close()
	if _, err := client.Add(ctx, Task{ID: "y", Instruction: "y"}); err != nil {
		t.Fatalf("after the server's process closed: %v", err)
	}
	all, err := client.List(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("list: %v %+v", err, all)
	}
}

func TestWatch(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx, Task{ID: "w", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var seen []string
	for ev, err := range b.Watch(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) == 0 {
			// the watch has started: now the worker may run the task
			go b.Work(wctx, WorkConfig{Run: func(ctx context.Context, c *Claim) (*Result, error) {
				c.Progress(ctx, "step 1: reading")
				return &Result{Answer: "fine"}, nil
			}})
		}
		seen = append(seen, fmt.Sprintf("%s/%s/%v", ev.Record.State, ev.Record.Progress, ev.Initial))
		if ev.Record.State == Done {
			break
		}
	}
	got := strings.Join(seen, " ")
	if !strings.HasPrefix(got, "ready//true") || !strings.Contains(got, "running/step 1: reading/false") || !strings.HasSuffix(got, "done//false") {
		t.Errorf("events: %s", got)
	}
}

func TestIsRetry(t *testing.T) {
	base := errors.New("the browser is gone")
	if !IsRetry(Retry(base)) || !IsRetry(fmt.Errorf("run: %w", Retry(base))) {
		t.Error("IsRetry misses an error marked by Retry")
	}
	if IsRetry(base) || IsRetry(nil) {
		t.Error("IsRetry reports an error not marked by Retry")
	}
}

func TestRedactURL(t *testing.T) {
	got := RedactURL("nats://alice:s3cret@n1:4222,nats://n2:4222,tls://bob@n3")
	if got != "nats://***@n1:4222,nats://n2:4222,tls://***@n3" || strings.Contains(got, "s3cret") {
		t.Errorf("got %q", got)
	}
}

// A RunFunc that panics fails its task, not the worker: the next task
// still runs.
func TestRunPanicFailsTask(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx, Task{ID: "boom", Instruction: "x"}, Task{ID: "fine", Instruction: "y"}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- b.Work(wctx, WorkConfig{Run: func(ctx context.Context, c *Claim) (*Result, error) {
			if c.Task.ID == "boom" {
				setEntry(nil) // a runtime error: assignment to entry in nil map
			}
			return &Result{Answer: "ok"}, nil
		}})
	}()
	got, err := b.Wait(ctx, "boom", "fine")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if got[0].State != Failed || !strings.Contains(got[0].Reason, "the worker's run panicked: assignment to entry in nil map") || got[1].State != Done {
		t.Errorf("records: %+v", got)
	}
}

// setEntry writes to m; given a nil map it panics with a runtime error, as
// a worker's bug would.
func setEntry(m map[string]int) { m["x"] = 1 }

// Opening a board that exists changes none of its streams, unless one's
// settings are not the board's: an update is a write that nats-server
// v2.15 races against consumers another process creates meanwhile.
func TestReopenUpdatesOnlyWhatDiffers(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	first := openTest(t, dir)
	// every stream the board may have
	if _, err := first.plans(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := first.stateStore(ctx, true); err != nil {
		t.Fatal(err)
	}
	have, err := first.streams(ctx)
	if err != nil || len(have) != len(boardStreams) {
		t.Fatalf("streams: %v, %d of %d", err, len(have), len(boardStreams))
	}
	updates := func(open func()) []string {
		t.Helper()
		var mu sync.Mutex
		var subjects []string
		sub, err := first.nc.Subscribe("$JS.API.STREAM.UPDATE.>", func(m *nats.Msg) {
			mu.Lock()
			subjects = append(subjects, m.Subject)
			mu.Unlock()
		})
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
		if err := first.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		open()
		if err := first.nc.Flush(); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(subjects)
	}
	if got := updates(func() { openTest(t, dir) }); len(got) != 0 {
		t.Fatalf("reopening an unchanged board updated %v", got)
	}
	// A stream whose description someone changed is set back.
	s, err := first.js.Stream(ctx, "KV_"+TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	c := s.CachedInfo().Config
	want := c.Description
	c.Description = "changed by hand"
	if _, err := first.js.UpdateStream(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := updates(func() { openTest(t, dir) })
	if !slices.Equal(got, []string{"$JS.API.STREAM.UPDATE.KV_" + TasksBucket}) {
		t.Fatalf("reopening after a change updated %v, want the task bucket's stream alone", got)
	}
	if s, err = first.js.Stream(ctx, "KV_"+TasksBucket); err != nil || s.CachedInfo().Config.Description != want {
		t.Fatalf("description after reopening: %v %q", err, s.CachedInfo().Config.Description)
	}
}
