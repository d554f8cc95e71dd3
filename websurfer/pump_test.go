package websurfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/headlessexperimental"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// onDemandSandbox starts a browser whose frames are on demand (Chromium's
// headless shell). A machine without the shell fails the test with the
// package to install, unless SURF_TEST_NO_HEADLESS_SHELL says so.
func onDemandSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	env := browsertest.Env()
	if _, err := sandbox.FindHeadlessShell(env.HeadlessShell); err != nil {
		t.Fatalf("%v (frames on demand are tested in Chromium's headless shell)", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	sb, err := sandbox.New(ctx, sandbox.Config{Env: env, Policy: browsertest.Policy(), Resolver: browsertest.Resolver(), FrameMode: sandbox.FrameOnDemand})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if got := sb.Info().FrameMode; got != "on-demand" {
		t.Fatalf("Info().FrameMode = %q, want on-demand", got)
	}
	return sb
}

// framesPage counts its animation frames (body's data-frames) and changes
// its text when its button is clicked.
const framesPage = `<!doctype html><title>Frames</title><h1>Frames</h1>
<p id=p>Not clicked</p><button onclick="document.getElementById('p').textContent = 'Clicked'">Go</button>
<script>let n = 0; (function f() { document.body.dataset.frames = ++n; requestAnimationFrame(f); })();</script>`

func onDemandSurfer(t *testing.T, sb *sandbox.Sandbox, sites *browsertest.Sites) *Surfer {
	t.Helper()
	sess, err := sb.NewSession(t.Context(), sandbox.SessionConfig{Policy: loopbackPolicy(t, sites)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	s, err := New(t.Context(), Config{Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// onDemandPage visits page, served from loopback, with a surfer of its
// own in a browser whose frames are on demand, and returns the surfer, the
// visit and the id of the element with role and name.
func onDemandPage(ctx context.Context, t *testing.T, page, role, name string) (*Surfer, *ActionResult, int) {
	t.Helper()
	sb := onDemandSandbox(t)
	sites := browsertest.ServeSites(t)
	sites.Handle("/page", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) })
	s := onDemandSurfer(t, sb, sites)
	res, err := s.VisitURL(ctx, sites.A+"/page")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Observation.Elements {
		if e.Role == role && e.Name == name {
			return s, res, e.ID
		}
	}
	t.Fatalf("no %s %q:\n%s", role, name, res.Observation.Text())
	return nil, nil, 0
}

// rafCount reads the page's animation frame count without taking the
// surfer's lock (which would draw frames).
func rafCount(t *testing.T, s *Surfer) int {
	t.Helper()
	tb := s.tabs[s.active]
	var n int
	if err := tb.evaluate(t.Context(), tb.sess, "Number(document.body.dataset.frames || 0)", &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestFramesOnDemand: in a browser whose frames are on demand, an action
// that waits on animation frames (Playwright's click waits for the
// element to be stable) completes, the step's screenshot shows the
// change, no frame is drawn between steps, and the live view gets frames.
func TestFramesOnDemand(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	s, res, id := onDemandPage(ctx, t, framesPage, "button", "Go")
	if len(res.Observation.Image) == 0 {
		t.Fatal("the visit's observation has no screenshot")
	}
	res, err := s.Click(ctx, id)
	if err != nil {
		t.Fatalf("a click in a page whose frames are on demand: %v", err)
	}
	if !strings.Contains(res.Observation.Text(), "Clicked") || len(res.Observation.Image) == 0 {
		t.Fatalf("the click's observation:\n%s", res.Observation.Text())
	}
	// Between steps the page draws nothing: its animation frames stop.
	n0 := rafCount(t, s)
	if n0 == 0 {
		t.Fatal("the page ran no animation frame while it was visited and clicked")
	}
	time.Sleep(500 * time.Millisecond)
	if n1 := rafCount(t, s); n1 != n0 {
		t.Errorf("the page ran %d animation frames while the surfer was idle; want none", n1-n0)
	}
	// The live view draws frames while it watches.
	got := make(chan Frame, 16)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- s.Screencast(wctx, ScreencastOptions{}, func(f Frame) {
			select {
			case got <- f:
			default:
			}
		})
	}()
	select {
	case f := <-got:
		if len(f.JPEG) == 0 {
			t.Error("an empty live frame")
		}
	case <-ctx.Done():
		t.Fatal("no live frame from a page whose frames are on demand")
	}
	if n := rafCount(t, s); n <= n0 {
		t.Errorf("the watched page ran no animation frame (%d, %d before)", n, n0)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestFramesOnDemandManySessions acts in several sessions of one browser
// at once: their begin frames go in one at a time (two that overlap end
// the headless shell's GPU process, and then the browser).
func TestFramesOnDemandManySessions(t *testing.T) {
	sb := onDemandSandbox(t)
	sites := browsertest.ServeSites(t)
	sites.Handle("/frames", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, framesPage) })
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	defer cancel()
	const n = 3
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		s := onDemandSurfer(t, sb, sites)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Watched, each tab's pump runs the whole time, while its
			// surfer observes too.
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			go s.Screencast(wctx, ScreencastOptions{}, func(Frame) {})
			for k := 0; k < 10; k++ {
				if _, err := s.VisitURL(ctx, fmt.Sprintf("%s/frames?%d", sites.A, k)); err != nil {
					errs <- err
					return
				}
				if _, err := s.ObserveFresh(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !sb.Browser().IsConnected() {
		t.Fatal("the browser died")
	}
}

// The pump draws while someone holds it and no observation hushed it.
func TestFramePumpStates(t *testing.T) {
	p := newFramePump()
	if closed(p.active()) {
		t.Fatal("an unheld pump draws")
	}
	idle := p.active()
	p.hold()
	if !closed(idle) || !closed(p.active()) {
		t.Fatal("a held pump does not draw, or did not wake its waiters")
	}
	resume := p.quiet()
	hushed := p.active()
	if closed(hushed) {
		t.Fatal("a hushed pump draws")
	}
	p.hold() // the live view joins while an observation hushes the pump
	p.release()
	if closed(hushed) {
		t.Fatal("a hold while hushed woke the pump")
	}
	resume()
	resume() // a second call changes nothing
	if !closed(hushed) || !closed(p.active()) {
		t.Fatal("the pump did not draw again once the observation ended")
	}
	p.release()
	if closed(p.active()) {
		t.Fatal("a released pump draws")
	}
}

// sidewaysPage is a carousel wider than its box.
const sidewaysPage = `<!doctype html><title>Sideways</title>
<div id=cards role=region aria-label=Offers style="width:300px;overflow-x:auto;overflow-y:hidden;white-space:nowrap">` +
	`<span style="display:inline-block;width:250px">One</span><span style="display:inline-block;width:250px">Two</span><span style="display:inline-block;width:250px">Three</span></div>`

// TestFramesOnDemandSideways: Chromium's headless shell leaves a begin
// frame pending for ever after a sideways wheel over a scroller, so with
// frames on demand scroll_element_right and the live view's sideways
// wheel scroll by script; the next observation is drawn.
func TestFramesOnDemandSideways(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s, _, id := onDemandPage(ctx, t, sidewaysPage, "region", "Offers")
	left := func() int {
		t.Helper()
		tb := s.tabs[s.active]
		var n int
		if err := tb.evaluate(ctx, tb.sess, "document.getElementById('cards').scrollLeft", &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	res, err := s.ScrollElementSideways(ctx, id, 1)
	if err != nil {
		t.Fatalf("scroll_element_right with frames on demand: %v", err)
	}
	if len(res.Observation.Image) == 0 || left() == 0 {
		t.Fatalf("scroll_element_right: scrollLeft %d, image %d bytes", left(), len(res.Observation.Image))
	}
	before := left()
	box := s.last.refs[id].clickX
	if err := s.Input(ctx, InputEvent{Kind: "wheel", X: box, Y: s.last.refs[id].clickY, DeltaX: 100}); err != nil {
		t.Fatal(err)
	}
	if got := left(); got <= before {
		t.Errorf("the live view's sideways wheel: scrollLeft %d, %d before", got, before)
	}
	if _, err := s.Observe(ctx); err != nil {
		t.Fatalf("observing after the live view's sideways wheel: %v", err)
	}
}

// TestFramesOnDemandInputWheel: the browser answers a wheel event only
// once a frame has handled it, so with frames on demand a person's wheel
// (Surfer.Input) draws frames while it is dispatched, watched or not; it
// used to wait for ever when nobody watched.
func TestFramesOnDemandInputWheel(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s, _, _ := onDemandPage(ctx, t, `<!doctype html><title>Tall</title><a href="#end">Down</a><div style="height:4000px"></div><p id=end>End</p>`, "link", "Down")
	if err := s.Input(ctx, InputEvent{Kind: "wheel", X: 200, Y: 200, DeltaY: 300}); err != nil {
		t.Fatalf("a wheel with frames on demand, nobody watching: %v", err)
	}
	// The wheel's scroll plays out over the frames that follow, drawn here
	// as a watcher's would be.
	defer s.HoldFrames()()
	tb := s.tabs[s.active]
	for {
		var y float64
		if err := tb.evaluate(ctx, tb.sess, "scrollY", &y); err != nil {
			t.Fatal(err)
		}
		if y > 0 {
			return
		}
		if !sleepCtx(ctx, 20*time.Millisecond) {
			t.Fatal("the wheel did not scroll the page")
		}
	}
}

// TestGatedFrameHoldsTheGate: a begin frame its caller gave up on keeps
// the browser's gate until the browser answers it, so that no other frame
// overlaps it (which ends the shell's GPU process).
func TestGatedFrameHoldsTheGate(t *testing.T) {
	gate := onDemandSandbox(t).FrameGate()
	started, answer := make(chan struct{}), make(chan struct{})
	call := func(ctx context.Context, method string, params, result any) error {
		close(started)
		select {
		case <-answer:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := gatedFrame(ctx, gate, call, headlessexperimental.BeginFrameParams{})
		errc <- err
	}()
	<-started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("an abandoned frame returned %v, want its context's error", err)
	}
	short, stop := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer stop()
	if gate.Acquire(short) == nil {
		gate.Release()
		t.Fatal("the gate was let go while the browser still drew the abandoned frame")
	}
	close(answer)
	long, stop2 := context.WithTimeout(t.Context(), 10*time.Second)
	defer stop2()
	if err := gate.Acquire(long); err != nil {
		t.Fatalf("the gate stayed taken once the browser answered: %v", err)
	}
	gate.Release()
}
