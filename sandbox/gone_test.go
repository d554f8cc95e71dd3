package sandbox

import (
	"errors"
	"fmt"
	"testing"

	"github.com/surfkit/surf/internal/cdpmux"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestBrowserGone checks the one test for a lost browser on the errors
// issue 19 saw, and on errors that are not a lost browser.
func TestBrowserGone(t *testing.T) {
	for _, c := range []struct {
		err  error
		gone bool
	}{
		{fmt.Errorf("reading the page: DOMSnapshot.captureSnapshot: %w", cdpmux.ErrClosed), true},
		{fmt.Errorf("Page.getLayoutMetrics: %w (write |1: broken pipe)", cdpmux.ErrClosed), true},
		{fmt.Errorf("opening a browser context: %w", fmt.Errorf("%w: %w", playwright.ErrPlaywright, playwright.ErrTargetClosed)), true},
		{errors.New("installing the request gate on the page: target closed"), true},
		{errors.New("Frame.Goto http://x/: Target page, context or browser has been closed"), true},
		{errors.New("Connection closed"), true},
		{nil, false},
		{errors.New("could not load \"http://x/\": Page crashed"), false},
		{errors.New("Target crashed"), false},
		{errors.New("net::ERR_CONNECTION_REFUSED at http://x/"), false},
		{errors.New("Timeout 10000ms exceeded."), false},
	} {
		if got := BrowserGone(c.err); got != c.gone {
			t.Errorf("BrowserGone(%v) = %v, want %v", c.err, got, c.gone)
		}
	}
}
