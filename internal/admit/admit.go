// Package admit admits browser work at the rate the machine can serve.
// Many sessions share one browser (the MCP server's clients, a board
// worker's surfers); left to run at once, their bursts of work share two
// cores fairly, so each takes as long as all of them, and sessions that
// then wait on a model all wait together while the machine idles. A Queue
// lets at most a set number of callers work at once and the others wait in
// first-come, first-served order: each burst runs at the machine's speed,
// and their ends, and so their waits, spread out.
package admit

import (
	"container/list"
	"context"
	"runtime"
	"sync"
	"time"
)

// DefaultCapacity is a good capacity for work that keeps a browser busy:
// one turn per core the Go runtime may use, and at least two (so that one
// turn waiting on the network does not idle the machine). Measured with
// "surf bench sessions --n 64" and "surf bench board" on a 2-core machine.
func DefaultCapacity() int { return max(2, runtime.GOMAXPROCS(0)) }

// Queue hands out turns: at most its capacity at once, in the order they
// were asked for. Its methods are safe for concurrent use.
type Queue struct {
	mu       sync.Mutex
	capacity int
	active   int
	waiters  list.List // of chan struct{}, closed when admitted
}

// New returns a queue of capacity turns; capacity below 1 means 1.
func New(capacity int) *Queue { return &Queue{capacity: max(1, capacity)} }

// Capacity is how many turns the queue hands out at once.
func (q *Queue) Capacity() int { return q.capacity }

// Acquire waits for a turn, until ctx ends. It returns how long it waited;
// on success the caller must call Release once done.
func (q *Queue) Acquire(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	q.mu.Lock()
	if q.active < q.capacity && q.waiters.Len() == 0 {
		q.active++
		q.mu.Unlock()
		return 0, nil
	}
	ch := make(chan struct{})
	e := q.waiters.PushBack(ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return time.Since(t0), nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	select {
	case <-ch:
		// Admitted while giving up: pass the turn on.
		q.mu.Unlock()
		q.Release()
	default:
		q.waiters.Remove(e)
		q.mu.Unlock()
	}
	return time.Since(t0), ctx.Err()
}

// Release ends a turn, handing it to the longest waiting caller.
func (q *Queue) Release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.waiters.Front(); e != nil {
		q.waiters.Remove(e)
		close(e.Value.(chan struct{})) // the turn passes on; active stays
		return
	}
	if q.active == 0 {
		panic("admit: Release without a turn")
	}
	q.active--
}

// Waiting reports how many callers wait for a turn.
func (q *Queue) Waiting() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiters.Len()
}

// Active reports how many turns are out.
func (q *Queue) Active() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active
}
