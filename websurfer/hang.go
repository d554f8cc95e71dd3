package websurfer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/tools"
)

// Pages that never yield. A page whose script never returns to the event
// loop (while(true){}, for(;;)alert()) answers no command: Playwright's
// calls into it (Title, Content, the mouse and the keyboard, ...) take no
// context and would wait forever, holding the surfer, the session daemon
// and the MCP call above it. So every call into the page (an action, an
// observation, a read) runs under a watchdog: it asks the renderer a
// trivial question while the call runs, and a renderer that leaves it
// unanswered for Config.HangTimeout (or for a moment once the call's
// context has ended, or the surfer began to close) is hung. Its page is closed, which makes every call
// still waiting on it return, the call gets a tool error saying the page
// is not responding, and the tab is replaced by a blank one in the same
// browser context, as a crashed tab is (renewCrashed).

// DefaultHangTimeout is Config.HangTimeout's default: long enough for a
// busy renderer on a loaded machine, short enough to be within an MCP
// call's timeout.
const DefaultHangTimeout = 10 * time.Second

const (
	// probeAfter is how long a call into the page runs before the
	// watchdog first asks the renderer whether it answers, and the pause
	// between two of its questions: most calls end before it asks.
	probeAfter = time.Second
	// hungGrace is how long past the end of the call's context an
	// unanswered question makes the page hung.
	hungGrace = 2 * time.Second
)

// ErrNotResponding is the error (within a tool error) of a call whose page
// stopped responding; its tab was replaced.
var ErrNotResponding = errors.New("the page is not responding")

// hungDetail is what the model hears of a page that stopped responding,
// after "the page is not responding".
func hungDetail(i int, url string) string {
	return fmt.Sprintf(" (a script on it keeps the browser busy, or opens dialogs without end): tab %d (%s) was closed and replaced by a blank tab in the same session (cookies kept); visit a page to go on", i, q(url, 200))
}

// guard watches tab t while a call into it runs: the call's calls into the
// page must end with ctx, and a page that stops answering is declared hung
// (see above). The returned stop ends the watch; it reports whether t was
// declared hung meanwhile.
func (s *Surfer) guard(ctx context.Context, t *tab) (stop func() bool) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		s.watchdog(ctx, t, done)
	}()
	return func() bool {
		close(done)
		<-finished
		return t.isHung()
	}
}

// watchdog asks t's renderer a trivial question every probeAfter until
// done is closed, and declares t hung when a question stays unanswered
// for Config.HangTimeout, or for hungGrace once ctx ended or the surfer
// began to close.
func (s *Surfer) watchdog(ctx context.Context, t *tab, done <-chan struct{}) {
	wait := time.NewTimer(probeAfter)
	defer wait.Stop()
	ended, quit := ctx.Done(), s.quit
	over := false // ctx ended or the surfer is closing
	for {
		select {
		case <-done:
			return
		case <-ended:
			ended, over = nil, true
			continue
		case <-quit:
			quit, over = nil, true
			continue
		case <-wait.C:
		}
		if t.held.Load() || t.isHung() || t.page.IsClosed() {
			// A page blocked in a dialog surf holds for the model
			// answers nothing and is not hung.
			wait.Reset(probeAfter)
			continue
		}
		answered := make(chan error, 1)
		go func() {
			pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.HangTimeout)
			defer cancel()
			answered <- t.sess.Call(pctx, "Runtime.evaluate", map[string]any{"expression": "0", "silent": true}, nil)
		}()
		var late <-chan time.Time
		if over {
			late = time.After(hungGrace)
		}
	probing:
		for {
			select {
			case <-done:
				if !over && ctx.Err() == nil {
					return
				}
				if late == nil {
					over, late = true, time.After(hungGrace)
				}
				// The call ended with its context while the page
				// left a question unanswered: wait out the grace, so
				// that a hung page is replaced now, not by the next
				// call.
				done = nil
			case <-ended:
				ended, over, late = nil, true, time.After(hungGrace)
			case <-quit:
				quit, over, late = nil, true, time.After(hungGrace)
			case <-late:
				// The call outlived its context (or the surfer) and
				// the page answers nothing: it is what holds the call.
				s.hang(t, fmt.Sprintf("no answer %s after the call's end", hungGrace))
				return
			case err := <-answered:
				if errors.Is(err, context.DeadlineExceeded) && !t.held.Load() {
					s.hang(t, fmt.Sprintf("no answer within %s", s.cfg.HangTimeout))
					return
				}
				if done == nil {
					return
				}
				break probing
			}
		}
		wait.Reset(probeAfter)
	}
}

// guarded runs f, a call into tab t, under guard: if t stops responding
// meanwhile, the tab is replaced and the result is the tool error saying
// so. The caller holds s.mu.
func guarded[T any](ctx context.Context, s *Surfer, t *tab, f func() (T, error)) (T, error) {
	stop := s.guard(ctx, t)
	v, err := f()
	if stop() {
		var zero T
		return zero, s.hungErr(ctx, t)
	}
	return v, err
}

// callPage runs f, a Playwright call into a page that takes no context,
// and returns its result, or ctx's error as soon as ctx ends: f is then
// abandoned, and returns once the page answers or is closed.
func callPage[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	if err := ctx.Err(); err != nil {
		var zero T
		return zero, err
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// isHung reports whether t was declared hung.
func (t *tab) isHung() bool {
	t.state.mu.Lock()
	defer t.state.mu.Unlock()
	return t.state.hung
}

// hang declares t hung and closes its page: every call still waiting on
// the page then returns (with an error), and the next call into the
// surfer replaces the tab (renewCrashed).
func (s *Surfer) hang(t *tab, why string) {
	st := &t.state
	st.mu.Lock()
	if st.hung {
		st.mu.Unlock()
		return
	}
	st.hung = true
	st.mu.Unlock()
	s.log.Warn("the page is not responding; closing it", "url", t.page.URL(), "why", why)
	go func() {
		if err := bounded.Call(cleanupWait, func() error { return t.page.Close() }); err != nil {
			s.log.Warn("closing a page that is not responding", "err", err)
		}
	}()
}

// hungErr is the tool error of a call whose tab t was declared hung, after
// the tab was replaced (the caller holds s.mu). The call's own error, if
// any, is only a consequence of the page being closed under it.
func (s *Surfer) hungErr(ctx context.Context, t *tab) error {
	i, url := s.indexOf(t), t.page.URL()
	if s.gone.Load() {
		// The surfer is closing: no new tab.
		return tools.Errorf("%w: surf is closing", ErrNotResponding)
	}
	if err := s.renewCrashed(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("%w; replacing its tab: %w", ErrNotResponding, err)
	}
	return tools.Errorf("%w%s", ErrNotResponding, hungDetail(max(i, 0), url))
}
