package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/admit"
)

// DefaultQueueTimeout bounds how long a call waits for its turn at the
// browser when Config.QueueTimeout is zero.
const DefaultQueueTimeout = 10 * time.Minute

// DefaultMaxActive is the default of Config.MaxActive: one call per core
// the Go runtime may use, and at least two (admit.DefaultCapacity).
// Measured with "surf bench sessions --n 64" on a loaded 2-core machine:
// two at once served every call; four let some navigations run out of
// time.
func DefaultMaxActive() int { return admit.DefaultCapacity() }

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

// admit waits for a call's turn at the browser, for at most the queue
// timeout. On success the caller must Drop the turn once done, and pass
// it on in the call's context (admit.WithTurn): a call that waits on the
// model or a person lets it go meanwhile (package away). A websurfer run
// holds its session for minutes, mostly waiting on the model, so it holds
// the turn only while it drives the browser. On failure res is the error
// result to return.
func (se *session) admit(ctx context.Context, name string) (queued time.Duration, turn *admit.Turn, res *mcp.CallToolResult) {
	s := se.srv
	qctx, cancel := context.WithTimeout(ctx, s.cfg.QueueTimeout)
	defer cancel()
	ahead := s.admit.Waiting()
	turn = s.admit.Turn()
	queued, err := turn.Take(qctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return queued, nil, errorResult(fmt.Sprintf("%s did not run: it waited %s for a turn at the browser (%d calls were ahead of it; at most %d run at once); the server is overloaded, try again later", name, s.cfg.QueueTimeout, ahead, s.cfg.MaxActive))
		}
		return queued, nil, errorResult(fmt.Sprintf("%s did not run: %v while it waited for a turn at the browser", name, err))
	}
	if queued > 0 {
		se.log.Debug("admitted", "tool", name, "queued_ms", queued.Milliseconds(), "ahead", ahead)
	}
	return queued, turn, nil
}

// timed reports a call's queue wait and action time in its result's _meta.
func timed(out *mcp.CallToolResult, queued, action time.Duration) {
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[MetaQueuedMS] = queued.Milliseconds()
	out.Meta[MetaActionMS] = action.Milliseconds()
}
