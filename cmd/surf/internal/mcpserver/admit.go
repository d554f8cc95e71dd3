package mcpserver

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultQueueTimeout bounds how long a call waits for its turn at the
// browser when Config.QueueTimeout is zero.
const DefaultQueueTimeout = 10 * time.Minute

// DefaultMaxActive is the default of Config.MaxActive: one call per core
// the Go runtime may use, and at least two (so that one call waiting on
// the network does not idle the machine). Measured with "surf bench
// sessions --n 64" on a loaded 2-core machine: two at once served every
// call; four let some navigations run out of time.
func DefaultMaxActive() int { return max(2, runtime.GOMAXPROCS(0)) }

// Keys of the timings in a tool result's _meta.
const (
	// MetaQueuedMS is how long the call waited for its turn at the
	// browser, in milliseconds.
	MetaQueuedMS = "queued_ms"
	// MetaActionMS is how long the call ran once admitted (opening the
	// session's browser context if needed, acting and observing), in
	// milliseconds.
	MetaActionMS = "action_ms"
)

// admitter admits browser work at the rate the machine can serve: at most
// capacity calls run at once, and the others wait in first-come,
// first-served order. Each session runs its calls one at a time, so a
// FIFO queue is also fair across sessions: no session waits behind two
// calls of another.
type admitter struct {
	mu       sync.Mutex
	capacity int
	active   int
	waiters  list.List // of chan struct{}, closed when admitted
}

func newAdmitter(capacity int) *admitter { return &admitter{capacity: capacity} }

// acquire waits for a turn, until ctx ends. It returns how long it waited;
// on success the caller must call release once done.
func (a *admitter) acquire(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	a.mu.Lock()
	if a.active < a.capacity && a.waiters.Len() == 0 {
		a.active++
		a.mu.Unlock()
		return 0, nil
	}
	ch := make(chan struct{})
	e := a.waiters.PushBack(ch)
	a.mu.Unlock()
	select {
	case <-ch:
		return time.Since(t0), nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	select {
	case <-ch:
		// Admitted while giving up: pass the turn on.
		a.mu.Unlock()
		a.release()
	default:
		a.waiters.Remove(e)
		a.mu.Unlock()
	}
	return time.Since(t0), ctx.Err()
}

// release ends a turn, handing it to the longest waiting call.
func (a *admitter) release() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.waiters.Front(); e != nil {
		a.waiters.Remove(e)
		close(e.Value.(chan struct{})) // the turn passes on; active stays
		return
	}
	a.active--
}

// waiting reports how many calls wait for a turn.
func (a *admitter) waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiters.Len()
}

// admits reports whether a tool's calls wait for a turn. A websurfer run
// holds its session for minutes, mostly waiting on the model: it is not
// queued as a whole.
func admits(name string) bool { return name != WebsurferTool }

// admit waits for a call's turn at the browser, for at most the queue
// timeout. On success the caller must call release once done; on failure
// res is the error result to return.
func (se *session) admit(ctx context.Context, name string) (queued time.Duration, release func(), res *mcp.CallToolResult) {
	s := se.srv
	if !admits(name) {
		return 0, func() {}, nil
	}
	qctx, cancel := context.WithTimeout(ctx, s.cfg.QueueTimeout)
	defer cancel()
	ahead := s.admit.waiting()
	queued, err := s.admit.acquire(qctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return queued, nil, errorResult(fmt.Sprintf("%s did not run: it waited %s for a turn at the browser (%d calls were ahead of it; at most %d run at once); the server is overloaded, try again later", name, s.cfg.QueueTimeout, ahead, s.cfg.MaxActive))
		}
		return queued, nil, errorResult(fmt.Sprintf("%s did not run: %v while it waited for a turn at the browser", name, err))
	}
	if queued > 0 {
		se.log.Debug("admitted", "tool", name, "queued_ms", queued.Milliseconds(), "ahead", ahead)
	}
	return queued, s.admit.release, nil
}

// timed reports a call's queue wait and action time in its result's _meta.
func timed(out *mcp.CallToolResult, queued, action time.Duration) {
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[MetaQueuedMS] = queued.Milliseconds()
	out.Meta[MetaActionMS] = action.Milliseconds()
}
