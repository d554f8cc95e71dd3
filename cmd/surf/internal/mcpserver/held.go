package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/admit"
)

// A session a person holds. While someone has taken a session over in
// the live view, the session's calls wait for the hand-back before they
// touch the browser (a visit_url must not move the page under the
// person's hands), letting their turn at the browser go, with a progress
// notification now and then; a call kept waiting longer than its own
// timeout is refused with a result that says why. After a takeover the
// next call carries the hand-back note.

// heldEvery is how often a call waiting for a hand-back reports that it
// still waits.
const heldEvery = 15 * time.Second

// waitHandBack waits, before call name drives the browser, while a person
// holds ls, at most bound. It returns the hand-back note of a takeover
// that ended since the session's last call (empty if none), whether it
// waited, and a message for a call refused because the person kept the
// browser (or ctx ended) first.
func waitHandBack(ctx context.Context, ls *live.Session, name string, bound time.Duration) (note string, waited bool, refused string) {
	if !ls.TakenOver() {
		note, _ = ls.Between(ctx) // nobody holds it: returns at once
		return note, false, ""
	}
	notify, _ := ctx.Value(notifierKey{}).(func(string))
	say := func(msg string) {
		if notify != nil {
			notify(msg)
		}
		ls.Progress(msg)
	}
	t0 := time.Now()
	say(fmt.Sprintf("waiting: a person has taken this session over in the live view; %s runs when they hand it back", name))
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	for {
		note, err := admit.Away(bctx, func() (string, error) {
			wctx, cancel := context.WithTimeout(bctx, heldEvery)
			defer cancel()
			return ls.Between(wctx)
		})
		switch {
		case err == nil:
			return note, true, ""
		case ctx.Err() != nil:
			return "", true, fmt.Sprintf("%s did not run: %v while a person held this session's browser in the live view", name, ctx.Err())
		case bctx.Err() != nil:
			return "", true, fmt.Sprintf("%s did not run: a person has held this session's browser in the live view for %s and has not handed it back; nothing was done. Try again later", name, time.Since(t0).Round(time.Second))
		}
		say(fmt.Sprintf("waiting: a person has held this session for %s; %s runs when they hand it back", time.Since(t0).Round(time.Second), name))
	}
}
