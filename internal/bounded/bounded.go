// Package bounded runs calls that may never return with a bound on how
// long the caller waits.
//
// Such a call is, say, a Playwright call the driver no longer answers once
// the browser or page is gone.
package bounded

import (
	"fmt"
	"time"
)

// Call runs f and waits at most d for it. Past that, f is abandoned (it
// goes on, and its result is dropped) and Call returns an error saying so.
func Call(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("no answer after %v", d)
	}
}
