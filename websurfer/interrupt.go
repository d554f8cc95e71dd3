package websurfer

import (
	"context"
	"time"

	"github.com/chromedp/cdproto/page"
)

// Interrupting Playwright calls. Playwright's navigation and load-state
// calls take no context: left alone, a navigation to a page that never
// answers runs until its own timeout, holding the surfer (and the MCP
// session above it) long after the caller gave up. interruptible runs such
// a call so that the end of ctx ends it: the tab stops loading, which
// aborts a pending navigation and completes a pending load.
const (
	// stopEvery is how often the tab is told again to stop loading while
	// the interrupted call has not returned (a navigation may start after
	// the first stop).
	stopEvery = 100 * time.Millisecond
	// abandonAfter bounds the wait for an interrupted call to return; one
	// that still has not is abandoned (its result dropped).
	abandonAfter = 2 * time.Second
)

// interruptible runs call, a Playwright call on tab t that cannot take
// ctx, and returns its error; if ctx ends first, it stops the tab's
// loading, waits (briefly) for call to return, and returns ctx's error.
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
			s.log.Warn("an interrupted browser call did not return; abandoning it")
			return ctx.Err()
		case <-tick.C:
		}
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
