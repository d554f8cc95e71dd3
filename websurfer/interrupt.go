package websurfer

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// Interrupting Playwright calls. Playwright's navigation and load-state
// calls take no context: left alone, a navigation to a page that never
// answers runs until its own timeout, holding the surfer (and the MCP
// session above it) long after the caller gave up. interruptible and
// waitLoad run such calls so that the end of ctx ends them: the tab stops
// loading (a pending navigation is aborted, a loading document completed
// with what it has), and the call returns.
const (
	// stopEvery is how often the tab is told again to stop loading while
	// the interrupted call has not returned (a navigation may start after
	// the first stop).
	stopEvery = 100 * time.Millisecond
	// abandonAfter bounds the wait for an interrupted call to return; one
	// that still has not is abandoned (its result dropped).
	abandonAfter = 2 * time.Second
)

// interruptible runs call, a Playwright navigation on tab t that cannot
// take ctx, and returns its error; if ctx ends first, it stops the tab's
// loading, which aborts the navigation, waits (briefly) for call to
// return, and returns ctx's error.
func (s *Surfer) interruptible(ctx context.Context, t *tab, call func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	giveUp := time.NewTimer(abandonAfter)
	defer giveUp.Stop()
	tick := time.NewTicker(stopEvery)
	defer tick.Stop()
	for {
		s.stopLoading(t)
		select {
		case <-done:
			return ctx.Err()
		case <-giveUp.C:
			s.log.Warn("an interrupted navigation did not return; abandoning it")
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// waitLoad waits up to timeout for tab t's document to reach a load
// state. If ctx ends first, it stops the tab's loading and returns at
// once: the wait, which changes nothing, is abandoned (Playwright does not
// see the stopped document reach the state, so it would run out its
// timeout).
func (s *Surfer) waitLoad(ctx context.Context, t *tab, state *playwright.LoadState, timeout time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ms := float64(timeout.Milliseconds())
	done := make(chan error, 1)
	go func() {
		done <- t.page.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: state, Timeout: &ms})
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		s.stopLoading(t)
		return ctx.Err()
	}
}

// stopLoading tells the tab to stop loading (as the browser's stop button
// does): a navigation not yet committed is aborted, and a document still
// loading is completed with what has arrived.
func (s *Surfer) stopLoading(t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), stopEvery)
	defer cancel()
	if err := t.sess.Call(ctx, page.CommandStopLoading, nil, nil); err != nil {
		s.log.Debug("stopping the tab's loading", "err", err)
	}
}
