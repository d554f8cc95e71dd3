package board

import (
	"context"
	"errors"
	"testing"
	"time"
)

// consumerAckWait is the AckWait of the workers' consumer, as the
// server holds it now.
func consumerAckWait(t *testing.T, ctx context.Context, b *Board) time.Duration {
	t.Helper()
	c, err := b.js.Consumer(ctx, ReadyStream, WorkersGroup)
	if err != nil {
		t.Fatal(err)
	}
	return c.CachedInfo().Config.AckWait
}

// Issue 31, acceptance 6: the lease is the board's. Two worker processes
// on one board, the second opened asking for a lease of 15s: the
// consumer keeps the lease the board was created with, for both; only
// SetLease changes it, for both.
func TestLeaseIsTheBoards(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	b1 := openTest(t, dir) // creates the board with a lease of 2s
	b2, err := Open(ctx, Config{Dir: dir, Lease: 15 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	idle := func(ctx context.Context, c *Claim) (*Result, error) { return &Result{Answer: "ok"}, nil }
	go func() { done <- b1.Work(wctx, WorkConfig{Name: "w1", Run: idle}) }()
	go func() { done <- b2.Work(wctx, WorkConfig{Name: "w2", Run: idle}) }()
	// both run a task: both have started
	if _, err := b1.Add(ctx, Task{ID: "a", Instruction: "x"}, Task{ID: "b", Instruction: "y"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b1.Wait(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	for _, b := range []*Board{b1, b2} {
		if got, err := b.Lease(ctx); err != nil || got != 2*time.Second {
			t.Fatalf("the board's lease: %v, %v; want 2s", got, err)
		}
	}
	if got := consumerAckWait(t, ctx, b1); got != 2*time.Second {
		t.Fatalf("the consumer's AckWait is %v, want the board's 2s", got)
	}
	stop()
	<-done
	<-done

	if err := b2.SetLease(ctx, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := consumerAckWait(t, ctx, b1); got != 15*time.Second {
		t.Fatalf("after SetLease(15s) the consumer's AckWait is %v", got)
	}
	if got, err := b1.Lease(ctx); err != nil || got != 15*time.Second {
		t.Fatalf("after SetLease(15s) the other process reads %v, %v", got, err)
	}
	// a bad lease changes nothing
	if err := b1.SetLease(ctx, 100*time.Millisecond); err == nil {
		t.Fatal("SetLease(100ms) took")
	}
	if got := consumerAckWait(t, ctx, b1); got != 15*time.Second {
		t.Fatalf("a refused SetLease changed the AckWait to %v", got)
	}
	// a board opened again keeps its lease
	b3, err := Open(ctx, Config{Dir: dir, Lease: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b3.Close()
	if got := consumerAckWait(t, ctx, b3); got != 15*time.Second {
		t.Fatalf("Open with another lease changed the AckWait to %v", got)
	}
}

// A worker heartbeats by the board's lease as it is when it claims a
// task, not as it was when the worker started: after the lease is
// shortened from 30s to 1s, a task that runs for 4s stays with the
// worker that claimed it (one attempt), although another worker is
// waiting for it.
func TestHeartbeatFollowsTheLease(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	b, err := Open(ctx, Config{Dir: dir, Lease: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	run := func(ctx context.Context, c *Claim) (*Result, error) {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(4 * time.Second):
		}
		return &Result{Answer: "ran through"}, nil
	}
	done := make(chan error, 1)
	go func() { done <- b.Work(wctx, WorkConfig{Name: "w", Workers: 2, Run: run}) }()
	// the workers are up (a task has run) before the lease changes
	if _, err := b.Add(ctx, Task{ID: "warm", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Wait(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if err := b.SetLease(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, Task{ID: "long", Instruction: "y"}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Wait(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	r := recs[0]
	if r.State != Done || r.Attempts != 1 || len(r.Notes) != 0 {
		t.Fatalf("the long task was not kept by its worker: %+v", r)
	}
}
