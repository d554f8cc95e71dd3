package main

import (
	"context"

	"github.com/surfkit/surf/sandbox"
)

// retryLostBrowser runs open, and runs it once more if the browser it
// launched was gone before the session was ready (killed or crashed while
// it started): a browser that dies at that moment is no reason to fail
// the command.
func retryLostBrowser[T any](ctx context.Context, cli *CLI, open func() (T, error)) (T, error) {
	v, err := open()
	if err == nil || ctx.Err() != nil || !sandbox.BrowserGone(err) {
		return v, err
	}
	cli.Logger.Warn("the browser was lost while the session opened; trying again", "err", err)
	return open()
}
