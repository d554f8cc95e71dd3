package websurfer

import (
	"context"
	"fmt"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// Waiting after an action: surf gives the page a moment to start a
// navigation or requests, then waits for the navigation to load and the
// network to go quiet, each capped. There is no fixed sleep: every wait
// ends as soon as its condition holds.
const (
	settleStart = 150 * time.Millisecond // how long a reaction may take to begin
	netQuiet    = 250 * time.Millisecond // no request in flight for this long is quiet
	// loadQuiet replaces netQuiet once the document's load event has
	// fired: its own subresources are done, and what its scripts started
	// up to then is known (tabState.rendered); the window is for what
	// they start right after. It counts from the load event.
	loadQuiet = 10 * time.Millisecond
	netCap    = 3 * time.Second // the longest surf waits for quiet
	pollEvery = 5 * time.Millisecond
)

// navMark is a tab's navigation counts before an action: Playwright's
// (nav) and the renderer's (rnav).
type navMark struct{ pw, r int64 }

// mark returns the tab's navigation counts now.
func (t *tab) mark() navMark { return navMark{pw: t.nav.Load(), r: t.rnav.Load()} }

// settle waits for the effects of an action on tab t, whose navigation
// counts were before. It reports whether the tab navigated.
func (s *Surfer) settle(ctx context.Context, t *tab, before navMark) bool {
	outer := ctx
	ctx, stop := s.dialogCtx(ctx) // a page blocked in a dialog waits for its answer, not surf
	defer stop()
	deadline := time.Now().Add(s.cfg.ActionTimeout)
	start := time.Now()
	progress(ctx, "waiting for the page to settle")
	// Did anything start? A page that changed in itself (and drew it)
	// without starting a navigation has: see reacted.
	rctx, stopReact := context.WithCancel(ctx)
	react := s.reacted(rctx, t, settleStart)
	waitWhileOr(ctx, start.Add(settleStart), react, func() bool {
		return t.nav.Load() == before.pw && t.rnav.Load() == before.r && t.netIdle(0) && !s.hasPopups() && !s.windowOpening() && !s.downloading() && !t.pendingNav() && !closed(react)
	})
	stopReact()
	if ctx.Err() != nil {
		return t.nav.Load() != before.pw
	}
	navigated := t.nav.Load() != before.pw || t.rnav.Load() != before.r
	if navigated {
		remaining := time.Until(deadline)
		if remaining > 0 {
			progress(ctx, "waiting for %s to load", textcut.Bytes(t.page.URL(), 200))
			// A script asking while the page loads blocks it: the wait ends
			// when a dialog is held. It runs on the caller's ctx, which the
			// dialog does not cancel, so a held dialog does not stop the
			// page loading (waitLoad stops loading when its ctx ends).
			_ = s.unlessDialog(func() error {
				return s.waitLoad(outer, t, playwright.LoadStateDomcontentloaded, remaining)
			})
		}
	}
	quietBy := time.Now().Add(netCap)
	if quietBy.After(deadline) {
		quietBy = deadline
	}
	// A page that announced a new window (a target=_blank link, a
	// window.open) gets it: Playwright reports the popup later, the
	// busier the machine the later.
	waitWhile(ctx, quietBy, s.windowOpening)
	s.evmu.Lock()
	s.opening = 0 // one that never came is not waited for again
	s.evmu.Unlock()
	// Quiet, and no document committed but not yet parsed (an empty
	// page to observe).
	waitWhile(ctx, quietBy, func() bool {
		return t.rparsed.Load() != t.rnav.Load() || !t.netIdle(t.quietWindow()) || t.pendingNav()
	})
	// A download the action started is saved before the action reports.
	waitWhile(ctx, quietBy, s.downloading)
	s.evmu.Lock()
	s.announced = 0 // one that never came is not waited for again
	s.evmu.Unlock()
	// The renderer's events reach surf ahead of Playwright's, which move
	// the page's URL: a document the renderer saw commit is waited for
	// there too, or the step would report the old page's URL.
	if t.rnav.Load() != before.r {
		waitWhile(ctx, quietBy, func() bool { return t.nav.Load() == before.pw })
	}
	t.navAsked.Store(0)
	return t.nav.Load() != before.pw || navigated
}

// reactScript waits up to %[3]d ms for the page to react (see
// watchScript) since the watch counted %[1]d reactions and %[2]d
// navigations, then for the next animation frame; it returns "react",
// "navigate" if a navigation started, or "none".
const reactScript = `new Promise(res => {
  const w = globalThis.__surfWatch;
  if (!w) { res('none'); return; }
  let done = false;
  const fin = () => {
    if (done) return;
    done = true;
    requestAnimationFrame(() => setTimeout(() => res(w.navs !== %[2]d ? 'navigate' : 'react'), 0));
  };
  if (w.r !== %[1]d || w.navs !== %[2]d) { fin(); return; }
  w.waiters.push(fin);
  setTimeout(() => { if (!done) { done = true; res('none'); } }, %[3]d);
})`

// reacted returns a channel closed once the page of tab t has reacted to
// the action just taken in itself (a DOM change, a scroll, an input, a
// toggle) with no navigation, and has drawn a frame since: the start of
// the action's effects need not be waited for any longer. It returns nil
// (never closed) when the page's watch has no count to compare with (no
// observation of this document yet), and the channel stays open if the
// page does not react within by or ctx ends.
//
// What the reaction started by then is known when the channel closes,
// with no pause for its events to come: the script runs on the session
// whose events count the tab's requests, navigations asked for and
// windows opened (watchRenderer), and the renderer sends the events of a
// session ahead of a reply that follows them, which Playwright's relay
// passes on in order and whose Go client handles events as they come,
// before the reply. (A pause of 20 ms stood here before that was
// established; TestSettleSeesWhatAReactionStarts holds the order.) The
// script must therefore stay on t.sess, not the direct session.
func (s *Surfer) reacted(ctx context.Context, t *tab, by time.Duration) <-chan struct{} {
	o := s.last
	if o == nil || !o.watch.ok || o.tab != t || int(t.nav.Load()) != o.nav {
		return nil
	}
	expr := fmt.Sprintf(reactScript, o.watch.Reactions, o.watch.Navigations, by.Milliseconds())
	out := make(chan struct{})
	go func() {
		var kind string
		if err := t.evaluate(ctx, t.sess, expr, &kind); err != nil || kind != "react" {
			return
		}
		close(out)
	}()
	return out
}

// closed reports whether c is closed (false for nil).
func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// waitWhile polls cond until it is false, ctx ends or by passes.
func waitWhile(ctx context.Context, by time.Time, cond func() bool) {
	waitWhileOr(ctx, by, nil, cond)
}

// waitWhileOr is waitWhile that also looks at cond as soon as wake is
// closed, instead of at the next poll.
func waitWhileOr(ctx context.Context, by time.Time, wake <-chan struct{}, cond func() bool) {
	for time.Now().Before(by) && cond() {
		t := time.NewTimer(pollEvery)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			wake = nil // closed: polled from now on
		case <-t.C:
		}
		t.Stop()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// windowOpening reports whether a page announced a window that has not
// arrived as a popup yet.
func (s *Surfer) windowOpening() bool {
	s.evmu.Lock()
	defer s.evmu.Unlock()
	return s.opening > 0
}

// downloading reports whether a download was announced or is being saved.
func (s *Surfer) downloading() bool {
	s.evmu.Lock()
	defer s.evmu.Unlock()
	return s.announced > 0 || s.saving > 0
}

func (s *Surfer) hasPopups() bool {
	s.evmu.Lock()
	defer s.evmu.Unlock()
	return len(s.popups) > 0
}

// pendingNav reports whether the page asked for a navigation of its main
// frame that has neither committed nor turned into a download yet, for at
// most navAskedCap: one that ends in neither (a 204, a request the gate
// refused) is not waited for longer. Settling forgets it at its end.
func (t *tab) pendingNav() bool {
	at := t.navAsked.Load()
	return at != 0 && time.Since(time.Unix(0, at)) < navAskedCap
}

// navAskedCap bounds the wait for a navigation the page asked for.
const navAskedCap = 2 * time.Second

// quietWindow is how long the tab's network must be idle to count as
// quiet: shorter once its document has loaded, by both the renderer's
// account and Playwright's (either may be the first to see a new one).
func (t *tab) quietWindow() time.Duration {
	if t.loaded.Load() == t.nav.Load() && t.rloaded.Load() == t.rnav.Load() {
		return loadQuiet
	}
	return netQuiet
}
