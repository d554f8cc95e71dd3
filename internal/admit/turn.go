package admit

import (
	"context"
	"sync"
	"time"
)

// A Turn is one holder's hold on a turn of a Queue: a call, a task or a
// run that drives the browser in bursts. It takes the turn while it works
// and lets it go while it waits on something else (a model, a person), so
// that the turn serves others meanwhile. A Turn of a nil Queue never
// waits. Its methods are safe for concurrent use.
type Turn struct {
	q    *Queue
	mu   sync.Mutex
	held bool
}

// Turn returns a hold on one of q's turns, not taken yet. q may be nil:
// no limit.
func (q *Queue) Turn() *Turn { return &Turn{q: q} }

// Take waits for the turn unless it is held, until ctx ends; a ctx that
// has ended takes no turn. It returns how long it waited.
func (t *Turn) Take(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil || t == nil || t.q == nil {
		return 0, err
	}
	t.mu.Lock()
	held := t.held
	t.mu.Unlock()
	if held {
		return 0, nil
	}
	waited, err := t.q.Acquire(ctx)
	if err != nil {
		return waited, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.q.Release() // taken meanwhile by another goroutine: one is enough
		return waited, nil
	}
	if err := ctx.Err(); err != nil {
		// ctx ended as the turn came: a turn is never held past its
		// holder's context (see DropWhenDone).
		t.q.Release()
		return waited, err
	}
	t.held = true
	return waited, nil
}

// DropWhenDone lets the turn go as soon as ctx ends, even if its holder
// is still busy (a call stuck on a page that does not answer): a turn
// never outlives the context of the work it was taken for. The returned
// stop undoes it, as context.AfterFunc's does.
func (t *Turn) DropWhenDone(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, t.Drop)
}

// Drop lets the turn go, if it is held.
func (t *Turn) Drop() {
	if t == nil || t.q == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		t.q.Release()
	}
}

// Held reports whether the turn is held.
func (t *Turn) Held() bool {
	if t == nil || t.q == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

type turnKey struct{}

// WithTurn returns ctx carrying t: Away, called with it or a context
// derived from it, lets t go while it waits.
func WithTurn(ctx context.Context, t *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

// TurnFrom returns the turn ctx carries, or nil.
func TurnFrom(ctx context.Context) *Turn {
	t, _ := ctx.Value(turnKey{}).(*Turn)
	return t
}

// Away runs wait, something that does not need the browser (a model's
// answer, a person's decision), without the turn ctx carries, and takes
// the turn back after. A turn that was not held is not taken. wait's
// error wins over a failure to take the turn back (ctx ended meanwhile).
func Away[T any](ctx context.Context, wait func() (T, error)) (T, error) {
	t := TurnFrom(ctx)
	if !t.Held() {
		return wait()
	}
	t.Drop()
	v, err := wait()
	if _, terr := t.Take(ctx); err == nil {
		err = terr
	}
	return v, err
}
