package websurfer

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
)

// An unchanged page, observed again. Observing reads the whole page and
// takes a screenshot; when nothing has happened to the page since the last
// observation (no action, no navigation, no event, and the renderer saw no
// change), that observation is still true and is handed out again, at the
// cost of one script run instead of a full read.
//
// "The renderer saw no change" is a watch surf installs in its isolated
// world of the page's document (the page cannot see it): a count of DOM
// mutations and of the events that change what is shown without one
// (scrolls of any element, input in fields, focus moving, images and
// frames loading, animations and transitions starting, details toggled,
// media playing, the window resizing), in the document and in the
// documents of its same-origin frames, plus the scroll position and the
// window's size. A page that may change its pixels with none of those
// (a canvas, a plugin, a playing video or audio, a running animation, a
// frame of another origin, whose document the watch cannot see) is never
// reused, nor is a tab with out-of-process frames. An animated GIF is the one change the watch
// misses; what it shows is drawn from the same document, and the
// observation's text is unaffected.

// watchInstall installs the watch, if it is not there yet, and returns
// its counts (a pageWatch without State).
const watchInstall = `(() => {
  let w = globalThis.__surfWatch;
  if (!w) {
    w = globalThis.__surfWatch = {n: 0, r: 0, navs: 0, docs: new WeakSet(), waiters: []};
    const bump = () => { w.n++; };
    const react = () => {
      w.n++; w.r++;
      const ws = w.waiters; w.waiters = [];
      for (const f of ws) f();
    };
    w.watch = (doc) => {
      if (w.docs.has(doc)) return;
      w.docs.add(doc);
      new MutationObserver(react).observe(doc, {subtree: true, childList: true, attributes: true, characterData: true});
      const win = doc.defaultView || doc;
      for (const ev of ['scroll', 'input', 'change', 'toggle'])
        win.addEventListener(ev, react, true);
      for (const ev of ['focusin', 'focusout', 'load', 'error', 'animationstart', 'transitionrun', 'play', 'playing', 'seeked', 'resize', 'pageshow', 'visibilitychange'])
        win.addEventListener(ev, bump, true);
    };
    w.watch(document);
    if (globalThis.navigation) navigation.addEventListener('navigate', () => { w.navs++; bump(); });
  }
  return {changes: w.n, reactions: w.r, navigations: w.navs};
})()`

// watchState returns the page's state for a count of changes: a string
// that differs once the page may have changed since the watch counted
// that many, or "" when the page must always be read anew. It also
// watches the documents of the page's same-origin frames.
const watchState = `((n) => {
  const w = globalThis.__surfWatch;
  if (!w) return '';
  // A document and its frames' documents, all watched; false if one of
  // them cannot be (another origin's) or may change unseen.
  const fine = (doc) => {
    w.watch(doc);
    if (doc.readyState !== 'complete') return false;
    if (doc.querySelector('canvas, embed, object')) return false;
    for (const m of doc.querySelectorAll('video, audio')) if (!m.paused) return false;
    if (doc.getAnimations().some(a => a.playState === 'running')) return false;
    for (const f of doc.querySelectorAll('iframe, frame')) {
      let d = null;
      try { d = f.contentDocument; } catch (e) {}
      if (!d || !fine(d)) return false;
    }
    return true;
  };
  if (!fine(document)) return '';
  return [n < 0 ? w.n : n, scrollX, scrollY, innerWidth, innerHeight, devicePixelRatio].join(',');
})`

// pageWatch is what the watch says. State is a string that changes
// whenever the page may have changed, "" when the page must always be
// read anew. Changes counts every change the watch saw, Reactions those a
// page makes when acted on (DOM mutations, scrolls, input, changed values,
// details toggled) and Navigations the navigations its document started.
type pageWatch struct {
	State       string `json:"state"`
	Changes     int    `json:"changes"`
	Reactions   int    `json:"reactions"`
	Navigations int    `json:"navigations"`
	ok          bool   // read
}

// watchRead installs the watch if needed and returns its counts with the
// page's state for them: a pageWatch.
var watchRead = fmt.Sprintf("(() => { const w = %s; w.state = %s(w.changes); return w; })()", watchInstall, watchState)

// readWatch returns tab t's watch, installing it if needed; ok is false if
// the script could not run.
//
// An observation reads it before it reads the page, and over the direct
// session when there is one, so that it runs in the renderer before the
// snapshot: a change made while the page is read then counts after the
// count the observation keeps, and the next observation reads the page
// anew. (Through Playwright's relay the script reached the renderer after
// the snapshot, whose tens of milliseconds it waited for, and a change in
// between was counted as seen.)
func (s *Surfer) readWatch(ctx context.Context, t *tab) pageWatch {
	rnav := t.rnav.Load()
	var w pageWatch
	dw, err := t.evaluateIn(ctx, t.sess, t.sess.read, watchRead, &w)
	if err != nil {
		t.watchAt = watchWorld{}
		return pageWatch{}
	}
	t.watchAt = watchWorld{dw: dw, rnav: rnav}
	w.ok = true
	return w
}

// watchWorld is the world the watch of a tab was last read in, and the
// renderer's count of the tab's navigations before that read.
type watchWorld struct {
	dw   docWorld
	rnav int64
}

// sendWatch starts reading tab t's watch, as readWatch does, and returns
// a function that waits for it. When the watch was last read in the same
// document's world (by the renderer's count of navigations, which surf may
// learn late), the script is only sent, ahead of the page's snapshot that
// the caller sends next: the renderer runs them in that order, and the
// watch's round trip is no longer waited for before the snapshot. The
// frame tree sent first tells whether the document is still the one the
// world was made for; if it is not, the watch counts as not read (the
// next observation reads it anew, the slow way). Otherwise, and without
// a direct session, the watch is read at once.
func (s *Surfer) sendWatch(ctx context.Context, t *tab) (wait func() pageWatch) {
	at := t.watchAt
	if t.sess.direct == nil || at.dw.id == 0 || at.rnav != t.rnav.Load() {
		w := s.readWatch(ctx, t)
		return func() pageWatch { return w }
	}
	fail := func() pageWatch {
		t.watchAt = watchWorld{}
		return pageWatch{}
	}
	treeWait, err := t.sess.sendDirect(ctx, page.CommandGetFrameTree, nil)
	if err != nil {
		return fail
	}
	evalWait, err := t.sess.sendDirect(ctx, runtime.CommandEvaluate, evalParams(at.dw.id, watchRead))
	if err != nil {
		return fail
	}
	return func() pageWatch {
		var tree page.GetFrameTreeResult
		var res runtime.EvaluateResult
		treeErr := treeWait(ctx, &tree)
		evalErr := evalWait(ctx, &res)
		if treeErr != nil || evalErr != nil || tree.FrameTree == nil || tree.FrameTree.Frame == nil || string(tree.FrameTree.Frame.LoaderID) != at.dw.loader {
			if evalErr != nil && contextGone(evalErr) {
				t.world.forget(t.sess, "")
			}
			return fail()
		}
		var w pageWatch
		if err := decodeRemote(res.Result, res.ExceptionDetails, &w); err != nil {
			return fail()
		}
		w.ok = true
		return w
	}
}

// readState returns the page's state now; "" if it must be read anew or
// the script could not run.
func (s *Surfer) readState(ctx context.Context, t *tab) string {
	var st string
	if err := t.evaluateRead(ctx, t.sess, watchState+"(-1)", &st); err != nil {
		return ""
	}
	return st
}

// unchanged returns the last observation again if the active tab has not
// changed since it was taken, or nil.
func (s *Surfer) unchanged(ctx context.Context) *Observation {
	o := s.last
	t := s.tabs[s.active]
	if o == nil || o.watch.State == "" || o.tab != t || int(t.nav.Load()) != o.nav || o.acts != s.acts {
		return nil
	}
	if len(o.Events) > 0 || !blockedNothing(o.Blocked) || t.outOfProcess() {
		return nil
	}
	s.evmu.Lock()
	busy := len(s.pending) > 0 || len(s.popups) > 0 || s.opening > 0
	s.evmu.Unlock()
	if busy || s.sess.HasDenials() || !slices.Equal(s.tabInfos(), o.Tabs) {
		return nil
	}
	start := time.Now()
	if s.readState(ctx, t) != o.watch.State {
		return nil
	}
	again := *o
	again.Timing = Timing{Total: time.Since(start)}
	again.Again = true
	again.taken = start
	s.last = &again
	return &again
}

// blockedNothing reports whether b says nothing was blocked.
func blockedNothing(b Blocked) bool {
	return len(b.Navigations) == 0 && b.Requests == 0 && len(b.Hosts) == 0 && b.Unrecorded == 0 && len(b.UnrecordedURLs) == 0
}

// outOfProcess reports whether the tab has frames in other processes.
func (t *tab) outOfProcess() bool {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	for _, o := range t.frames {
		if o != nil {
			return true
		}
	}
	return false
}
