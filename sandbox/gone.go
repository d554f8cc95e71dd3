package sandbox

import (
	"errors"
	"strings"

	"github.com/surfkit/surf/internal/cdpmux"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// BrowserGone reports whether err means the browser went away (killed,
// crashed, disconnected) rather than that one command failed: the session
// cannot go on, and a caller that can relaunches the browser. It is the
// one test for that, whichever way the error came: Playwright's driver
// (playwright.ErrTargetClosed and its messages) or surf's own DevTools
// pipe (cdpmux.ErrClosed). A page that crashed while its browser lives is
// not one of these.
func BrowserGone(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, cdpmux.ErrClosed) || errors.Is(err, playwright.ErrTargetClosed) {
		return true
	}
	// Errors whose chain was cut (cleanPlaywrightError, the driver's own
	// messages) are known by their text.
	msg := strings.ToLower(err.Error())
	for _, s := range goneMessages {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// goneMessages are lower-cased fragments of the messages Playwright and
// surf give when the browser or its connection is gone.
var goneMessages = []string{
	"target page, context or browser has been closed",
	"browser has been closed",
	"browser has disconnected",
	"target closed",
	"connection closed",
	"transport closed",
	"browser closed",
	"devtools pipe is closed",
}
