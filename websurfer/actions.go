package websurfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/tools"
)

// ActionResult is what an action did, and the page after it.
type ActionResult struct {
	// Summary is one line saying what happened: "I clicked "Search"
	// (id 7); the page navigated to ...".
	Summary string
	// Observation is the page after the action; nil for stop_action and
	// for actions that end a run.
	Observation *Observation
	// Done and Answer are set by stop_action.
	Done   bool
	Answer string
	// Decisions are the policy verdicts the action passed (or failed).
	Decisions []policy.Decision
}

// Text is the result as the model reads it: the summary, then the new
// observation.
func (r *ActionResult) Text() string {
	if r.Observation == nil {
		return r.Summary
	}
	return r.Summary + "\n\n" + r.Observation.Text()
}

// Decided is a policy decision an action passed (or failed), with whether
// it was put to the approver.
type Decided struct {
	policy.Decision
	Asked  bool
	Target string
}

// Outcome is the decision in a word or two, as summaries show it:
// "allow", "approved", "denied by approval", or the verdict and its rule
// ("deny (rule)").
func (d Decided) Outcome() string {
	switch {
	case d.Asked && d.Verdict == policy.Allow:
		return "approved"
	case d.Asked:
		return "denied by approval"
	case d.Verdict == policy.Allow:
		return "allow"
	}
	return fmt.Sprintf("%s (%s)", d.Verdict, d.Rule)
}

// TakeDecisions returns the policy decisions made since the last call: one
// per gate an action went through.
func (s *Surfer) TakeDecisions() []Decided {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.decided
	s.decided = nil
	return d
}

// toolErr is an error the model gets back as a tool result (bad id,
// covered element, denied URL), as opposed to one that ends the run.
func toolErr(format string, args ...any) error { return tools.Errorf(format, args...) }

// normalizeURL applies visit_url's rules: no scheme and a space means a web
// search; no scheme otherwise means https.
func (s *Surfer) normalizeURL(raw string) (u string, search bool) {
	raw = strings.TrimSpace(raw)
	lower := strings.ToLower(raw)
	if strings.Contains(lower, "://") {
		return raw, false
	}
	for _, p := range []string{"about:", "data:", "javascript:", "file:", "blob:", "mailto:", "chrome:", "view-source:"} {
		if strings.HasPrefix(lower, p) {
			return raw, false
		}
	}
	if strings.ContainsAny(raw, " \t") {
		return s.searchURL(raw), true
	}
	return "https://" + raw, false
}

func (s *Surfer) searchURL(q string) string {
	return strings.Replace(s.cfg.SearchURL, "%s", url.QueryEscape(q), 1)
}

// VisitURL opens a URL in the active tab.
func (s *Surfer) VisitURL(ctx context.Context, raw string) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		u, search := s.normalizeURL(raw)
		if u == "" || u == "https://" {
			return nil, toolErr("visit_url needs a URL")
		}
		tool := "visit_url"
		if search {
			tool = "web_search"
		}
		return s.navigate(ctx, t, tool, u)
	})
}

// WebSearch searches the web with the configured engine.
func (s *Surfer) WebSearch(ctx context.Context, query string) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		if strings.TrimSpace(query) == "" {
			return nil, toolErr("web_search needs a query")
		}
		return s.navigate(ctx, t, "web_search", s.searchURL(query))
	})
}

// navigate is the step of visit_url and web_search: the URL gated, then
// loaded in t.
func (s *Surfer) navigate(ctx context.Context, t *tab, tool, u string) (*outcome, error) {
	d, err := s.gateURL(ctx, tool, u, t.page.URL())
	if err != nil {
		return nil, err
	}
	return s.load(ctx, t, d, func() string {
		return fmt.Sprintf("I opened %s; the page is %s at %s", q(d.URL, 200), q(pageTitle(ctx, t), 100), q(t.page.URL(), 200))
	})
}

// load ends the step of a navigation: it loads the URL of d, which allowed
// it, in t. describe makes the summary once the page settled, so that it
// names the page as it is then.
func (s *Surfer) load(ctx context.Context, t *tab, d policy.Decision, describe func() string) (*outcome, error) {
	before := t.mark()
	status, err := s.gotoURL(ctx, t, d.URL)
	if err != nil {
		return nil, err
	}
	o := settled(t, before, reportNothing, "", d)
	o.describe = func() string {
		if status != "" {
			return describe() + "; the server answered " + status
		}
		return describe()
	}
	return o, nil
}

// gotoURL loads a URL; a page that fails to load is a tool error. A page
// that loads with an HTTP error status returns it as "HTTP 404 (Not
// Found)", which the step's summary gives the model: a browser may show
// an error's page, or (Chromium's headless shell, see
// sandbox.FrameOnDemand) an empty one, and the model should not take
// either for the page it asked for.
func (s *Surfer) gotoURL(ctx context.Context, t *tab, u string) (status string, err error) {
	progress(ctx, "loading %s", textcut.Bytes(u, 200))
	ms := float64(s.cfg.ActionTimeout.Milliseconds())
	err = s.interruptible(ctx, t, func() error {
		resp, err := t.page.Goto(u, playwright.PageGotoOptions{Timeout: &ms, WaitUntil: playwright.WaitUntilStateCommit})
		if err == nil && resp != nil {
			status = httpError(resp.Status())
		}
		return err
	})
	if err != nil {
		if err := endsRun(ctx, err); err != nil {
			return "", err
		}
		msg := shortErr(err)
		if strings.Contains(msg, "net::ERR_") && !strings.Contains(msg, "net::ERR_ABORTED") {
			// Chromium commits its error page a moment after the failure
			// is reported; a navigation started before that commit
			// would be interrupted by it.
			s.awaitErrorPage(ctx, t)
		}
		return "", toolErr("could not load %s: %s", q(u, 200), msg)
	}
	return status, nil
}

// httpError describes an HTTP error status ("" below 400) by its code
// and the standard reason phrase, never the server's own (page-controlled
// text stays out of the summary, which the model trusts).
func httpError(code int) string {
	if code < 400 || code > 599 {
		return ""
	}
	if text := http.StatusText(code); text != "" {
		return fmt.Sprintf("HTTP %d (%s)", code, text)
	}
	return fmt.Sprintf("HTTP %d", code)
}

// errorPageWait bounds the wait for Chromium's error page after a failed
// navigation.
const errorPageWait = 2 * time.Second

// awaitErrorPage waits until the tab shows Chromium's error page (or, if
// none comes, for errorPageWait).
func (s *Surfer) awaitErrorPage(ctx context.Context, t *tab) {
	deadline := time.Now().Add(errorPageWait)
	for time.Now().Before(deadline) && !t.page.IsClosed() {
		if strings.HasPrefix(t.page.MainFrame().URL(), "chrome-error:") {
			return
		}
		if !sleepCtx(ctx, pollEvery) {
			return
		}
	}
}

// HistoryBack goes back in the tab's own history. In a tab with no history
// that was opened by another (a popup), it closes the tab and returns to
// the opener.
func (s *Surfer) HistoryBack(ctx context.Context) (*ActionResult, error) {
	return s.walkHistory(ctx, -1)
}

// HistoryForward goes forward in the tab's history.
func (s *Surfer) HistoryForward(ctx context.Context) (*ActionResult, error) {
	return s.walkHistory(ctx, 1)
}

func (s *Surfer) walkHistory(ctx context.Context, dir int) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) { return s.walk(ctx, t, dir) })
}

// walk is the step of history_back (dir -1) and history_forward (1).
func (s *Surfer) walk(ctx context.Context, t *tab, dir int) (*outcome, error) {
	st := &t.state
	st.mu.Lock()
	pos := st.hist.pos + dir
	var target string
	if pos >= 0 && pos < len(st.hist.urls) {
		target = st.hist.urls[pos]
	}
	st.mu.Unlock()
	if target == "" {
		if dir < 0 && t.opener != nil {
			idx := s.indexOf(t.opener)
			if idx >= 0 {
				from := t.page.URL()
				s.closeTab(t)
				s.active = s.indexOf(t.opener)
				s.front()
				return &outcome{summary: fmt.Sprintf("this tab had no earlier page, so I closed it (%s) and went back to tab %d, which opened it", q(from, 200), s.active)}, nil
			}
		}
		if dir < 0 {
			return nil, toolErr("there is no earlier page in this tab's history")
		}
		return nil, toolErr("there is no later page in this tab's history")
	}
	d, err := s.gateURL(ctx, map[int]string{-1: "history_back", 1: "history_forward"}[dir], target, "")
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.hist.walking = true
	st.mu.Unlock()
	before := t.mark()
	_, err = s.gotoURL(ctx, t, target)
	st.mu.Lock()
	st.hist.walking = false
	if err == nil {
		st.hist.pos = pos
	}
	st.mu.Unlock()
	if err != nil {
		return nil, err
	}
	o := settled(t, before, reportNothing, "", d)
	o.describe = func() string {
		return fmt.Sprintf("I went %s to %s", map[int]string{-1: "back", 1: "forward"}[dir], q(t.page.URL(), 200))
	}
	return o, nil
}

// RefreshPage reloads the active tab.
func (s *Surfer) RefreshPage(ctx context.Context) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		before := t.mark()
		progress(ctx, "reloading %s", textcut.Bytes(t.page.URL(), 200))
		ms := float64(s.cfg.ActionTimeout.Milliseconds())
		err := s.interruptible(ctx, t, func() error {
			_, err := t.page.Reload(playwright.PageReloadOptions{Timeout: &ms, WaitUntil: playwright.WaitUntilStateCommit})
			return err
		})
		if err != nil {
			return nil, pageErr(ctx, err, "could not reload the page: %s")
		}
		o := settled(t, before, reportNothing, "")
		o.describe = func() string { return fmt.Sprintf("I reloaded %s", q(t.page.URL(), 200)) }
		return o, nil
	})
}

// pageOverlap is how much of the old view page_up/page_down keep.
const pageOverlap = 50

// PageDown scrolls the page down by one viewport, less a small overlap.
func (s *Surfer) PageDown(ctx context.Context) (*ActionResult, error) { return s.scrollPage(ctx, 0, 1) }

// PageUp scrolls the page up by one viewport, less a small overlap.
func (s *Surfer) PageUp(ctx context.Context) (*ActionResult, error) { return s.scrollPage(ctx, 0, -1) }

// scrollPage scrolls the page by one viewport, less a small overlap, in a
// direction: dx -1 left, 1 right; dy -1 up, 1 down (one of them 0).
func (s *Surfer) scrollPage(ctx context.Context, dx, dy int) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		var pos struct{ Before, After float64 }
		expr := fmt.Sprintf(`(() => { const b = scrollX + scrollY; scrollBy({left: %d * Math.max(innerWidth - %d, 1), top: %d * Math.max(innerHeight - %d, 1), behavior: 'instant'}); return {Before: b, After: scrollX + scrollY}; })()`, dx, pageOverlap, dy, pageOverlap)
		word := scrollWord(dx, dy)
		if err := t.evaluate(ctx, t.sess, expr, &pos); err != nil {
			return nil, pageErr(ctx, err, "could not scroll the page: %s")
		}
		if pos.Before == pos.After {
			return nil, toolErr("the page cannot scroll %s any further", word)
		}
		return settled(t, t.mark(), reportNothing, fmt.Sprintf("I scrolled the page %s by %d pixels", word, int(abs(pos.After-pos.Before)))), nil
	})
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// ScrollElement scrolls an element's content with the mouse wheel over it,
// so inner scroll containers scroll (dir -1 up, 1 down).
func (s *Surfer) ScrollElement(ctx context.Context, id, dir int) (*ActionResult, error) {
	return s.scrollElement(ctx, id, 0, dir)
}

// scrollElement turns the mouse wheel over an element: dx -1 left, 1
// right; dy -1 up, 1 down (one of them 0), by most of its visible size.
func (s *Surfer) scrollElement(ctx context.Context, id, dx, dy int) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, onScreen: true}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		step := max(r.vis.H*0.8, 40)
		if dx != 0 {
			step = max(r.vis.W*0.8, 40)
		}
		if dx != 0 && t.sess.frames != nil {
			// Frames on demand: Chromium 156's headless shell leaves a
			// begin frame pending for ever after a sideways wheel over a
			// scroller (every later frame of the tab is refused), so the
			// scroller the wheel would turn is scrolled by script.
			var moved float64
			if err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, scrollSidewaysJS, []any{float64(dx) * step}, &moved); err != nil {
				return nil, pageErr(ctx, err, "could not scroll the element: %s")
			}
			return settled(t, t.mark(), reportNothing, fmt.Sprintf("I scrolled %s %d pixels over %s (id %d)", scrollWord(dx, dy), int(abs(moved)), q(r.el.Name, 60), id)), nil
		}
		if err := t.page.Mouse().Move(r.clickX, r.clickY); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		if err := t.page.Mouse().Wheel(float64(dx)*step, float64(dy)*step); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		return settled(t, t.mark(), reportNothing, fmt.Sprintf("I scrolled %s %d pixels with the mouse wheel over %s (id %d)", scrollWord(dx, dy), int(step), q(r.el.Name, 60), id)), nil
	})
}

// scrollSidewaysJS scrolls, by its argument in pixels, the element or its
// nearest ancestor (across shadow roots) that can scroll that way, as a
// wheel turned over it would, else the document; it returns how far it
// scrolled.
const scrollSidewaysJS = `function(dx) {
  const can = e => {
    const o = getComputedStyle(e).overflowX;
    if (!/auto|scroll|overlay/.test(o) || e.scrollWidth <= e.clientWidth) return false;
    return dx > 0 ? e.scrollLeft < e.scrollWidth - e.clientWidth : e.scrollLeft > 0;
  };
  let e = this.nodeType === 1 ? this : this.parentElement;
  while (e && !can(e)) e = e.parentElement || (e.getRootNode() instanceof ShadowRoot ? e.getRootNode().host : null);
  e = e || document.scrollingElement || document.documentElement;
  const before = e.scrollLeft;
  e.scrollBy({left: dx, behavior: 'instant'});
  return e.scrollLeft - before;
}`

// Click clicks an element at its visible centre, after checking nothing
// covers that point. A link is checked against the policy first. A click
// that opens a new tab switches to it.
func (s *Surfer) Click(ctx context.Context, id int) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, tool: "click", link: true, reach: true}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		before := t.mark()
		if err := s.unlessDialog(func() error { return t.page.Mouse().Click(r.clickX, r.clickY) }); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		return settled(t, before, reportNewTabURL, fmt.Sprintf("I clicked %s %s (id %d)", r.el.Role, q(r.el.Name, 80), id)), nil
	})
}

// reachable checks that an on-screen element can take the pointer at its
// click point now: it is on screen and nothing covers it. The browser
// hit-tests the point, through out-of-process frames.
func (s *Surfer) reachable(ctx context.Context, r *elementRef) error {
	el := r.el
	switch el.Where {
	case Above, Below, Left, Right, Clipped:
		return tools.NewError(offscreenError(el))
	}
	hit, src, err := s.hitTest(ctx, r)
	if err != nil {
		if isGone(err) {
			return err
		}
		return toolErr("could not check element %d: %s", el.ID, shortErr(err))
	}
	if !hitsElement(hit, r) {
		// The click point is not free (a clip-path, a partial cover):
		// another point of the element may be.
		if found, err := s.movePointToFree(ctx, r); err != nil || found {
			return err
		}
	}
	if hit == nil && el.Where == Covered && el.CoveredBy != "" {
		// What the browser found is not in the snapshot: a modal
		// dialog's backdrop, which the observation reported.
		return tools.NewError(&CoveredError{ID: el.ID, Role: el.Role, Name: el.Name, By: el.CoveredBy, ByID: el.CoverID})
	}
	if hit == nil {
		return tools.NewError(&CoveredError{ID: el.ID, Role: el.Role, Name: el.Name, Unseen: true})
	}
	if hit.IsDescendantOf(r.node) || perception.Reaches(hit, r.node) {
		return nil
	}
	listed := map[*snapNode]*Element{}
	for _, ref := range s.last.refs {
		listed[ref.node] = ref.el
	}
	owner := perception.CoverOwner(hit, listed)
	_ = src
	return tools.NewError(&CoveredError{ID: el.ID, Role: el.Role, Name: el.Name, By: perception.DescribeCover(owner, listed), ByID: perception.CoverID(owner, listed)})
}

// hitTest asks the browser which node is at an element's click point, in
// the session of the element's frame (checking on the way that the frame
// itself is not covered). It returns the node as known to the observation
// snapshot, or nil for a node the snapshot did not have.
func (s *Surfer) hitTest(ctx context.Context, r *elementRef) (*snapNode, *frameSnap, error) {
	return s.hitTestAt(ctx, r, r.clickX, r.clickY)
}

// hitTestAt is hitTest at another point of the viewport.
func (s *Surfer) hitTestAt(ctx context.Context, r *elementRef, px, py float64) (*snapNode, *frameSnap, error) {
	// Outer frames first: each iframe on the way must be on top.
	var chain []*frameSnap
	for fs := r.src; fs != nil; fs = fs.Parent {
		chain = append([]*frameSnap{fs}, chain...)
	}
	for i, fs := range chain {
		x, y := fs.Snap.HitPoint(px, py) // the frame hit-tests in its own CSS pixels
		no := false
		res, err := cdp.Call(ctx, sessOf(fs), dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IncludeUserAgentShadowDOM: &no, IgnorePointerEventsNone: &no})
		if err != nil {
			return nil, fs, err
		}
		hit := perception.FindBackend(fs.Snap, res.BackendNodeID)
		if i < len(chain)-1 {
			next := chain[i+1].Owner
			if hit != next {
				return hit, fs, nil
			}
			continue
		}
		return hit, fs, nil
	}
	return nil, nil, nil
}

// InputText types into a field: it focuses it, clears it unless told not
// to, types the text and presses Enter unless told not to. Secret
// placeholders are replaced with their values on the secret's own hosts.
func (s *Surfer) InputText(ctx context.Context, id int, text string, pressEnter, deleteExisting bool) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, tool: "input_text"}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		return s.inputText(ctx, t, r, text, pressEnter, deleteExisting)
	})
}

// inputText is the step of input_text.
func (s *Surfer) inputText(ctx context.Context, t *tab, r *elementRef, text string, pressEnter, deleteExisting bool) (*outcome, error) {
	if policy.HasPlaceholder(text) {
		// The secret's hosts are checked against the origin of the
		// element's own frame, and the value is set into that element
		// only (secretinput.go).
		real, err := s.secretTarget(ctx, t, r, text)
		if err != nil {
			return nil, err
		}
		s.rememberSecretField(r) // images mask it
		return s.inputSecret(ctx, t, r, text, real, pressEnter, deleteExisting)
	}
	if e := notEditable(r.el); e != nil {
		return nil, tools.NewError(e)
	}
	if r.el.Tag == "input" && setValueTypes[r.el.InputType] {
		return s.fillValue(ctx, t, r, text, pressEnter)
	}
	if err := s.focus(ctx, t, r); err != nil {
		return nil, err
	}
	// A page can move the focus as soon as the element takes it; keys
	// would then go to another element, or another frame.
	if ok, err := s.focused(ctx, t, r); err != nil {
		return nil, err
	} else if !ok {
		return nil, focusMovedErr(r, "as soon as surf focused it; nothing was typed")
	}
	kb := t.page.Keyboard()
	if deleteExisting {
		if err := kb.Press("ControlOrMeta+A"); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		if err := kb.Press("Delete"); err != nil {
			return nil, s.inputErr(ctx, err)
		}
	} else {
		// Focus may leave the caret anywhere; appending means the end.
		end := "End"
		if r.el.Tag != "input" {
			end = "ControlOrMeta+End"
		}
		if err := kb.Press(end); err != nil {
			return nil, s.inputErr(ctx, err)
		}
	}
	if text != "" {
		var err error
		if len(text) <= 200 {
			err = kb.Type(text)
		} else {
			err = kb.InsertText(text)
		}
		if err != nil {
			return nil, s.inputErr(ctx, err)
		}
	}
	// Keys typed after a page moved the focus went elsewhere; Enter would
	// too, so it is not pressed then.
	kept, err := s.focused(ctx, t, r)
	if err != nil {
		return nil, err
	}
	note := ""
	if !kept {
		note = "; the page moved the keyboard focus away from it while I typed, so part of the text may have gone elsewhere"
		if pressEnter {
			note += ", and I did not press Enter"
		}
	}
	return s.typed(ctx, t, r, text, pressEnter && kept, note)
}

// setValueTypes are the input types whose value input_text sets rather
// than types, as Playwright's Fill does: their fields are segments in the
// order of the browser's locale (a date is mm/dd/yyyy or dd.mm.yyyy), so
// keys would land in the wrong segments, while the value they take is in
// one format everywhere (2027-09-14, 13:45, 2027-09-14T13:45, 2027-09,
// 2027-W37, 50, #ff0000).
var setValueTypes = map[string]bool{
	"date": true, "time": true, "datetime-local": true, "month": true, "week": true,
	"range": true, "color": true,
}

// valueFormats is the format of each setValueTypes type, for the model.
var valueFormats = map[string]string{
	"date": "YYYY-MM-DD, such as 2027-09-14", "time": "HH:MM, such as 13:45",
	"datetime-local": "YYYY-MM-DDTHH:MM, such as 2027-09-14T13:45", "month": "YYYY-MM, such as 2027-09",
	"week": "YYYY-Www, such as 2027-W37", "range": "a number", "color": "#rrggbb, such as #ff8800",
}

// setValue sets the value of an input of a setValueTypes type the way
// Playwright's Fill does, in surf's own script world: focus, the native
// setter, then input and change as a user's edit fires. A value the input
// does not take (a malformed date) comes back as an error and leaves the
// field as it was.
const setValue = `function (value) {
  if (!this.isConnected) return {error: 'gone'};
  if (this.disabled || this.readOnly) return {error: 'readonly'};
  const setter = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
  const old = this.value;
  value = value.trim();
  this.focus();
  setter.call(this, value);
  if (value !== '' && this.value === '' && this.type !== 'range' && this.type !== 'color') {
    setter.call(this, old);
    return {error: 'malformed'};
  }
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {value: this.value, focused: document.hasFocus() && this.matches(':focus-within')};
}`

// fillValue is input_text into an input of a setValueTypes type (see
// setValue); the text replaces the value.
func (s *Surfer) fillValue(ctx context.Context, t *tab, r *elementRef, text string, pressEnter bool) (*outcome, error) {
	var res struct {
		Error   string
		Value   string
		Focused bool
	}
	if err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, setValue, []any{text}, &res); err != nil {
		if browserGone(err) || ctx.Err() != nil {
			return nil, errors.Join(ctx.Err(), err)
		}
		return nil, toolErr("could not set element %d: %s", r.el.ID, shortErr(err))
	}
	typ := r.el.InputType
	switch res.Error {
	case "":
	case "malformed":
		return nil, toolErr("element %d is a %s field and does not take %s; write it as %s", r.el.ID, typ, q(text, 60), valueFormats[typ])
	case "readonly":
		return nil, tools.NewError(&NotEditableError{ID: r.el.ID, Role: r.el.Role, Name: r.el.Name, Readonly: true})
	case "gone":
		return nil, toolErr("element %d is no longer in the page; observe again", r.el.ID)
	default:
		return nil, toolErr("could not set element %d: %s", r.el.ID, res.Error)
	}
	note := ""
	if res.Value != strings.TrimSpace(text) {
		note = fmt.Sprintf("; the field holds %s", q(res.Value, 60))
	}
	if !res.Focused && pressEnter {
		note += "; the page moved the keyboard focus away from it, so I did not press Enter"
	}
	return s.typed(ctx, t, r, text, pressEnter && res.Focused, note)
}

// typed ends input_text: it presses Enter if asked and says what was
// typed where, with note added (what the page did to the focus).
func (s *Surfer) typed(ctx context.Context, t *tab, r *elementRef, text string, pressEnter bool, note string) (*outcome, error) {
	kb := t.page.Keyboard()
	before := t.mark()
	if pressEnter {
		if err := s.unlessDialog(func() error { return kb.Press("Enter") }); err != nil {
			return nil, s.inputErr(ctx, err)
		}
	}
	shown := q(text, 80)
	if r.el.InputType == "password" {
		shown = "the password"
	}
	summary := fmt.Sprintf("I typed %s into %s %s (id %d)", shown, r.el.Role, q(r.el.Name, 60), r.el.ID)
	if pressEnter {
		summary += " and pressed Enter"
	}
	return settled(t, before, reportNewTab, summary+note), nil
}

// focus puts the keyboard focus on an element: through the DOM, or by
// clicking it when the DOM cannot.
func (s *Surfer) focus(ctx context.Context, t *tab, r *elementRef) error {
	err := r.sess().Call(ctx, dom.CommandFocus, dom.FocusParams{BackendNodeID: r.backend}, nil)
	if err == nil {
		return nil
	}
	if isGone(err) {
		return err
	}
	if err := s.reachable(ctx, r); err != nil {
		return err
	}
	if err := t.page.Mouse().Click(r.clickX, r.clickY); err != nil {
		return s.inputErr(ctx, err)
	}
	return nil
}

// Hover moves the mouse over an element.
func (s *Surfer) Hover(ctx context.Context, id int) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, reach: true}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		if err := t.page.Mouse().Move(r.clickX, r.clickY); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		return settled(t, t.mark(), reportNothing, fmt.Sprintf("I moved the mouse over %s %s (id %d)", r.el.Role, q(r.el.Name, 80), id)), nil
	})
}

// selectNative picks options of a <select> by their visible labels: each
// exact, then ignoring case, then the value, then by contained text. A
// single select takes one label; a multi-select ends with exactly the
// options named selected (none for no labels). It fires input and change
// like a user's choice, without opening the native popup (which would
// close at once under automation).
const selectNative = `function ({labels}) {
  if (this.tagName !== 'SELECT') return {error: 'not a select'};
  if (this.disabled) return {error: 'the select is disabled'};
  const opts = Array.from(this.options);
  const norm = s => s.replace(/\s+/g, ' ').trim();
  const names = opts.map(x => norm(x.label || x.text));
  if (!this.multiple && labels.length !== 1) return {error: 'single', options: names};
  const chosen = [];
  for (const label of labels) {
    const want = norm(label);
    const o = opts.find(x => norm(x.label || x.text) === want)
         || opts.find(x => norm(x.label || x.text).toLowerCase() === want.toLowerCase())
         || opts.find(x => norm(x.value) === want)
         || opts.find(x => norm(x.label || x.text).toLowerCase().includes(want.toLowerCase()));
    if (!o) return {error: 'no option', missing: label, options: names};
    if (o.disabled) return {error: 'the option ' + JSON.stringify(want) + ' is disabled'};
    if (!chosen.includes(o)) chosen.push(o);
  }
  if (this.multiple) {
    for (const o of opts) o.selected = chosen.includes(o);
  } else {
    this.value = chosen[0].value;
    chosen[0].selected = true;
  }
  this.dispatchEvent(new Event('input', {bubbles: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {chosen: chosen.map(o => norm(o.label || o.text))};
}`

// SelectOption chooses an option by its visible label in a native <select>
// or an ARIA combobox/listbox. In a multi-select, the option becomes the
// only one selected (see SelectOptions).
func (s *Surfer) SelectOption(ctx context.Context, id int, option string) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, tool: "select_option"}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		if r.el.Tag == "select" {
			return s.chooseNative(ctx, t, r, []string{option})
		}
		return s.selectARIA(ctx, t, r, option)
	})
}

// SelectOptions sets the selection of a native multi-select to exactly the
// options with the labels given (none clears it). An ARIA list takes one
// option at a time.
func (s *Surfer) SelectOptions(ctx context.Context, id int, options []string) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, tool: "select_option"}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		if r.el.Tag == "select" {
			return s.chooseNative(ctx, t, r, options)
		}
		if len(options) != 1 {
			return nil, toolErr("element %d takes one option at a time: give option, not options", id)
		}
		return s.selectARIA(ctx, t, r, options[0])
	})
}

// chooseNative chooses in a native <select> (see selectNative).
func (s *Surfer) chooseNative(ctx context.Context, t *tab, r *elementRef, options []string) (*outcome, error) {
	id := r.el.ID
	var res struct {
		Error   string
		Missing string
		Chosen  []string
		Options []string
	}
	if options == nil {
		options = []string{}
	}
	// In an object: the protocol's encoder (JSON v2, omitempty) drops an
	// argument that is an empty array.
	arg := map[string]any{"labels": options}
	if err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, selectNative, []any{arg}, &res); err != nil {
		if browserGone(err) {
			return nil, err
		}
		return nil, toolErr("could not choose in element %d: %s", id, shortErr(err))
	}
	switch {
	case res.Error == "no option":
		return nil, toolErr("element %d %s has no option %s; its options are %s", id, q(r.el.Name, 60), q(res.Missing, 60), quoteList(res.Options, 20))
	case res.Error == "single":
		return nil, toolErr("element %d %s allows one choice: give one option; its options are %s", id, q(r.el.Name, 60), quoteList(res.Options, 20))
	case res.Error != "":
		return nil, toolErr("could not choose in element %d: %s", id, res.Error)
	}
	if len(res.Chosen) == 1 && len(options) == 1 && !r.el.Multiple {
		return settled(t, t.mark(), reportNothing, chose(res.Chosen[0], r)), nil
	}
	what := "nothing selected"
	if len(res.Chosen) > 0 {
		what = "exactly " + quoteList(res.Chosen, 20) + " selected"
	}
	return settled(t, t.mark(), reportNothing, fmt.Sprintf("I left %s in %s %s (id %d)", what, r.el.Role, q(r.el.Name, 60), id)), nil
}

// chose is the summary of select_option.
func chose(option string, r *elementRef) string {
	return fmt.Sprintf("I chose %s in %s %s (id %d)", q(option, 60), r.el.Role, q(r.el.Name, 60), r.el.ID)
}

// selectARIA opens an ARIA combobox or listbox if needed, then clicks the
// option with the label.
func (s *Surfer) selectARIA(ctx context.Context, t *tab, r *elementRef, option string) (*outcome, error) {
	id := r.el.ID
	switch r.el.Role {
	case "combobox", "listbox", "button", "textbox", "searchbox":
	default:
		return nil, toolErr("element %d is a %s, not a select, combobox or listbox", id, r.el.Role)
	}
	if r.el.Role != "listbox" && r.el.Expanded != "true" {
		if err := s.reachable(ctx, r); err != nil {
			return nil, err
		}
		if err := t.page.Mouse().Click(r.clickX, r.clickY); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		s.settle(ctx, t, t.mark())
	}
	obs, err := s.observe(ctx)
	if err != nil {
		return nil, err
	}
	want := strings.ToLower(strings.Join(strings.Fields(option), " "))
	var best *Element
	var names []string
	for i := range obs.Elements {
		e := &obs.Elements[i]
		if e.Role != "option" && e.Role != "menuitem" && e.Role != "menuitemradio" && e.Role != "treeitem" {
			continue
		}
		names = append(names, e.Name)
		n := strings.ToLower(e.Name)
		if n == want {
			best = e
			break
		}
		if best == nil && strings.Contains(n, want) {
			best = e
		}
	}
	if best == nil {
		if len(names) == 0 {
			return nil, toolErr("element %d showed no options after opening it", id)
		}
		return nil, toolErr("element %d has no option %s; the options shown are %s", id, q(option, 60), quoteList(names, 20))
	}
	or, err := s.target(best.ID)
	if err != nil {
		return nil, err
	}
	if err := s.reachable(ctx, or); err != nil {
		return nil, err
	}
	before := t.mark()
	if err := t.page.Mouse().Click(or.clickX, or.clickY); err != nil {
		return nil, s.inputErr(ctx, err)
	}
	return settled(t, before, reportNothing, chose(best.Name, r)), nil
}

func quoteList(list []string, n int) string { return perception.QuoteJoin(list, n, 40, ", ") }

// Keypress presses keys one after another; a chord is written with "+",
// such as "Control+A". Key names are Playwright's (Enter, Tab, ArrowDown,
// Escape, PageDown, ...).
func (s *Surfer) Keypress(ctx context.Context, keys []string) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		if len(keys) == 0 {
			return nil, toolErr("keypress needs at least one key")
		}
		before := t.mark()
		for i, k := range keys {
			if strings.TrimSpace(k) == "" {
				return nil, toolErr("key %d is empty", i+1)
			}
			if err := s.unlessDialog(func() error { return t.page.Keyboard().Press(k) }); err != nil {
				if i == 0 {
					return nil, pageErr(ctx, err, "could not press %s: %s", q(k, 40))
				}
				return nil, pageErr(ctx, err, "pressed %s, then could not press %s: %s", quoteList(keys[:i], 10), q(k, 40))
			}
			if s.pendingDialog() != nil {
				keys = keys[:i+1] // the page waits in a dialog: the rest would land in it
				break
			}
		}
		return settled(t, before, reportNewTab, "I pressed "+quoteList(keys, 10)), nil
	})
}

// UploadFile puts a file from the session's uploads directory into a file
// input (or the file chooser an element opens).
func (s *Surfer) UploadFile(ctx context.Context, id int, path string) (*ActionResult, error) {
	return s.onElement(ctx, aim{id: id, tool: "upload_file"}, func(ctx context.Context, t *tab, r *elementRef) (*outcome, error) {
		return s.upload(ctx, t, r, path)
	})
}

// upload is the step of upload_file.
func (s *Surfer) upload(ctx context.Context, t *tab, r *elementRef, path string) (*outcome, error) {
	id := r.el.ID
	file, err := s.uploadPath(path)
	if err != nil {
		return nil, err
	}
	// The browser may run in an OS sandbox that cannot see the uploads
	// directory: the session stages a copy where it can.
	staged, err := s.sess.StageUpload(file)
	if err != nil {
		return nil, toolErr("could not prepare the upload: %v", err)
	}
	if r.el.Tag == "input" && r.el.InputType == "file" {
		err = r.sess().Call(ctx, dom.CommandSetFileInputFiles, dom.SetFileInputFilesParams{Files: []string{staged}, BackendNodeID: r.backend}, nil)
		if err != nil {
			if isGone(err) {
				return nil, err
			}
			return nil, toolErr("could not set the file on element %d: %s", id, shortErr(err))
		}
	} else {
		if err := s.reachable(ctx, r); err != nil {
			return nil, err
		}
		ms := float64(3000)
		fc, err := t.page.ExpectFileChooser(func() error { return t.page.Mouse().Click(r.clickX, r.clickY) }, playwright.PageExpectFileChooserOptions{Timeout: &ms})
		if err != nil {
			return nil, toolErr("element %d is not a file input and clicking it opened no file chooser", id)
		}
		if err := fc.SetFiles(staged); err != nil {
			return nil, toolErr("could not set the file: %s", shortErr(err))
		}
	}
	return settled(t, t.mark(), reportNothing, fmt.Sprintf("I uploaded %s into %s %s (id %d)", q(filepath.Base(file), 80), r.el.Role, q(r.el.Name, 60), id)), nil
}

// uploadPath resolves a path the model gave inside the uploads directory,
// refusing anything that leads out of it (.., absolute paths, symlinks).
func (s *Surfer) uploadPath(p string) (string, error) {
	dir := s.sess.Info().UploadsDir
	if dir == "" {
		return "", toolErr("uploads are not enabled for this session")
	}
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", toolErr("the uploads directory is unavailable")
	}
	clean := filepath.Clean(p)
	if !filepath.IsAbs(clean) && (clean == ".." || strings.HasPrefix(clean, ".."+string(filepath.Separator))) {
		return "", toolErr("%s is outside the uploads directory; give a path inside it", q(p, 120))
	}
	if filepath.IsAbs(clean) {
		rel, err := filepath.Rel(root, clean)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if rel2, err2 := filepath.Rel(dir, clean); err2 == nil && !strings.HasPrefix(rel2, "..") {
				clean = rel2
			} else {
				return "", toolErr("%s is outside the uploads directory; give a path inside it", q(p, 120))
			}
		} else {
			clean = rel
		}
	}
	full := filepath.Join(root, clean)
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", toolErr("there is no file %s in the uploads directory", q(p, 120))
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", toolErr("%s is outside the uploads directory; give a path inside it", q(p, 120))
	}
	fi, err := os.Stat(real)
	if err != nil || !fi.Mode().IsRegular() {
		return "", toolErr("%s is not a file", q(p, 120))
	}
	return real, nil
}

// CreateTab opens a new tab on a URL and makes it active.
func (s *Surfer) CreateTab(ctx context.Context, raw string) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, _ *tab) (*outcome, error) {
		u, _ := s.normalizeURL(raw)
		d, err := s.gateURL(ctx, "create_tab", u, "")
		if err != nil {
			return nil, err
		}
		t, err := s.openTab(ctx)
		if err != nil {
			return nil, err
		}
		return s.load(ctx, t, d, func() string { return fmt.Sprintf("I opened tab %d on %s", s.active, q(t.page.URL(), 200)) })
	})
}

// openTab opens a blank tab and makes it active.
func (s *Surfer) openTab(ctx context.Context) (*tab, error) {
	if len(s.tabs) >= maxTabs {
		return nil, toolErr("there are already %d tabs; close one first", len(s.tabs))
	}
	page, err := s.sess.NewPage(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	t, err := s.newTab(ctx, page)
	if err != nil {
		page.Close()
		return nil, err
	}
	s.tabs = append(s.tabs, t)
	s.active = len(s.tabs) - 1
	s.front()
	return t, nil
}

// front makes the active tab the visible one: a hidden tab renders no
// frames, so its screenshot would never come.
func (s *Surfer) front() {
	if s.active < len(s.tabs) {
		_ = s.tabs[s.active].page.BringToFront()
	}
}

// maxTabs bounds the tabs of a session.
const maxTabs = 20

// SwitchTab makes tab i (counted from 0) active.
func (s *Surfer) SwitchTab(ctx context.Context, i int) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, _ *tab) (*outcome, error) {
		if err := s.checkTab(i); err != nil {
			return nil, err
		}
		s.active = i
		s.front()
		return &outcome{summary: fmt.Sprintf("I switched to tab %d (%s)", i, q(s.tabs[i].page.URL(), 200))}, nil
	})
}

// CloseTab closes tab i; the one before it (or the first) becomes active.
func (s *Surfer) CloseTab(ctx context.Context, i int) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, _ *tab) (*outcome, error) {
		if err := s.checkTab(i); err != nil {
			return nil, err
		}
		if len(s.tabs) == 1 {
			return nil, toolErr("tab %d is the only tab; it cannot be closed", i)
		}
		u := s.tabs[i].page.URL()
		s.closeTab(s.tabs[i])
		s.front()
		return &outcome{summary: fmt.Sprintf("I closed tab %d (%s); tab %d is active", i, q(u, 200), s.active)}, nil
	})
}

// checkTab refuses a tab number that is not a tab's.
func (s *Surfer) checkTab(i int) error {
	if i < 0 || i >= len(s.tabs) {
		return toolErr("there is no tab %d; tabs are numbered 0-%d", i, len(s.tabs)-1)
	}
	return nil
}

// closeTab closes a tab and picks the active one.
func (s *Surfer) closeTab(t *tab) {
	i := s.indexOf(t)
	if i < 0 {
		return
	}
	t.detachFrames()
	t.sess.Detach()
	_ = t.page.Close()
	s.tabs = append(s.tabs[:i], s.tabs[i+1:]...)
	for _, o := range s.tabs {
		if o.opener == t {
			o.opener = nil
		}
	}
	switch {
	case s.active > i:
		s.active--
	case s.active == i:
		s.active = max(i-1, 0)
	}
}

func (s *Surfer) indexOf(t *tab) int {
	for i, x := range s.tabs {
		if x == t {
			return i
		}
	}
	return -1
}

// adoptPopups turns pages the browser opened (window.open, target=_blank)
// into tabs. With activate, the newest becomes active. It returns how many
// it adopted.
func (s *Surfer) adoptPopups(ctx context.Context, activate bool) int {
	s.evmu.Lock()
	pages := s.popups
	s.popups = nil
	s.evmu.Unlock()
	n := 0
	for _, p := range pages {
		if p.IsClosed() {
			continue
		}
		if len(s.tabs) >= maxTabs {
			_ = p.Close()
			s.pushEvent(Event{Kind: "new_tab", Message: fmt.Sprintf("a page tried to open %s in a new tab; closed, there are already %d tabs", q(p.URL(), 200), maxTabs)})
			continue
		}
		t, err := s.newTab(ctx, p)
		if err != nil {
			s.log.Debug("adopting a popup", "err", err)
			continue
		}
		if op, err := p.Opener(); err == nil && op != nil {
			for _, o := range s.tabs {
				if o.page == op {
					t.opener = o
				}
			}
		}
		// Let its first load begin before it is observed. Until its
		// first document commits, a popup has no URL at all (not even
		// about:blank), and its initial empty document counts as loaded.
		ms := float64(s.cfg.ActionTimeout.Milliseconds())
		deadline := time.Now().Add(s.cfg.ActionTimeout)
		for p.URL() == "" && !p.IsClosed() && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		_ = p.WaitForLoadState(playwright.PageWaitForLoadStateOptions{State: playwright.LoadStateDomcontentloaded, Timeout: &ms})
		st := &t.state
		st.mu.Lock()
		st.hist.push(p.URL())
		st.mu.Unlock()
		s.tabs = append(s.tabs, t)
		n++
		s.pushEvent(Event{Kind: "new_tab", Message: fmt.Sprintf("tab %d opened: %s", len(s.tabs)-1, q(p.URL(), 200)), URL: p.URL()})
		if activate {
			s.active = len(s.tabs) - 1
			s.front()
		}
	}
	return n
}

// Sleep waits, for pages that change on their own.
func (s *Surfer) Sleep(ctx context.Context, seconds float64) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, _ *tab) (*outcome, error) {
		if seconds <= 0 || seconds > 30 {
			return nil, toolErr("sleep takes 0 to 30 seconds, not %g", seconds)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(seconds * float64(time.Second))):
		}
		return &outcome{summary: fmt.Sprintf("I waited %g seconds", seconds)}, nil
	})
}

// StopAction ends the task with an answer.
func (s *Surfer) StopAction(answer string) *ActionResult {
	return &ActionResult{Summary: "I finished with the answer: " + answer, Done: true, Answer: answer}
}

// pageErr sorts an error of a call into the page: the run or the browser
// gone ends the run; anything else goes back to the model, as format with
// the error's first line as its last argument.
func pageErr(ctx context.Context, err error, format string, args ...any) error {
	if browserGone(err) || ctx.Err() != nil {
		return errors.Join(ctx.Err(), err)
	}
	return toolErr(format, append(args, shortErr(err))...)
}

// inputErr sorts an error of a mouse or keyboard call: the browser gone
// ends the run, anything else goes back to the model.
func (s *Surfer) inputErr(ctx context.Context, err error) error {
	if err := endsRun(ctx, err); err != nil {
		return err
	}
	return toolErr("%s", shortErr(err))
}

// endsRun returns the error that ends the run after a call into the
// browser failed with err: the run's own (its ctx ended) or err if the
// browser is gone; nil when the model is to hear of err instead.
func endsRun(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if browserGone(err) {
		return err
	}
	return nil
}

// browserGone reports errors after which the session cannot go on: the
// browser is gone (see sandbox.BrowserGone, the one test for it).
func browserGone(err error) bool { return sandbox.BrowserGone(err) }

// shortErr is the first line of a Playwright error, without its call log.
func shortErr(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "\nCall log:"); i >= 0 {
		msg = msg[:i]
	}
	msg = textcut.FirstLine(msg)
	// "Frame.Goto URL: playwright: net::ERR_..." says the URL twice.
	if i := strings.Index(msg, "playwright: "); i >= 0 {
		msg = msg[i+len("playwright: "):]
	}
	return textcut.Bytes(msg, 300)
}

// pageTitle is the title of t's document, "" if the page does not say
// (a dialog blocks it, ctx ended first, the page was closed).
func pageTitle(ctx context.Context, t *tab) string {
	if t.held.Load() {
		return "" // the page answers nothing while a dialog is open
	}
	// Title takes no context: a page that never yields would hold it
	// forever (until the watchdog closes the page, see hang.go).
	title, err := callPage(ctx, t.page.Title)
	if err != nil {
		return ""
	}
	return title
}
