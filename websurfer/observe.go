package websurfer

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/internal/jpegpatch"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/som"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/tools"
)

// ErrClosed is returned by a closed surfer.
var ErrClosed = errors.New("websurfer: surfer is closed")

// Observe reads the active tab as the model will see it. It changes
// nothing in the page.
func (s *Surfer) Observe(ctx context.Context) (*Observation, error) {
	s.mu.Lock()
	defer s.unlockPublish()
	if s.closed {
		return nil, ErrClosed
	}
	return s.observeGuarded(ctx)
}

// ObserveFresh is Observe, but it always reads the page, even when it has
// not changed since the last observation.
func (s *Surfer) ObserveFresh(ctx context.Context) (*Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.last != nil {
		s.last.watch.State = "" // not to be handed out again
	}
	return s.observeGuarded(ctx)
}

// observeGuarded is observe under guard (hang.go): a page that stopped
// responding is replaced, and the observation is of its blank
// replacement, with an event saying why. The caller holds s.mu.
func (s *Surfer) observeGuarded(ctx context.Context) (*Observation, error) {
	obs, err := guarded(ctx, s, s.tabs[s.active], func() (*Observation, error) { return s.observe(ctx) })
	if errors.Is(err, ErrNotResponding) && tools.IsToolError(err) && ctx.Err() == nil {
		return s.observe(ctx)
	}
	return obs, err
}

// screenshotResult is Page.captureScreenshot's result, decoded from
// Playwright's value without another JSON pass.
type screenshotResult struct{ data []byte }

func (r *screenshotResult) decodeAny(v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("screenshot is a %T", v)
	}
	s, _ := m["data"].(string)
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return err
	}
	r.data = b
	return nil
}

func (r *screenshotResult) decodeRaw(b []byte) error {
	var res struct {
		Data []byte `json:"data"` // base64 in JSON
	}
	if err := jsonv2.Unmarshal(b, &res); err != nil {
		return err
	}
	r.data = res.Data
	return nil
}

// captureJPEG takes a screenshot of the viewport as the browser paints it.
func captureJPEG(ctx context.Context, sess *cdpSession, quality int) ([]byte, error) {
	if sess.frames != nil {
		b, err := sess.frames.shot(ctx, quality)
		if err != nil {
			return nil, fmt.Errorf("taking a screenshot: %w", err)
		}
		return b, nil
	}
	q := int64(quality)
	yes := true
	var res screenshotResult
	err := sess.Call(ctx, page.CommandCaptureScreenshot, page.CaptureScreenshotParams{
		Format:           page.CaptureScreenshotFormatJpeg,
		Quality:          &q,
		FromSurface:      &yes,
		OptimizeForSpeed: &yes,
	}, &res)
	if err != nil {
		return nil, fmt.Errorf("taking a screenshot: %w", err)
	}
	return res.data, nil
}

func captureSnapshot(ctx context.Context, sess *cdpSession) (*domsnapshot.CaptureSnapshotResult, error) {
	var res snapshotResult
	if err := sess.Call(ctx, domsnapshot.CommandCaptureSnapshot, snapshotParams(), &res); err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	return &res.CaptureSnapshotResult, nil
}

// sendSnapshot writes the DOM snapshot's command to sess's direct session,
// which must be there, and returns without its reply: what is sent next
// runs after it in the renderer. wait reads the snapshot.
func sendSnapshot(ctx context.Context, sess *cdpSession) (wait func() (*domsnapshot.CaptureSnapshotResult, error)) {
	reply, err := sess.sendDirect(ctx, domsnapshot.CommandCaptureSnapshot, snapshotParams())
	return func() (*domsnapshot.CaptureSnapshotResult, error) {
		var res snapshotResult
		if err == nil {
			err = reply(ctx, &res)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the page: %w", err)
		}
		return &res.CaptureSnapshotResult, nil
	}
}

// snapshotParams asks for what perception reads of a page.
func snapshotParams() domsnapshot.CaptureSnapshotParams {
	yes := true
	return domsnapshot.CaptureSnapshotParams{ComputedStyles: perception.SnapshotStyles, IncludePaintOrder: &yes}
}

// shotPatience is how long a screenshot may take before it is asked for
// again (within observeTimeout).
const shotPatience = 5 * time.Second

// observePatience bounds one attempt at an observation; observeTimeout
// bounds them all.
const observePatience = 8 * time.Second

// observeTimeout bounds an observation: a page that renders no frame or
// answers no command makes it fail rather than hang.
const observeTimeout = 20 * time.Second

func (s *Surfer) observe(ctx context.Context) (*Observation, error) {
	if obs := s.observeDialog(); obs != nil {
		return obs, nil // the page is blocked in a dialog: it answers nothing
	}
	ctx, cancel := context.WithTimeout(ctx, observeTimeout)
	defer cancel()
	if err := s.renewCrashed(ctx); err != nil {
		return nil, err
	}
	if err := s.observeInitial(ctx, s.tabs[s.active]); err != nil {
		return nil, err
	}
	if obs := s.unchanged(ctx); obs != nil {
		return obs, nil
	}
	once := func() (*Observation, error) {
		actx, cancel := context.WithTimeout(ctx, observePatience)
		defer cancel()
		return s.observeOnce(actx)
	}
	obs, err := once()
	for attempt := 0; err != nil && attempt < 3 && ctx.Err() == nil; attempt++ {
		switch {
		case betweenDocuments(err):
			// The tab was swapping documents (a navigation
			// committing): observe the new one once it is there.
			s.log.Debug("observing between documents; again", "err", err)
			t := s.tabs[s.active]
			sleepCtx(ctx, 50*time.Millisecond)
			_ = s.waitLoad(ctx, t, playwright.LoadStateDomcontentloaded, 2*time.Second)
		case errors.Is(err, context.DeadlineExceeded):
			// A request the browser dropped (one sent as the document
			// changed) is not answered; asked again, it is.
			s.log.Debug("observation unanswered; again", "err", err)
		default:
			return nil, err
		}
		obs, err = once()
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("observing the page: it did not answer within %s: %w", observeTimeout, err)
	}
	if err == nil {
		s.redactObservation(obs) // see redact.go
	}
	return obs, err
}

// observeInitial gives tab t a blank document of its own if it still
// holds its page's initial document, which paints at the window's size
// rather than the viewport's (see sandbox.PageOptions): observed, it is
// the blank page every new tab shows (history leaves blank pages out).
func (s *Surfer) observeInitial(ctx context.Context, t *tab) error {
	if !t.initial.Load() {
		return nil
	}
	if t.rnav.Load() != 0 || t.pendingNav() {
		// The page is getting a document of its own already (Playwright
		// has not said so yet): a blank one would cut it off.
		t.initial.Store(false)
		return nil
	}
	err := s.interruptible(ctx, t, func() error {
		_, err := t.page.Goto("about:blank")
		return err
	})
	if err != nil {
		return fmt.Errorf("opening a blank page: %w", err)
	}
	t.initial.Store(false)
	return nil
}

// betweenDocuments reports whether err means the tab had no active
// document for a moment: a navigation was committing.
func betweenDocuments(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "Not attached to an active page") || strings.Contains(msg, "Inspected target navigated or closed")
}

// shot is an observation's screenshot.
type shot struct {
	raw []byte
	jp  *jpegpatch.Image // the screenshot as DCT coefficients, nil if it cannot be patched
	err error
	dur time.Duration // capture
	dec time.Duration // decode
}

// takeShot captures the tab's screenshot and, for a set-of-mark image,
// decodes it for drawing; it sends the result on out.
func (s *Surfer) takeShot(ctx context.Context, t *tab, out chan<- shot) {
	t0 := time.Now()
	// A capture asked for while the tab swaps documents may never be
	// answered; a second one is.
	sctx, cancel := context.WithTimeout(ctx, shotPatience)
	raw, err := captureJPEG(sctx, t.sess, s.cfg.JPEGQuality)
	cancel()
	if err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
		raw, err = captureJPEG(ctx, t.sess, s.cfg.JPEGQuality)
	}
	if err != nil {
		out <- shot{err: err}
		return
	}
	sh := shot{raw: raw, dur: time.Since(t0)}
	if s.cfg.Image == ImageMarks && !s.cfg.Marks.Grayscale {
		t1 := time.Now()
		sh.jp, _ = jpegpatch.Decode(raw) // a JPEG it cannot patch is drawn the slow way
		sh.dec = time.Since(t1)
	}
	out <- sh
}

func (s *Surfer) observeOnce(ctx context.Context) (*Observation, error) {
	start := time.Now()
	t := s.tabs[s.active]
	obs := &Observation{Seq: s.seq + 1, tab: t, nav: int(t.nav.Load()), taken: start, Unlisted: map[Location]int{}, acts: s.acts}
	if t.sess.frames != nil {
		defer s.pump.quiet()()
	}

	// The screenshot is taken and decoded while the page is read: the
	// browser paints in one process while the renderer answers the rest.
	shotc := make(chan shot, 1)
	if s.cfg.Image == ImageNone {
		shotc <- shot{}
	} else {
		go s.takeShot(ctx, t, shotc)
	}
	// The watch (see unchanged.go), read before the page is.
	watch := func() pageWatch { return pageWatch{} }
	if !t.outOfProcess() {
		watch = s.sendWatch(ctx, t)
	}

	t0 := time.Now()
	ahead := newAXAhead(t)
	c, err := s.capturePage(ctx, t, ahead)
	obs.Timing.Snapshot = time.Since(t0)
	if b := ahead.boxes; b != nil {
		obs.boxSent, obs.boxAhead = len(b.replies), int(b.used.Load())
	}
	if err != nil {
		<-shotc
		return nil, err
	}
	obs.watch = watch()
	tp0 := time.Now()
	p, err := perception.Perceive(c)
	obs.Timing.Parse = time.Since(tp0)
	if err != nil {
		<-shotc
		return nil, err
	}
	obs.URL, obs.Title, obs.Viewport = p.URL, p.Title, p.Viewport
	t.title = obs.Title

	draw, pre, preMarks := s.drawEarly(obs, p, shotc)

	// The text is written beside the drawing, which takes longer and so
	// keeps this goroutine: first Chromium's accessibility tree, for the
	// elements surf may list, then the numbered elements.
	var (
		ax    axNodes
		in    perception.RenderInput
		textc = make(chan error, 1)
	)
	go func() {
		t0 := time.Now()
		ax = fetchAX(ctx, p, ahead)
		obs.Timing.AX = time.Since(t0)
		obs.axSent, obs.axAhead = len(ahead.replies), int(ahead.used.Load())
		if err := ctx.Err(); err != nil {
			textc <- err
			return
		}
		tb0 := time.Now()
		in = s.render(obs, t, p)
		obs.Timing.Text = time.Since(tb0)
		textc <- nil
	}()
	d := draw()
	if err := <-textc; err != nil {
		return nil, err
	}
	if s.recordCapture != nil {
		s.recordCapture(c, ax, in)
	}

	if err := s.finishImage(obs, d, pre, preMarks); err != nil {
		return nil, err
	}
	obs.Timing.Total = time.Since(start)
	s.seq = obs.Seq
	s.last = obs
	return obs, nil
}

// drawn is an observation's image as drawn before the text was done.
type drawn struct {
	data    []byte
	w, h    int
	dropped []int // ids whose tag found no room near its box
	raw     []byte
	shotDur time.Duration
	decDur  time.Duration
	drawDur time.Duration
	err     error
}

// drawEarly returns draw, which draws and encodes the set-of-mark image as
// soon as the screenshot is decoded, while the accessibility data is
// fetched: on-screen elements are numbered from the snapshot alone (pre,
// marked preMarks). If the accessibility tree then hides one of them,
// finishImage redraws the image so the numbers always match the text.
func (s *Surfer) drawEarly(obs *Observation, p *perception.Page, shotc <-chan shot) (draw func() drawn, pre []*candidate, preMarks []som.Mark) {
	pre = perception.OnScreen(p.Candidates)
	if n := perception.MaxListed(s.cfg.TokenBudget); len(pre) > n {
		pre = pre[:n] // the text cannot list more; the image marks only those it lists
	}
	// Marked now: the accessibility data may yet change where they are.
	preMarks = perception.Marks(pre)
	var texts []som.Rect // for the tags to avoid
	if s.cfg.Image == ImageMarks {
		texts = perception.TextBoxes(p.Frames, p.View, 3000)
	}
	obs.texts = texts
	viewport := p.View
	masks := s.secretMasks(p.Frames, viewport) // see secretmask.go
	draw = func() drawn {
		sh := <-shotc
		if sh.err == nil && len(masks) > 0 {
			sh.raw, sh.err = maskJPEG(sh.raw, masks, viewport, s.cfg.JPEGQuality)
			sh.jp = nil
		}
		if sh.err != nil {
			return drawn{err: sh.err}
		}
		t0 := time.Now()
		var data []byte
		var w, h int
		var dropped []int
		var err error
		switch s.cfg.Image {
		case ImageMarks:
			data, w, h, dropped, err = s.drawMarks(sh.raw, sh.jp, preMarks, texts, viewport)
		case ImagePlain:
			var c image.Config
			if c, err = jpeg.DecodeConfig(bytes.NewReader(sh.raw)); err != nil {
				err = fmt.Errorf("decoding the screenshot: %w", err)
			}
			data, w, h = sh.raw, c.Width, c.Height
		}
		return drawn{data: data, w: w, h: h, dropped: dropped, raw: sh.raw, shotDur: sh.dur, decDur: sh.dec, drawDur: time.Since(t0), err: err}
	}
	return draw, pre, preMarks
}

// render numbers the page's elements and writes the observation's text,
// with the tabs, the events and the denials since the last observation.
func (s *Surfer) render(obs *Observation, t *tab, p *perception.Page) perception.RenderInput {
	nb := perception.Number(p, obs.Seq)
	obs.Tabs = s.tabInfos()
	obs.Events = s.takeEvents()
	obs.Blocked = summarizeDenials(s.sess.TakeDenials())
	in := perception.RenderInput{
		Tabs: obs.Tabs, Events: obs.Events, Blocked: obs.Blocked,
		Shot: s.cfg.Image != ImageNone, Marks: s.cfg.Image == ImageMarks,
		TokenBudget: s.cfg.TokenBudget, LastMeta: t.lastMeta, Redact: s.pol.Redact,
	}
	r := perception.Render(nb, in)
	if r.Metadata != nil {
		t.lastMeta = r.Metadata.Fingerprint()
		obs.Metadata = r.Metadata
	}
	obs.text, obs.VisibleText, obs.Tokens = r.Text, r.VisibleText, r.Tokens
	obs.Elements, obs.Unlisted, obs.Focused, obs.Notes, obs.marked = r.Elements, r.Unlisted, r.Focused, r.Notes, r.Marked
	obs.refs = make(map[int]*elementRef, len(obs.Elements))
	obs.frames = p.Frames
	for i := range obs.Elements {
		e := &obs.Elements[i]
		c := r.Candidates[e.ID]
		obs.refs[e.ID] = &elementRef{el: e, src: c.Frame, backend: c.Node.Backend(), node: c.Node, clickX: c.ClickX, clickY: c.ClickY, vis: c.Vis, cand: c}
	}
	return in
}

// finishImage puts the image into the observation, redrawn if the text
// lists other on-screen elements than the early drawing marked.
func (s *Surfer) finishImage(obs *Observation, d drawn, pre []*candidate, preMarks []som.Mark) error {
	if d.err != nil {
		return d.err
	}
	obs.Timing.Screenshot = d.shotDur
	obs.Timing.Decode = d.decDur
	obs.Timing.Image = d.drawDur
	var final []*candidate
	for id := 1; id <= obs.marked; id++ {
		r, ok := obs.refs[id]
		if !ok || (r.el.Where != InViewport && r.el.Where != Covered) {
			break
		}
		final = append(final, r.cand)
	}
	if s.cfg.Image == ImageMarks && (!slices.Equal(pre, final) || !slices.Equal(preMarks, perception.Marks(final))) {
		t0 := time.Now()
		data, w, h, dropped, err := s.drawMarks(d.raw, nil, perception.Marks(final), obs.texts, viewportRect(obs.Viewport))
		if err != nil {
			return err
		}
		d.data, d.w, d.h, d.dropped = data, w, h, dropped
		obs.Timing.Image += time.Since(t0)
	}
	if s.cfg.Image == ImageMarks {
		s.noteDropped(obs, d.dropped)
	}
	if d.data != nil {
		obs.Image, obs.ImageMIME = d.data, "image/jpeg"
		obs.ImageWidth, obs.ImageHeight = d.w, d.h
	}
	return nil
}

// viewportRect is the layout viewport of an observation.
func viewportRect(v Viewport) rect { return rect{W: float64(v.Width), H: float64(v.Height)} }

// drawMarks draws the marks on the screenshot and encodes it as sent to
// the model. When the screenshot is a JPEG jpegpatch can edit (jp, or raw
// decoded again), only the 8x8 blocks the marks touch are decoded and
// re-encoded; the others keep their bits. Otherwise the whole image is
// decoded, drawn and encoded. dropped lists the ids whose tag found no room
// near its box (only the outline is drawn).
func (s *Surfer) drawMarks(raw []byte, jp *jpegpatch.Image, marks []som.Mark, texts []som.Rect, viewport rect) (data []byte, w, h int, dropped []int, err error) {
	opts := s.cfg.Marks
	if opts.Text == nil {
		opts.Text = texts
	}
	if jp == nil && !opts.Grayscale {
		jp, _ = jpegpatch.Decode(raw)
	}
	if jp != nil {
		b := jp.Bounds()
		if opts.Scale == 0 && viewport.W > 0 {
			opts.Scale = float64(b.Dx()) / viewport.W
		}
		opts.MaxDetach = maxDetach(opts)
		labels := som.Layout(b, marks, opts)
		fp := som.Footprint(b, labels, opts)
		// jp is this drawing's own: its pixels are drawn on in place.
		img := jp.Pixels(fp)
		if som.RenderInPlace(img, labels, opts) && jp.Update(img, fp) == nil {
			var buf bytes.Buffer
			if err := jp.Encode(&buf); err == nil {
				return buf.Bytes(), b.Dx(), b.Dy(), droppedIDs(labels), nil
			}
		}
	}
	shot, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, 0, 0, nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	if opts.Scale == 0 && viewport.W > 0 {
		opts.Scale = float64(shot.Bounds().Dx()) / viewport.W
	}
	opts.MaxDetach = maxDetach(opts)
	labels := som.Layout(shot.Bounds(), marks, opts)
	img := som.Render(shot, labels, opts)
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: s.cfg.JPEGQuality}); err != nil {
		return nil, 0, 0, nil, fmt.Errorf("encoding the set-of-mark image: %w", err)
	}
	return buf.Bytes(), img.Bounds().Dx(), img.Bounds().Dy(), droppedIDs(labels), nil
}

func (s *Surfer) tabInfos() []TabInfo {
	out := make([]TabInfo, len(s.tabs))
	for i, t := range s.tabs {
		out[i] = TabInfo{Index: i, Title: t.title, URL: t.page.URL(), Active: i == s.active}
	}
	return out
}

// Screenshot captures the active tab's viewport as a plain JPEG, in the
// format and size of the observation's image but without marks: the
// baseline observation cost is measured against.
func (s *Surfer) Screenshot(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	t := s.tabs[s.active]
	return guarded(ctx, s, t, func() ([]byte, error) { return s.maskedScreenshot(ctx, t) })
}

func summarizeDenials(ds []sandbox.Denial) Blocked {
	var b Blocked
	seen := map[string]bool{}
	for _, d := range ds {
		if d.Navigation || d.Layer == sandbox.LayerAction {
			if len(b.Navigations) < 5 {
				b.Navigations = append(b.Navigations, d.Decision.Reason)
			}
			continue
		}
		if d.Layer == sandbox.LayerReplay {
			b.Unrecorded++
			if len(b.UnrecordedURLs) < 3 {
				b.UnrecordedURLs = append(b.UnrecordedURLs, d.URL)
			}
			continue
		}
		b.Requests++
		if h := d.Host; h != "" && !seen[h] && len(b.Hosts) < 8 {
			seen[h] = true
			b.Hosts = append(b.Hosts, h)
		}
	}
	return b
}
