package admit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestQueueFIFO: with one turn, waiters are admitted in the order they
// came, and a waiter that gives up leaves the queue without losing the
// turn it may have been handed.
func TestQueueFIFO(t *testing.T) {
	a := New(1)
	ctx := context.Background()
	if _, err := a.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.Acquire(ctx); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			a.Release()
		}()
		waitFor(t, "the waiter to queue", 10*time.Second, func() bool { return a.Waiting() == i+1 })
	}
	// One more waiter gives up while queued.
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := a.Acquire(cctx)
		gaveUp <- err
	}()
	waitFor(t, "the fourth waiter to queue", 10*time.Second, func() bool { return a.Waiting() == 4 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter got %v, want context.Canceled", err)
	}
	if n := a.Waiting(); n != 3 {
		t.Fatalf("%d waiting after one gave up, want 3", n)
	}
	a.Release()
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Fatalf("admitted in order %v, want [0 1 2]", order)
	}
	// Every turn was given back: a new call is admitted at once.
	if q, err := a.Acquire(ctx); err != nil || q != 0 {
		t.Fatalf("acquire on an idle admitter: waited %s, err %v", q, err)
	}
}

// TestQueueCapacity: two turns are out at once, a third waits until one
// is released.
func TestQueueCapacity(t *testing.T) {
	q := New(2)
	ctx := context.Background()
	for range 2 {
		if w, err := q.Acquire(ctx); err != nil || w != 0 {
			t.Fatalf("acquire with room: waited %s, err %v", w, err)
		}
	}
	got := make(chan struct{})
	go func() {
		if _, err := q.Acquire(ctx); err != nil {
			t.Error(err)
		}
		close(got)
	}()
	waitFor(t, "the third to queue", 10*time.Second, func() bool { return q.Waiting() == 1 })
	select {
	case <-got:
		t.Fatal("a third turn went out with two held")
	default:
	}
	q.Release()
	<-got
	if n := q.Active(); n != 2 {
		t.Fatalf("%d turns out, want 2", n)
	}
	q.Release()
	q.Release()
	if n := q.Active(); n != 0 {
		t.Fatalf("%d turns out after all were released, want 0", n)
	}
	if New(0).Capacity() != 1 {
		t.Fatal("a queue of capacity 0 must hand out one turn")
	}
}

func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
