package websurfer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/headlessexperimental"
	"github.com/surfkit/surf/sandbox"
)

// Frames on demand (sandbox.FrameOnDemand): the browser draws a tab's
// frame only when surf sends HeadlessExperimental.beginFrame. Playwright's
// actions wait on animation frames (an element's stability), surf's
// settling waits on one (reacted), and a page's own scripts may, so while
// the surfer works (it holds s.mu) or the live view watches, a pump draws
// every tab's frames at pumpEvery. While the model thinks nobody holds
// it, and an animated page draws nothing and costs nothing. A step's
// screenshot is a frame of its own: beginFrame{screenshot} draws the page
// as it is and returns the pixels at once, instead of waiting for the next
// ticks of a 60 Hz clock.

// pumpEvery is the time from one frame of the pump to the next (from
// start to start, as on Chromium's own 60 Hz clock): a frame costs what it
// costs on that clock.
const pumpEvery = 16 * time.Millisecond

// frameCallPatience bounds one beginFrame of the pump (a renderer busy in
// a script answers late). It is long: a call abandoned while the browser
// still draws lets the next one in, and two that overlap end the GPU
// process (see sandbox.FrameGate).
const frameCallPatience = 10 * time.Second

// framePump counts who needs frames now (the surfer's lock and the live
// view) and who needs the pump quiet (an observation, which draws the
// frame it shows itself).
type framePump struct {
	mu    sync.Mutex
	holds int
	hush  int
	on    chan struct{} // closed when frames become wanted, then replaced
}

// closedChan is always closed.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func newFramePump() *framePump { return &framePump{on: make(chan struct{})} }

// wanted reports whether the pump should draw; p.mu is held.
func (p *framePump) wanted() bool { return p.holds > 0 && p.hush == 0 }

// change runs f with p.mu held and wakes the pump if frames became
// wanted.
func (p *framePump) change(f func()) {
	if p == nil {
		return
	}
	p.mu.Lock()
	was := p.wanted()
	f()
	if !was && p.wanted() {
		close(p.on)
		p.on = make(chan struct{})
	}
	p.mu.Unlock()
}

// hold asks for frames until release.
func (p *framePump) hold()    { p.change(func() { p.holds++ }) }
func (p *framePump) release() { p.change(func() { p.holds-- }) }

// quiet stops the pump until the function it returns is called: an
// observation draws its screenshot's frame itself, and a frame of the
// pump's in between would only delay it (one begin frame at a time in a
// browser) and take the renderer's main thread from reading the page.
func (p *framePump) quiet() (resume func()) {
	if p == nil {
		return func() {}
	}
	p.change(func() { p.hush++ })
	var once sync.Once
	return func() { once.Do(func() { p.change(func() { p.hush-- }) }) }
}

// active returns a channel that is closed while frames are wanted.
func (p *framePump) active() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.wanted() {
		return closedChan
	}
	return p.on
}

// HoldFrames has the surfer's tabs draw frames until release is called,
// as they do while the surfer works or is watched. Only a browser whose
// frames are on demand needs it (sandbox.FrameOnDemand): there a caller
// that drives a page through Page, past the surfer, and waits on what
// frames bring (animation frames, Playwright's checks that an element is
// stable, a screenshot) would otherwise wait for ever. Elsewhere it does
// nothing.
func (s *Surfer) HoldFrames() (release func()) {
	s.pump.hold()
	var once sync.Once
	return func() { once.Do(s.pump.release) }
}

// workMutex is the surfer's lock: while it is held the surfer works, and
// tabs whose frames are on demand get them.
type workMutex struct {
	sync.Mutex
	pump *framePump
}

func (m *workMutex) Lock() {
	m.Mutex.Lock()
	m.pump.hold()
}

func (m *workMutex) TryLock() bool {
	if !m.Mutex.TryLock() {
		return false
	}
	m.pump.hold()
	return true
}

func (m *workMutex) Unlock() {
	m.pump.release()
	m.Mutex.Unlock()
}

// frameSource draws the frames of one tab whose frames are on demand,
// through the browser's gate (one begin frame at a time in the browser).
type frameSource struct {
	gate *sandbox.FrameGate
	sess *cdpSession
}

// beginFrame draws a frame, with a JPEG screenshot of it when quality > 0.
func (f *frameSource) beginFrame(ctx context.Context, quality int) (*headlessexperimental.BeginFrameResult, error) {
	var p headlessexperimental.BeginFrameParams
	if quality > 0 {
		q := int64(quality)
		p.Screenshot = &headlessexperimental.ScreenshotParams{Format: headlessexperimental.ScreenshotParamsFormatJpeg, Quality: &q, OptimizeForSpeed: true}
	}
	call := f.sess.Call
	if f.sess.direct != nil {
		call = f.sess.callDirect
	}
	return gatedFrame(ctx, f.gate, call, p)
}

// gatedFrame sends one beginFrame through the browser's gate. The gate
// covers the browser's frame, not the caller's wait: when ctx ends first,
// the caller has its error at once, but the call goes on (within
// frameCallPatience) and the gate is let go only once the browser has
// answered, since a begin frame sent while the abandoned one is still
// drawn would overlap it (see sandbox.FrameGate).
func gatedFrame(ctx context.Context, gate *sandbox.FrameGate, call callFunc, p headlessexperimental.BeginFrameParams) (*headlessexperimental.BeginFrameResult, error) {
	if err := gate.Acquire(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		gate.Release()
		return nil, err
	}
	type reply struct {
		res *headlessexperimental.BeginFrameResult
		err error
	}
	done := make(chan reply, 1)
	go func() {
		defer gate.Release()
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), frameCallPatience)
		defer cancel()
		var res headlessexperimental.BeginFrameResult
		if err := call(cctx, headlessexperimental.CommandBeginFrame, p, &res); err != nil {
			done <- reply{err: err}
			return
		}
		done <- reply{res: &res}
	}()
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", headlessexperimental.CommandBeginFrame, ctx.Err())
	}
}

// errNoFrameShot is a frame drawn without the screenshot asked for
// (Chromium gives none while a renderer starts).
var errNoFrameShot = errors.New("the frame came without its screenshot")

// shot draws a frame and returns its JPEG. A renderer that is starting
// (a new tab's, a navigation's to another site) or busy in a script draws
// frames without one, and a frame abandoned earlier may still be pending:
// shot draws again until it has the picture or ctx ends, as a screenshot
// on the clock waits for its frame (a page that stays busy is declared
// hung and closed, see hang.go).
func (f *frameSource) shot(ctx context.Context, quality int) ([]byte, error) {
	var last error
	for {
		res, err := f.beginFrame(ctx, quality)
		switch {
		case err == nil && len(res.ScreenshotData) > 0:
			return res.ScreenshotData, nil
		case err == nil:
			last = errNoFrameShot
		case framePending(err):
			last = err
		default:
			return nil, err
		}
		if !sleepCtx(ctx, pumpEvery) {
			return nil, fmt.Errorf("%w (%w)", ctx.Err(), last)
		}
	}
}

// ended reports whether t's page closed or crashed (a crashed tab is
// replaced by a new one, with a pump of its own).
func (t *tab) ended() bool {
	t.state.mu.Lock()
	defer t.state.mu.Unlock()
	return t.state.closed || t.state.crashed
}

// framePending reports whether err is the browser refusing a frame
// because the tab's previous one is not drawn yet.
func framePending(err error) bool {
	return err != nil && strings.Contains(err.Error(), "Another frame is pending")
}

// pumpTab draws t's frames while p wants them, until t's page closes or
// crashes, or quit is closed.
func pumpTab(p *framePump, t *tab, quit <-chan struct{}, log *slog.Logger) {
	f := t.sess.frames
	for {
		select {
		case <-quit:
			return
		case <-p.active():
		}
		if t.ended() {
			return
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), frameCallPatience)
		_, err := f.beginFrame(ctx, 0)
		cancel()
		if err != nil {
			if isGone(err) || t.ended() {
				return
			}
			log.Debug("drawing a frame", "err", err)
		}
		wait := time.NewTimer(max(pumpEvery-time.Since(start), 0))
		select {
		case <-quit:
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}
