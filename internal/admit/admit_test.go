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

// TestTurnAway: a holder that waits through Away lets its turn go to the
// next in line, takes it back after (in line itself), and leaves a turn
// it did not hold alone.
func TestTurnAway(t *testing.T) {
	q := New(1)
	ctx := context.Background()
	a := q.Turn()
	if _, err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Take(ctx); err != nil || q.Active() != 1 {
		t.Fatalf("taking a held turn again: err %v, %d turns out, want 1", err, q.Active())
	}
	actx := WithTurn(ctx, a)

	b := q.Turn()
	bHas := make(chan struct{})
	bGo := make(chan struct{})
	go func() {
		if _, err := b.Take(ctx); err != nil {
			t.Error(err)
		}
		close(bHas)
		<-bGo
		b.Drop()
	}()
	waitUntil(t, func() bool { return q.Waiting() == 1 })

	back := make(chan string)
	go func() {
		v, err := Away(actx, func() (string, error) {
			<-bHas // b got the turn while a waits
			if a.Held() {
				t.Error("a still holds its turn while away")
			}
			return "answer", nil
		})
		if err != nil {
			t.Error(err)
		}
		back <- v
	}()
	select {
	case v := <-back:
		t.Fatalf("Away returned %q while b held the only turn", v)
	case <-time.After(50 * time.Millisecond):
	}
	close(bGo)
	if v := <-back; v != "answer" {
		t.Errorf("Away returned %q", v)
	}
	if !a.Held() || q.Active() != 1 {
		t.Errorf("after Away: a holds its turn %v, %d out; want true, 1", a.Held(), q.Active())
	}
	a.Drop()
	a.Drop()
	if q.Active() != 0 {
		t.Errorf("%d turns out after dropping, want 0", q.Active())
	}

	// Without a held turn (or any), Away only waits.
	for _, c := range []context.Context{ctx, WithTurn(ctx, q.Turn())} {
		if _, err := Away(c, func() (int, error) { return 0, nil }); err != nil || q.Active() != 0 {
			t.Errorf("Away without a held turn: err %v, %d out", err, q.Active())
		}
	}
	// The wait's error wins; an ended ctx is reported when it had none.
	if _, err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(WithTurn(ctx, a))
	boom := errors.New("boom")
	if _, err := Away(cctx, func() (int, error) { cancel(); return 0, boom }); !errors.Is(err, boom) {
		t.Errorf("Away's error %v, want boom", err)
	}
	if a.Held() || q.Active() != 0 {
		t.Errorf("a turn not taken back still counts: held %v, %d out", a.Held(), q.Active())
	}
	if _, err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	cctx, cancel = context.WithCancel(WithTurn(ctx, a))
	if _, err := Away(cctx, func() (int, error) { cancel(); return 0, nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Away after ctx ended: %v, want context.Canceled", err)
	}
	var none *Turn
	if _, err := none.Take(ctx); err != nil || none.Held() {
		t.Errorf("a nil turn: %v, held %v", err, none.Held())
	}
	none.Drop()
	unlimited := (*Queue)(nil).Turn()
	if _, err := unlimited.Take(ctx); err != nil || unlimited.Held() {
		t.Errorf("a turn of no queue: %v, held %v", err, unlimited.Held())
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
	}
}

// TestTurnDroppedWhenDone: a holder stuck past its context (a call on a
// page that never answers) does not keep its turn: the turn goes to the
// next caller as soon as the context ends.
func TestTurnDroppedWhenDone(t *testing.T) {
	q := New(1)
	ctx, cancel := context.WithCancel(context.Background())
	turn := q.Turn()
	if _, err := turn.Take(ctx); err != nil {
		t.Fatal(err)
	}
	defer turn.DropWhenDone(ctx)()
	cancel() // the holder's context ends; the holder itself never lets go
	wctx, wcancel := context.WithTimeout(context.Background(), time.Minute)
	defer wcancel()
	if _, err := q.Acquire(wctx); err != nil {
		t.Fatalf("the next caller got no turn after the holder's context ended: %v", err)
	}
	q.Release()
	if turn.Held() {
		t.Error("the turn is still held after its context ended")
	}
	// Taking it again with the ended context takes nothing.
	if _, err := turn.Take(ctx); err == nil || turn.Held() {
		t.Errorf("Take with an ended context: %v, held %v", err, turn.Held())
	}
	if n := q.Active(); n != 0 {
		t.Errorf("%d turns out, want 0", n)
	}
}
