package websurfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
)

// The live view: a person watching a session (Screencast), taking it over
// (Input, while a run waits in RunOptions.Between or request_help), and
// what the session is doing (Activity, Where).

// Activity is what a surfer is doing, for a live view's list of sessions.
type Activity string

// Activities.
const (
	// ActivityIdle: no run is going on.
	ActivityIdle Activity = "idle"
	// ActivityWorking: a run is observing or acting.
	ActivityWorking Activity = "working"
	// ActivityModel: a run waits for the model's reply.
	ActivityModel Activity = "waiting_for_model"
	// ActivityApproval: an action waits for Config.Approver's answer.
	ActivityApproval Activity = "waiting_for_approval"
	// ActivityTakenOver: a run is paused for a person (RunOptions.Between
	// or request_help's Config.Human).
	ActivityTakenOver Activity = "taken_over"
)

// activity is the surfer's Activity and the URL and title of the tab the
// live view shows; readable without the surfer's lock.
type activity struct {
	now   atomic.Value // Activity
	shown atomic.Pointer[shownTab]
}

// shownTab is the active tab as last published.
type shownTab struct {
	t   *tab
	idx int
}

// Activity reports what the surfer is doing now. It never blocks.
func (s *Surfer) Activity() Activity {
	if a, ok := s.act.now.Load().(Activity); ok {
		return a
	}
	return ActivityIdle
}

// setActivity sets the activity and returns a function that restores the
// one before.
func (s *Surfer) setActivity(a Activity) (restore func()) {
	prev := s.Activity()
	s.act.now.Store(a)
	return func() { s.act.now.Store(prev) }
}

// publish makes the active tab the one the live view shows. The caller
// holds s.mu.
func (s *Surfer) publish() {
	if len(s.tabs) == 0 {
		return
	}
	t := s.tabs[s.active]
	if t.title != "" {
		t.seenTitle.Store(t.title)
	}
	s.act.shown.Store(&shownTab{t: t, idx: s.active})
}

// unlockPublish publishes the active tab and unlocks s.mu.
func (s *Surfer) unlockPublish() {
	s.publish()
	s.mu.Unlock()
}

// Where returns the URL and title of the active tab as they are now (what
// a person's navigation changed included), redacted like observations.
// It is cheap and safe to call while a run is going on: it takes no lock
// the run holds, and waits for the page at most a moment (a page blocked
// in a dialog gives the title last observed).
func (s *Surfer) Where() (url, title string) {
	sh := s.act.shown.Load()
	if sh == nil {
		return "", ""
	}
	t := sh.t
	url = t.page.URL()
	title = t.liveTitle()
	return s.pol.Redact(url), s.pol.Redact(title)
}

// liveTitle is the page's title as the browser reports it for the tab
// (Target.getTargetInfo: answered by the browser, so a busy page cannot
// hold it up), else the title last read.
func (t *tab) liveTitle() string {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := cdp.Call(ctx, t.sess, target.GetTargetInfo, target.GetTargetInfoParams{})
	if err == nil && res.TargetInfo != nil {
		t.seenTitle.Store(res.TargetInfo.Title)
		return res.TargetInfo.Title
	}
	s, _ := t.seenTitle.Load().(string)
	return s
}

// ScreencastOptions configures Screencast. Every zero value is a default.
type ScreencastOptions struct {
	// Quality is the frames' JPEG quality, 1 to 100; zero means 60.
	Quality int
	// MaxWidth and MaxHeight bound a frame's size in pixels; zero means
	// the viewport's.
	MaxWidth, MaxHeight int
	// EveryNthFrame sends one frame of every n the page paints; zero
	// means every frame.
	EveryNthFrame int
}

// Frame is one frame of a screencast.
type Frame struct {
	// JPEG is the image.
	JPEG []byte
	// Width and Height are the image's size in pixels.
	Width, Height int
	// ViewportWidth and ViewportHeight are the size of the viewport the
	// frame shows, in CSS pixels: InputEvent coordinates are in these.
	ViewportWidth, ViewportHeight float64
	// URL is the tab's URL, redacted like observations.
	URL string
	// Tab is the tab's position in the tab list.
	Tab int
	// At is when the frame arrived.
	At time.Time
}

// caster is the surfer's one screencast, shared by every Screencast call.
type caster struct {
	mu       sync.Mutex
	watchers map[int]func(Frame)
	next     int
	stop     func()        // ends the loop; nil when none runs
	done     chan struct{} // closed when the loop has stopped
	started  atomic.Int64  // Page.startScreencast calls, for tests
	kicks    atomic.Int64  // of them, starts again after no frame came
}

// Screencast streams the active tab's frames to frame until ctx ends:
// Chromium's screencast (Page.startScreencast) on the tab, every frame
// acknowledged after frame returns, following the active tab when the
// agent (or a person) switches tabs or opens one. When ctx ends the
// screencast stops (Page.stopScreencast), unless another call still
// watches: concurrent calls share one screencast, which runs with the
// options of the call that started it, and each gets every frame. When
// nobody calls Screencast nothing is started.
//
// frame runs on the screencast's goroutine, one frame at a time: it
// should return quickly (a slow one only slows the frames down). It
// returns nil when ctx ends, ErrClosed when the surfer closes first, and
// an error for bad options.
func (s *Surfer) Screencast(ctx context.Context, o ScreencastOptions, frame func(Frame)) error {
	if frame == nil {
		return errors.New("websurfer: Screencast needs a frame function")
	}
	if err := o.check(); err != nil {
		return err
	}
	if s.gone.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil
	}
	c := &s.cast
	c.mu.Lock()
	if c.watchers == nil {
		c.watchers = map[int]func(Frame){}
	}
	c.next++
	id := c.next
	c.watchers[id] = frame
	if c.stop == nil {
		lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		done := make(chan struct{})
		c.stop, c.done = cancel, done
		go s.castLoop(lctx, o.withDefaults(s), done)
	}
	done := c.done
	c.mu.Unlock()

	var err error
	select {
	case <-ctx.Done():
	case <-done: // the surfer closed
		err = ErrClosed
	}
	c.mu.Lock()
	delete(c.watchers, id)
	var wait chan struct{}
	if len(c.watchers) == 0 && c.stop != nil {
		c.stop()
		wait = c.done
		c.stop, c.done = nil, nil
	}
	c.mu.Unlock()
	if wait != nil {
		<-wait
	}
	return err
}

// stopCast ends the screencast (the surfer is closing).
func (s *Surfer) stopCast() {
	c := &s.cast
	c.mu.Lock()
	stop, done := c.stop, c.done
	c.stop, c.done = nil, nil
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (o ScreencastOptions) check() error {
	switch {
	case o.Quality < 0 || o.Quality > 100:
		return fmt.Errorf("websurfer: screencast quality %d is not between 1 and 100", o.Quality)
	case o.MaxWidth < 0 || o.MaxWidth > 7680 || o.MaxHeight < 0 || o.MaxHeight > 4320:
		return fmt.Errorf("websurfer: screencast size %dx%d is not within 7680x4320", o.MaxWidth, o.MaxHeight)
	case o.EveryNthFrame < 0 || o.EveryNthFrame > 60:
		return fmt.Errorf("websurfer: screencast EveryNthFrame %d is not between 1 and 60", o.EveryNthFrame)
	}
	return nil
}

func (o ScreencastOptions) withDefaults(s *Surfer) ScreencastOptions {
	if o.Quality == 0 {
		o.Quality = 60
	}
	vp := s.sess.Info().Viewport
	if o.MaxWidth == 0 {
		o.MaxWidth = vp.Width
	}
	if o.MaxHeight == 0 {
		o.MaxHeight = vp.Height
	}
	if o.EveryNthFrame == 0 {
		o.EveryNthFrame = 1
	}
	return o
}

// castPoll is how often the screencast checks which tab is active.
const castPoll = 100 * time.Millisecond

// castLoop runs the screencast until ctx ends, on the published active
// tab.
func (s *Surfer) castLoop(ctx context.Context, o ScreencastOptions, done chan struct{}) {
	defer close(done)
	// A watched tab whose frames are on demand gets them: the screencast
	// sends the frames the page draws.
	s.pump.hold()
	defer s.pump.release()
	var (
		cur    *shownTab
		events <-chan jsonv2.Value
		unsub  func()
	)
	stopOn := func() {
		if cur == nil {
			return
		}
		unsub()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_, err := cdp.Call(sctx, cur.t.sess, page.StopScreencast, cdp.Empty{})
		cancel()
		if err != nil && !isGone(err) {
			s.log.Debug("stopping the screencast", "err", err)
		}
		cur, events, unsub = nil, nil, nil
	}
	defer stopOn()
	q := int64(o.Quality)
	params := page.StartScreencastParams{Format: page.StartScreencastFormatJpeg, Quality: &q,
		MaxWidth: int64(o.MaxWidth), MaxHeight: int64(o.MaxHeight), EveryNthFrame: int64(o.EveryNthFrame)}
	tick := time.NewTicker(castPoll)
	defer tick.Stop()
	var failed *tab // the tab the screencast last failed to start on
	// Chromium sends a screencast frame when the page paints (and one
	// when the screencast starts), but a start that races a navigation's
	// change of renderer, or a busy machine, can leave a screencast that
	// sends nothing on a page that then never paints again: the viewer
	// would wait for a first frame forever. While the screencast on the
	// tab has sent no frame, the loop takes one itself after castKick
	// and starts the screencast again, waiting longer each time.
	var (
		framed   bool // the screencast on cur has sent a frame
		kicked   bool // the screencast was stopped to be started again
		kickAt   time.Time
		kickWait time.Duration
	)
	for {
		if s.gone.Load() {
			return
		}
		if s.Activity() == ActivityTakenOver {
			s.adoptHumanTabs(ctx)
		}
		if sh := s.act.shown.Load(); sh != nil && (cur == nil || sh.t != cur.t) && sh.t != failed {
			stopOn()
			ch, cancel := sh.t.sess.Subscribe("Page.screencastFrame")
			if kicked {
				s.cast.kicks.Add(1)
			} else {
				s.cast.started.Add(1)
			}
			kicked = false
			// Bounded, as every call of the loop: a start that does not
			// answer must not hold the loop (and its kicks) for ever.
			sctx, scancel := context.WithTimeout(ctx, castCallPatience)
			_, err := cdp.Call(sctx, sh.t.sess, page.StartScreencast, params)
			scancel()
			switch {
			case err != nil && ctx.Err() != nil:
				cancel()
				return
			case err != nil && isGone(err):
				cancel()
				s.log.Debug("starting the screencast", "err", err)
				failed = sh.t
			default:
				if err != nil {
					// frames are taken by the loop until the screencast
					// sends some
					s.log.Debug("starting the screencast", "err", err)
				}
				cur, events, unsub, failed = sh, ch, cancel, nil
				if castSilent.Load() { // tests: a screencast that sends nothing
					events = nil
				}
				if framed || kickWait == 0 {
					kickWait = castKick
				}
				framed, kickAt = false, time.Now().Add(kickWait)
			}
		} else if sh != nil && cur != nil && sh.idx != cur.idx {
			cur = &shownTab{t: cur.t, idx: sh.idx} // the same tab, moved in the list
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if cur != nil && !framed && time.Now().After(kickAt) {
				if f, err := s.castFrameNow(ctx, cur, o); err != nil {
					s.log.Debug("taking a live frame", "err", err)
				} else if f.JPEG != nil {
					s.deliver(f)
				}
				kickWait = min(2*kickWait, castKickMax)
				stopOn() // and started again on the next turn
				kicked = true
			}
		case v, ok := <-events:
			if !ok { // the tab's session ended
				cur, events, unsub = nil, nil, nil
				continue
			}
			var ev page.EventScreencastFrame
			if err := jsonv2.Unmarshal(v, &ev); err != nil {
				s.log.Debug("a screencast frame does not decode", "err", err)
				continue
			}
			f := Frame{JPEG: ev.Data, URL: s.pol.Redact(cur.t.page.URL()), Tab: cur.idx, At: time.Now()}
			if m := ev.Metadata; m != nil {
				f.ViewportWidth, f.ViewportHeight = m.DeviceWidth, m.DeviceHeight
			}
			if s.hasSecrets() {
				// As every image surf hands out: what shows a secret
				// (or text a person typed) is painted over. A frame
				// that cannot be masked is dropped.
				mctx, mcancel := context.WithTimeout(ctx, castCallPatience)
				masked, err := s.maskNow(mctx, cur.t, ev.Data, o.Quality)
				mcancel()
				if err != nil {
					s.log.Debug("dropping a screencast frame that cannot be masked", "err", err)
					f.JPEG = nil
				} else {
					f.JPEG = masked
				}
			}
			if f.JPEG != nil {
				f.Width, f.Height = jpegSize(f.JPEG)
				s.deliver(f)
			}
			framed = true
			actx, acancel := context.WithTimeout(ctx, castCallPatience)
			if _, err := cdp.Call(actx, cur.t.sess, page.ScreencastFrameAck, page.ScreencastFrameAckParams{SessionID: ev.SessionID}); err != nil && ctx.Err() == nil {
				s.log.Debug("acknowledging a screencast frame", "err", err)
			}
			acancel()
		}
	}
}

// castKick is how long a screencast that has sent no frame runs before
// the loop takes a frame itself and starts it again; the wait doubles up
// to castKickMax while none comes.
const (
	castKick    = time.Second
	castKickMax = 8 * time.Second
)

// castCallPatience bounds each call the screencast loop makes into the
// page.
const castCallPatience = 5 * time.Second

// castSilent makes every screencast send nothing (tests).
var castSilent atomic.Bool

// castFrameNow takes a frame of t as the screencast would send it: the
// viewport, within the screencast's size, masked like every frame.
func (s *Surfer) castFrameNow(ctx context.Context, t *shownTab, o ScreencastOptions) (Frame, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var m page.GetLayoutMetricsResult
	if err := t.t.sess.Call(ctx, page.CommandGetLayoutMetrics, nil, &m); err != nil {
		return Frame{}, fmt.Errorf("reading the viewport: %w", err)
	}
	vp := m.CSSVisualViewport
	if vp == nil || vp.ClientWidth <= 0 || vp.ClientHeight <= 0 {
		return Frame{}, errors.New("reading the viewport: no visual viewport")
	}
	scale := min(1, float64(o.MaxWidth)/vp.ClientWidth, float64(o.MaxHeight)/vp.ClientHeight)
	q := int64(o.Quality)
	yes := true
	var res screenshotResult
	if err := t.t.sess.Call(ctx, page.CommandCaptureScreenshot, page.CaptureScreenshotParams{
		Format:      page.CaptureScreenshotFormatJpeg,
		Quality:     &q,
		FromSurface: &yes,
		Clip:        &page.Viewport{X: vp.PageX, Y: vp.PageY, Width: vp.ClientWidth, Height: vp.ClientHeight, Scale: scale},
	}, &res); err != nil {
		return Frame{}, fmt.Errorf("taking a screenshot: %w", err)
	}
	f := Frame{JPEG: res.data, URL: s.pol.Redact(t.t.page.URL()), Tab: t.idx, At: time.Now(),
		ViewportWidth: vp.ClientWidth, ViewportHeight: vp.ClientHeight}
	if s.hasSecrets() {
		masked, err := s.maskNow(ctx, t.t, res.data, o.Quality)
		if err != nil {
			return Frame{}, fmt.Errorf("masking secrets: %w", err)
		}
		f.JPEG = masked
	}
	f.Width, f.Height = jpegSize(f.JPEG)
	return f, nil
}

// jpegSize reads a JPEG's size from its header.
func jpegSize(b []byte) (w, h int) {
	c, err := jpeg.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return 0, 0
	}
	return c.Width, c.Height
}

// deliver hands a frame to every watcher.
func (s *Surfer) deliver(f Frame) {
	s.cast.mu.Lock()
	fs := make([]func(Frame), 0, len(s.cast.watchers))
	for _, w := range s.cast.watchers {
		fs = append(fs, w)
	}
	s.cast.mu.Unlock()
	for _, w := range fs {
		w(f)
	}
}

// adoptHumanTabs makes a tab a person's input opened (during a takeover)
// the active one, so the live view follows it. It does nothing when the
// surfer is busy.
func (s *Surfer) adoptHumanTabs(ctx context.Context) {
	s.evmu.Lock()
	n := len(s.popups)
	s.evmu.Unlock()
	if n == 0 || !s.mu.TryLock() {
		return
	}
	defer s.unlockPublish()
	if !s.closed {
		s.adoptPopups(ctx, true)
	}
}

// redactTyped redacts what a person typed into the session (Input).
func (s *Surfer) redactTyped(text string) string { return s.red.Load().Redact(text) }

// InputEvent is one input event from a person, in the active tab.
type InputEvent struct {
	// Kind is one of "mouse_move", "mouse_down", "mouse_up", "click",
	// "wheel", "key_down", "key_up", "type".
	Kind string `json:"kind"`
	// X and Y are where, in CSS pixels of the viewport, for the mouse
	// kinds.
	X float64 `json:"x,omitempty"`
	Y float64 `json:"y,omitempty"`
	// Button is "left" (the default), "middle" or "right".
	Button string `json:"button,omitempty"`
	// Clicks is the click count (2 for a double click); zero means 1.
	Clicks int `json:"clicks,omitempty"`
	// DeltaX and DeltaY scroll, for "wheel", in CSS pixels.
	DeltaX float64 `json:"delta_x,omitempty"`
	DeltaY float64 `json:"delta_y,omitempty"`
	// Key and Code are the DOM key and code values ("a", "KeyA";
	// "Enter", "Enter"), for "key_down" and "key_up".
	Key  string `json:"key,omitempty"`
	Code string `json:"code,omitempty"`
	// Text is what a key_down types, or the text "type" inserts.
	Text string `json:"text,omitempty"`
	// Modifiers: Alt=1, Ctrl=2, Meta=4, Shift=8.
	Modifiers int `json:"modifiers,omitempty"`
}

// MaxInputText bounds InputEvent.Text.
const MaxInputText = 4 << 10

// Input dispatches one event from a person to the active tab (CDP
// Input.dispatchMouseEvent, dispatchKeyEvent, insertText), for a live
// view's takeover. A bad event is an error and dispatches nothing.
// Everything the event causes passes the policy gate like the agent's
// actions: the sandbox enforces every request, and a blocked navigation is
// reported to sandbox.Session.OnDenial's subscribers and in the next
// observation.
//
// Text typed through Input ("type", and key_down events with Text) is
// added to the session's redaction set (sandbox.Session.Redactions) before
// it reaches the page: it never reaches the journal, a HAR recording, a
// model request or a report, and images mask fields that hold it. Runs of
// fewer than policy.MinRedacted characters are not redacted.
//
// With frames on demand (sandbox.FrameOnDemand) Input draws the tab's
// frames while the event is dispatched: the browser answers a wheel event
// only once a frame has handled it. What the event sets off over later
// frames (a smooth scroll) plays out as a watcher's screencast or the
// surfer's next step draws them.
func (s *Surfer) Input(ctx context.Context, e InputEvent) error {
	if s.gone.Load() {
		return ErrClosed
	}
	if err := e.check(s.sess.Info().Viewport.Width, s.sess.Info().Viewport.Height); err != nil {
		return err
	}
	sh := s.act.shown.Load()
	if sh == nil {
		return errors.New("websurfer: no tab to send input to")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	red := s.red.Load()
	sess := sh.t.sess
	if sess.frames != nil {
		defer s.HoldFrames()() // see above: frames on demand
	}
	s.inputs.Add(1)
	mods := int64(e.Modifiers)
	mouse := func(typ input.DispatchMouseEventType, button input.MouseButton, clicks int64) error {
		if typ == input.DispatchMouseEventTypeMouseWheel {
			// Both deltas are required, zeros included (which the typed
			// parameters would leave out).
			return sess.Call(ctx, input.CommandDispatchMouseEvent, map[string]any{"type": typ, "x": e.X, "y": e.Y,
				"modifiers": mods, "deltaX": e.DeltaX, "deltaY": e.DeltaY}, nil)
		}
		p := input.DispatchMouseEventParams{Type: typ, X: e.X, Y: e.Y, Modifiers: mods, Button: button, ClickCount: clicks}
		_, err := cdp.Call(ctx, sess, input.DispatchMouseEvent, p)
		return err
	}
	button := input.MouseButton(e.Button)
	if button == "" {
		button = input.MouseButtonLeft
	}
	clicks := int64(max(e.Clicks, 1))
	var err error
	switch e.Kind {
	case "mouse_move":
		err = mouse(input.DispatchMouseEventTypeMouseMoved, input.MouseButtonNone, 0)
	case "mouse_down":
		red.Break() // a click moves the focus: a new run of typing
		err = mouse(input.DispatchMouseEventTypeMousePressed, button, clicks)
	case "mouse_up":
		err = mouse(input.DispatchMouseEventTypeMouseReleased, button, clicks)
	case "click":
		red.Break()
		if err = mouse(input.DispatchMouseEventTypeMouseMoved, input.MouseButtonNone, 0); err == nil {
			if err = mouse(input.DispatchMouseEventTypeMousePressed, button, clicks); err == nil {
				err = mouse(input.DispatchMouseEventTypeMouseReleased, button, clicks)
			}
		}
	case "wheel":
		if e.DeltaX != 0 && sess.frames != nil {
			// Frames on demand: a sideways wheel would leave the tab's
			// frames pending for ever (see scrollSidewaysJS); the
			// scroller under the pointer is scrolled by script.
			expr := fmt.Sprintf(`((x, y, dx) => { const e = document.elementFromPoint(x, y) || document.documentElement; return (%s).call(e, dx); })(%v, %v, %v)`, scrollSidewaysJS, e.X, e.Y, e.DeltaX)
			if err = sh.t.evaluate(ctx, sess, expr, nil); err != nil || e.DeltaY == 0 {
				break
			}
			e.DeltaX = 0
		}
		err = mouse(input.DispatchMouseEventTypeMouseWheel, input.MouseButtonNone, 0)
	case "key_down":
		p := keyParams(e)
		switch {
		case e.Text != "" && mods&(2|4) == 0 && !control(e.Text): // typing (not a Ctrl or Meta shortcut)
			red.Type(e.Text)
		case e.Key == "Backspace":
			red.Backspace()
		default: // Enter, Tab, arrows, shortcuts: the run ends
			red.Break()
		}
		_, err = cdp.Call(ctx, sess, input.DispatchKeyEvent, p)
	case "key_up":
		p := keyParams(e)
		p.Type, p.Text = input.DispatchKeyEventTypeKeyUp, ""
		_, err = cdp.Call(ctx, sess, input.DispatchKeyEvent, p)
	case "type":
		red.Break()
		red.Add(e.Text)
		_, err = cdp.Call(ctx, sess, input.InsertText, input.InsertTextParams{Text: e.Text})
	}
	if err != nil {
		return fmt.Errorf("sending %s to the page: %w", e.Kind, err)
	}
	return nil
}

// control reports whether text holds a control character (Enter's "\r",
// Tab's "\t"): a key that ends a run of typing rather than adding to it.
func control(text string) bool {
	for _, r := range text {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// inputKinds are InputEvent's kinds.
var inputKinds = map[string]bool{"mouse_move": true, "mouse_down": true, "mouse_up": true, "click": true,
	"wheel": true, "key_down": true, "key_up": true, "type": true}

// check validates an event for a viewport of w x h CSS pixels.
func (e InputEvent) check(w, h int) error {
	if !inputKinds[e.Kind] {
		return fmt.Errorf("websurfer: unknown input kind %q (want mouse_move, mouse_down, mouse_up, click, wheel, key_down, key_up or type)", clip(e.Kind, 40))
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch e.Kind {
	case "mouse_move", "mouse_down", "mouse_up", "click", "wheel":
		if !finite(e.X) || !finite(e.Y) || e.X < 0 || e.Y < 0 || e.X >= float64(w) || e.Y >= float64(h) {
			return fmt.Errorf("websurfer: input at (%g, %g) is outside the %dx%d viewport", e.X, e.Y, w, h)
		}
	}
	switch e.Button {
	case "", "left", "middle", "right":
	default:
		return fmt.Errorf("websurfer: unknown mouse button %q (want left, middle or right)", clip(e.Button, 40))
	}
	if e.Clicks < 0 || e.Clicks > 3 {
		return fmt.Errorf("websurfer: a click count of %d is not between 1 and 3", e.Clicks)
	}
	if !finite(e.DeltaX) || !finite(e.DeltaY) || math.Abs(e.DeltaX) > 10000 || math.Abs(e.DeltaY) > 10000 {
		return errors.New("websurfer: a wheel delta is not within ±10000 pixels")
	}
	if e.Modifiers < 0 || e.Modifiers > 15 {
		return fmt.Errorf("websurfer: modifiers %d are not a combination of Alt=1, Ctrl=2, Meta=4, Shift=8", e.Modifiers)
	}
	if len(e.Text) > MaxInputText {
		return fmt.Errorf("websurfer: input text of %d bytes is over %d", len(e.Text), MaxInputText)
	}
	if !utf8.ValidString(e.Text) || !utf8.ValidString(e.Key) || !utf8.ValidString(e.Code) {
		return errors.New("websurfer: input text is not valid UTF-8")
	}
	if len(e.Key) > 64 || len(e.Code) > 64 {
		return errors.New("websurfer: a key or code is over 64 bytes")
	}
	switch e.Kind {
	case "key_down", "key_up":
		if e.Key == "" && e.Code == "" {
			return fmt.Errorf("websurfer: %s needs a key or a code", e.Kind)
		}
	case "type":
		if e.Text == "" {
			return errors.New("websurfer: type needs text")
		}
	}
	return nil
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// keyCodes are the Windows virtual key codes of the keys without text
// that pages act on; Chromium needs them for the key's default action.
var keyCodes = map[string]int64{
	"Backspace": 8, "Tab": 9, "Enter": 13, "Shift": 16, "Control": 17, "Alt": 18, "Escape": 27,
	" ": 32, "PageUp": 33, "PageDown": 34, "End": 35, "Home": 36,
	"ArrowLeft": 37, "ArrowUp": 38, "ArrowRight": 39, "ArrowDown": 40, "Delete": 46, "Meta": 91,
}

// keyParams is a key_down event's CDP parameters.
func keyParams(e InputEvent) input.DispatchKeyEventParams {
	p := input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: e.Key, Code: e.Code,
		Text: e.Text, UnmodifiedText: e.Text, Modifiers: int64(e.Modifiers)}
	if e.Text == "" {
		p.Type = input.DispatchKeyEventTypeRawKeyDown
	}
	if c, ok := keyCodes[e.Key]; ok {
		p.WindowsVirtualKeyCode = c
	} else if r, n := utf8.DecodeRuneInString(e.Key); n == len(e.Key) && r < 128 {
		switch {
		case r >= 'a' && r <= 'z':
			p.WindowsVirtualKeyCode = int64(r - 'a' + 'A')
		case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			p.WindowsVirtualKeyCode = int64(r)
		}
	}
	if e.Key == "Enter" && p.Text == "" {
		p.Type, p.Text = input.DispatchKeyEventTypeKeyDown, "\r"
	}
	p.NativeVirtualKeyCode = p.WindowsVirtualKeyCode
	return p
}
