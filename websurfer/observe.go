package websurfer

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/internal/jpegpatch"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/som"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// ErrClosed is returned by a closed surfer.
var ErrClosed = errors.New("websurfer: surfer is closed")

// Observe reads the active tab as the model will see it. It changes
// nothing in the page.
func (s *Surfer) Observe(ctx context.Context) (*Observation, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	return s.observe(ctx)
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
	yes := true
	var res snapshotResult
	err := sess.Call(ctx, domsnapshot.CommandCaptureSnapshot, domsnapshot.CaptureSnapshotParams{
		ComputedStyles:    snapshotStyles,
		IncludePaintOrder: &yes,
	}, &res)
	if err != nil {
		return nil, fmt.Errorf("reading the page: %w", err)
	}
	return &res.CaptureSnapshotResult, nil
}

// frameRead is one out-of-process frame's snapshot, read concurrently with
// the page's.
type frameRead struct {
	o    *oopif
	res  *domsnapshot.CaptureSnapshotResult
	err  error
	snap *frameSnap
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
	obs := &Observation{Seq: s.seq + 1, tab: t, nav: int(t.nav.Load()), taken: start, Unlisted: map[Location]int{}}

	// The screenshot is taken and decoded while the page is read: the
	// browser paints in one process while the renderer answers the rest.
	shotc := make(chan shot, 1)
	if s.cfg.Image == ImageNone {
		shotc <- shot{}
	} else {
		go s.takeShot(ctx, t, shotc)
	}

	frames := s.outOfProcessFrames(ctx, t)

	var (
		wg      sync.WaitGroup
		metrics *page.GetLayoutMetricsResult
		mErr    error
		mainRes *domsnapshot.CaptureSnapshotResult
		mainErr error
	)
	t0 := time.Now()
	wg.Add(2)
	go func() {
		defer wg.Done()
		var m page.GetLayoutMetricsResult
		mErr = t.sess.Call(ctx, page.CommandGetLayoutMetrics, nil, &m)
		metrics = &m
	}()
	go func() {
		defer wg.Done()
		mainRes, mainErr = captureSnapshot(ctx, t.sess)
	}()
	reads := make([]*frameRead, len(frames))
	for i, o := range frames {
		reads[i] = &frameRead{o: o}
		wg.Add(1)
		go func(r *frameRead) {
			defer wg.Done()
			r.res, r.err = captureSnapshot(ctx, r.o.sess)
		}(reads[i])
	}
	wg.Wait()
	obs.Timing.Snapshot = time.Since(t0)
	if mErr == nil && metrics.CSSLayoutViewport == nil {
		mErr = errors.New("reading the viewport: no layout viewport")
	}
	if err := errors.Join(mErr, mainErr); err != nil {
		<-shotc
		return nil, err
	}

	tp0 := time.Now()
	defer func() { obs.Timing.Parse = time.Since(tp0) - obs.Timing.AX - obs.Timing.Text }()
	vp := metrics.CSSLayoutViewport
	viewport := rect{0, 0, float64(vp.ClientWidth), float64(vp.ClientHeight)}
	boxes := s.readFrameBoxes(ctx, t, mainRes, reads)
	mainSnap := &frameSnap{snap: parseSnapshot(mainRes, viewport, 0, 0, everywhere, boxes[t.sess]), sess: t.sess}
	snaps := []*frameSnap{mainSnap}
	var notes []string
	for _, r := range s.placeFrames(ctx, t, mainSnap, reads, viewport, boxes) {
		if r.err != nil {
			notes = append(notes, fmt.Sprintf("frame %s could not be read: %v", q(r.o.frame.URL(), 80), r.err))
			continue
		}
		snaps = append(snaps, r.snap)
	}

	// Page geometry.
	obs.URL = t.page.URL()
	if d := mainSnap.snap.docs; len(d) > 0 {
		obs.Title = d[0].title
		if obs.URL == "" {
			obs.URL = d[0].url
		}
	}
	t.title = obs.Title
	cs := metrics.CSSContentSize
	obs.Viewport = Viewport{
		Width: int(vp.ClientWidth), Height: int(vp.ClientHeight),
		ScrollX: float64(vp.PageX), ScrollY: float64(vp.PageY),
	}
	if cs != nil {
		obs.Viewport.PageWidth, obs.Viewport.PageHeight = cs.Width, cs.Height
	}
	obs.Viewport.Shown, obs.Viewport.Position, obs.Viewport.MoreAbove, obs.Viewport.MoreBelow =
		position(obs.Viewport.ScrollY, viewport.H, obs.Viewport.PageHeight)
	obs.Viewport.horizontalExtent()

	// Elements: candidates from every snapshot, located, ordered.
	var cands []*candidate
	for _, fs := range snaps {
		cands = append(cands, findCandidates(fs, viewport)...)
	}
	locate(cands, viewport)
	orderCandidates(cands)

	// The set-of-mark image is drawn and encoded as soon as the
	// screenshot is decoded, while the accessibility data is fetched:
	// on-screen elements are numbered from the snapshot alone. If the
	// accessibility tree then hides one of them, the image is redrawn so
	// the numbers always match the text.
	pre := onScreen(cands)
	if n := maxListed(s.cfg.TokenBudget); len(pre) > n {
		pre = pre[:n] // the text cannot list more; the image marks only those it lists
	}
	// Marked now: the accessibility data may yet change where they are.
	preMarks := marksOf(pre)
	var texts []som.Rect // for the tags to avoid
	if s.cfg.Image == ImageMarks {
		texts = textBoxes(snaps, viewport, 3000)
	}
	obs.texts = texts
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
	imgc := make(chan drawn, 1)
	masks := s.secretMasks(snaps, viewport) // see secretmask.go
	go func() {
		sh := <-shotc
		if sh.err == nil && len(masks) > 0 {
			sh.raw, sh.err = maskJPEG(sh.raw, masks, viewport, s.cfg.JPEGQuality)
			sh.jp = nil
		}
		if sh.err != nil {
			imgc <- drawn{err: sh.err}
			return
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
		imgc <- drawn{data: data, w: w, h: h, dropped: dropped, raw: sh.raw, shotDur: sh.dur, decDur: sh.dec, drawDur: time.Since(t0), err: err}
	}()

	// Chromium's accessibility tree, for the elements surf may list.
	t0 = time.Now()
	wanted := axTargets(cands)
	bySess := map[*cdpSession][]cdp.BackendNodeID{}
	for _, c := range wanted {
		bySess[c.src.sess] = append(bySess[c.src.sess], c.n.backend)
	}
	var amu sync.Mutex
	ax := map[*cdpSession]map[cdp.BackendNodeID]*axInfo{}
	for sess, ids := range bySess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := fetchAX(ctx, sess, ids)
			amu.Lock()
			ax[sess] = m
			amu.Unlock()
		}()
	}
	wg.Wait()
	obs.Timing.AX = time.Since(t0)
	if err := ctx.Err(); err != nil {
		<-imgc
		return nil, err
	}
	for _, c := range wanted {
		c.ax = ax[c.src.sess][c.n.backend]
	}
	coverInert(cands)

	tb0 := time.Now()
	s.buildText(obs, t, cands, snaps, viewport, notes)
	obs.Timing.Text = time.Since(tb0)

	d := <-imgc
	if d.err != nil {
		return nil, d.err
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
	if s.cfg.Image == ImageMarks && (!sameCandidates(pre, final) || !slices.Equal(preMarks, marksOf(final))) {
		t0 := time.Now()
		data, w, h, dropped, err := s.drawMarks(d.raw, nil, marksOf(final), texts, viewport)
		if err != nil {
			return nil, err
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
	obs.Timing.Total = time.Since(start)

	s.seq = obs.Seq
	s.last = obs
	return obs, nil
}

// textBoxes lists the line boxes of the text on screen, for the
// set-of-mark tags to avoid covering.
func textBoxes(snaps []*frameSnap, viewport rect, limit int) []som.Rect {
	var out []som.Rect
	for _, fs := range snaps {
		for _, d := range fs.snap.docs {
			for _, n := range d.nodes {
				if n.nodeType != 3 || len(n.frags) == 0 {
					continue
				}
				clip := n.clipFor().intersect(viewport)
				for _, f := range n.frags {
					if v := f.intersect(clip); !v.empty() {
						out = append(out, som.Rect{X: v.X, Y: v.Y, W: v.W, H: v.H})
						if len(out) >= limit {
							return out
						}
					}
				}
			}
		}
	}
	return out
}

// onScreen lists the candidates on screen, in numbering order.
func onScreen(cands []*candidate) []*candidate {
	var out []*candidate
	for _, c := range cands {
		if c.where == InViewport || c.where == Covered {
			out = append(out, c)
		}
	}
	return out
}

// marksOf numbers on-screen candidates 1..N for the set-of-mark image.
func marksOf(cs []*candidate) []som.Mark {
	marks := make([]som.Mark, len(cs))
	for i, c := range cs {
		marks[i] = som.Mark{ID: i + 1, Box: som.Rect{X: c.vis.X, Y: c.vis.Y, W: c.vis.W, H: c.vis.H}, Covered: c.where == Covered}
	}
	return marks
}

func sameCandidates(a, b []*candidate) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

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
		img, ok := som.Render(jp.Pixels(fp), labels, opts).(*image.YCbCr)
		if ok && jp.Update(img, fp) == nil {
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

// outOfProcessFrames returns the tab's live out-of-process frames, with a
// CDP session each, attaching to new ones. Frames are walked from the main
// frame (playwright-go's Page.Frames keeps detached frames).
func (s *Surfer) outOfProcessFrames(ctx context.Context, t *tab) []*oopif {
	var all []playwright.Frame
	var walk func(f playwright.Frame, depth int)
	walk = func(f playwright.Frame, depth int) {
		if depth > 16 {
			return
		}
		for _, c := range f.ChildFrames() {
			if c.IsDetached() {
				continue
			}
			all = append(all, c)
			walk(c, depth+1)
		}
	}
	walk(t.page.MainFrame(), 0)

	t.fmu.Lock()
	var fresh []playwright.Frame
	for _, f := range all {
		if _, known := t.frames[f]; !known {
			fresh = append(fresh, f)
		}
	}
	t.fmu.Unlock()
	if len(fresh) > 0 {
		var wg sync.WaitGroup
		found := make([]*oopif, len(fresh))
		for i, f := range fresh {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs, err := s.sess.Context().NewCDPSession(f)
				if err != nil {
					return // in-process: read with the page
				}
				o := &oopif{frame: f, sess: s.withDirect(ctx, newCDPSession(cs))}
				var tree page.GetFrameTreeResult
				if err := o.sess.Call(ctx, page.CommandGetFrameTree, nil, &tree); err == nil && tree.FrameTree != nil && tree.FrameTree.Frame != nil {
					o.frameID = string(tree.FrameTree.Frame.ID)
				}
				found[i] = o
			}()
		}
		wg.Wait()
		t.fmu.Lock()
		for i, f := range fresh {
			t.frames[f] = found[i]
		}
		t.fmu.Unlock()
	}
	t.fmu.Lock()
	defer t.fmu.Unlock()
	var out []*oopif
	for _, f := range all {
		if o := t.frames[f]; o != nil {
			out = append(out, o)
		}
	}
	return out
}

// placeFrames parses each out-of-process frame's snapshot at its iframe
// element's place in its parent's snapshot. Parents come before children,
// because frames were walked from the top.
func (s *Surfer) placeFrames(ctx context.Context, t *tab, main *frameSnap, reads []*frameRead, viewport rect, boxes frameBoxes) []*frameRead {
	byFrame := map[playwright.Frame]*frameSnap{}
	for _, r := range reads {
		if r.err != nil || r.res == nil {
			if r.err == nil {
				r.err = errors.New("no snapshot")
			}
			continue
		}
		// The parent session: the nearest ancestor frame that has one.
		parent := main
		for f := r.o.frame.ParentFrame(); f != nil; f = f.ParentFrame() {
			if fs, ok := byFrame[f]; ok {
				parent = fs
				break
			}
		}
		owner, err := s.frameOwner(ctx, parent, r.o)
		if err != nil {
			r.err = err
			continue
		}
		owner.setFrameBox(boxes[parent.sess], parent.snap.originX, parent.snap.originY)
		content := owner.frameBox()
		clip := content.intersect(owner.clipFor())
		fs := &frameSnap{
			snap:   parseSnapshot(r.res, viewport, content.X, content.Y, clip, boxes[r.o.sess]),
			sess:   r.o.sess,
			frame:  r.o.frame.URL(),
			parent: parent,
			owner:  owner,
		}
		r.snap = fs
		byFrame[r.o.frame] = fs
	}
	return reads
}

// frameOwner finds the iframe element showing an out-of-process frame in
// its parent's snapshot.
func (s *Surfer) frameOwner(ctx context.Context, parent *frameSnap, o *oopif) (*snapNode, error) {
	if o.owner == 0 {
		if o.frameID == "" {
			return nil, errors.New("its frame id is unknown")
		}
		res, err := cdp.Call(ctx, parent.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdp.FrameID(o.frameID)})
		if err != nil {
			return nil, fmt.Errorf("finding its iframe: %w", err)
		}
		o.owner = int64(res.BackendNodeID)
	}
	for _, d := range parent.snap.docs {
		for _, n := range d.nodes {
			if int64(n.backend) == o.owner && n.hasLayout {
				return n, nil
			}
		}
	}
	return nil, errors.New("its iframe is not rendered")
}

// maxOffscreen is how many elements above and below the viewport get their
// accessibility data fetched, for the summaries.
const maxOffscreen = 8

// axTargets picks the candidates whose accessibility data is needed: all on
// screen, those hidden in on-screen containers, and the nearest ones above
// and below.
func axTargets(cands []*candidate) []*candidate {
	var out []*candidate
	counts := map[Location]int{}
	for _, c := range cands {
		switch c.where {
		case InViewport, Covered:
		case Clipped:
			if c.dist > 0 {
				continue
			}
			if counts[Clipped] >= maxOffscreen {
				continue
			}
		default:
			if counts[c.where] >= maxOffscreen {
				continue
			}
		}
		counts[c.where]++
		out = append(out, c)
	}
	return out
}

// buildText turns located candidates into numbered elements and renders
// the observation's text within the token budget.
func (s *Surfer) buildText(obs *Observation, t *tab, cands []*candidate, snaps []*frameSnap, viewport rect, notes []string) {
	obs.refs = map[int]*elementRef{}
	listed := map[*snapNode]*Element{}
	var onScreen, above, below, clipped, left, right []*candidate
	for _, c := range cands {
		if c.ax == nil {
			if c.where == InViewport || c.where == Covered {
				// No AX node: the element vanished, or the request failed.
				// Keep it with what the DOM says.
				c.ax = &axInfo{}
			} else {
				obs.Unlisted[c.where]++
				continue
			}
		}
		if c.ax.hidden {
			continue
		}
		switch c.where {
		case InViewport, Covered:
			onScreen = append(onScreen, c)
		case Above:
			above = append(above, c)
		case Below:
			below = append(below, c)
		case Clipped:
			clipped = append(clipped, c)
		case Left:
			left = append(left, c)
		case Right:
			right = append(right, c)
		default:
			obs.Unlisted[c.where]++
		}
	}
	next := 1
	assign := func(c *candidate) *Element {
		e := makeElement(c)
		e.ID = next
		e.Obs = obs.Seq
		next++
		listed[c.n] = e
		obs.refs[e.ID] = &elementRef{el: e, src: c.src, backend: c.n.backend, node: c.n, clickX: c.clickX, clickY: c.clickY, vis: c.vis, cand: c}
		return e
	}
	for _, c := range onScreen {
		assign(c)
	}
	// Frames get short labels, named once.
	frameLabels := map[string]string{}
	var frameLines []string
	label := func(e *Element) {
		if e.Frame == "" {
			return
		}
		l, ok := frameLabels[e.Frame]
		if !ok {
			l = fmt.Sprintf("F%d", len(frameLabels)+1)
			frameLabels[e.Frame] = l
			frameLines = append(frameLines, l+" "+q(e.Frame, 150))
		}
		e.FrameLabel = l
	}
	for _, c := range onScreen {
		label(listed[c.n])
	}
	for _, c := range onScreen {
		e := listed[c.n]
		if c.where == Covered && c.cover != nil {
			owner := coverOwner(c.cover, listed)
			e.CoveredBy = describeCover(owner, listed)
			e.CoverID = coverID(owner, listed)
		}
	}

	tb := &textBuilder{budget: s.cfg.TokenBudget}
	tb.must(fmt.Sprintf("observation %d: url %s title %s", obs.Seq, q(obs.URL, 200), q(obs.Title, 120)))
	vpLine := fmt.Sprintf("viewport %dx%d at the %s of the page", obs.Viewport.Width, obs.Viewport.Height, obs.Viewport.Position)
	if obs.Viewport.Position == "whole page" {
		vpLine = fmt.Sprintf("viewport %dx%d shows the whole page", obs.Viewport.Width, obs.Viewport.Height)
	} else {
		if strings.HasSuffix(obs.Viewport.Position, "down") {
			vpLine = fmt.Sprintf("viewport %dx%d is %s the page", obs.Viewport.Width, obs.Viewport.Height, obs.Viewport.Position)
		}
		vpLine += fmt.Sprintf(", showing %d%% of it", int(obs.Viewport.Shown*100+0.5))
		switch {
		case obs.Viewport.MoreAbove && obs.Viewport.MoreBelow:
			vpLine += "; more above and below"
		case obs.Viewport.MoreBelow:
			vpLine += "; more below"
		case obs.Viewport.MoreAbove:
			vpLine += "; more above"
		}
	}
	tb.must(withSideways(vpLine, obs.Viewport))
	obs.Tabs = s.tabInfos()
	if len(obs.Tabs) > 1 {
		parts := make([]string, len(obs.Tabs))
		for i, ti := range obs.Tabs {
			parts[i] = fmt.Sprintf("%d %s", ti.Index, q(ti.Title, 40))
			if ti.Active {
				parts[i] += " (active)"
			}
		}
		tb.must("tabs: " + strings.Join(parts, "; "))
	}
	obs.Events = s.takeEvents()
	for i, ev := range obs.Events {
		if i == 8 {
			tb.must(fmt.Sprintf("event: … and %d more", len(obs.Events)-8))
			break
		}
		tb.must("event: " + ev.Kind + ": " + ev.Message)
	}
	obs.Blocked = summarizeDenials(s.sess.TakeDenials())
	for _, l := range obs.Blocked.lines() {
		tb.must(l)
	}
	obs.Notes = append(notes, canvasNotes(snaps, viewport, s.cfg.Image != ImageNone)...)
	for _, n := range obs.Notes {
		tb.must("note: " + n)
	}
	for _, c := range onScreen {
		if c.ax != nil && c.ax.focused {
			obs.Focused = listed[c.n].ID
			tb.must(fmt.Sprintf("focused: %d", obs.Focused))
			break
		}
	}

	if len(frameLines) > 0 {
		tb.must("frames: " + strings.Join(frameLines, "; "))
	}
	// On-screen elements get most of what is left.
	tb.must("elements on screen (id role \"name\" state):")
	elemBudget := tb.used + (tb.budget-tb.used)*65/100
	shown := 0
	for _, c := range onScreen {
		e := listed[c.n]
		l := e.line()
		if tb.used+tokensOf(l) > elemBudget || !tb.add(l) {
			break
		}
		shown++
	}
	obs.marked = shown
	if shown < len(onScreen) {
		rest := onScreen[shown:]
		tb.must(moreOnScreen(len(rest), listed[rest[0].n].ID, listed[rest[len(rest)-1].n].ID, s.cfg.Image == ImageMarks, obs.Viewport.MoreBelow))
		obs.Unlisted[InViewport] += len(rest)
	}

	// Off-screen summaries: the nearest first, then counts.
	sumBudget := tb.used + min((tb.budget-tb.used)*35/100, 400)
	summary := func(what string, list []*candidate, loc Location) {
		if len(list) == 0 {
			return
		}
		head := fmt.Sprintf("%s (%d): ", what, len(list))
		var parts []string
		for _, c := range list {
			e := makeElement(c)
			e.ID = next
			p := e.short()
			if c.where == Clipped && c.container != nil {
				if ce, ok := listed[c.container]; ok {
					p += fmt.Sprintf(" (inside %d%s)", ce.ID, sideWords(clippedSide(c)))
				}
			}
			label(e)
			if e.FrameLabel != "" {
				p += " [" + e.FrameLabel + "]"
			}
			trial := head + strings.Join(append(parts, p), "; ")
			if tb.used+tokensOf(trial)+8 > sumBudget {
				break
			}
			assign(c).FrameLabel = e.FrameLabel
			parts = append(parts, p)
		}
		lineStr := head + strings.Join(parts, "; ")
		if more := len(list) - len(parts); more > 0 {
			lineStr += fmt.Sprintf("; +%d more", more)
			obs.Unlisted[loc] += more
		}
		tb.must(lineStr)
	}
	summary("above the viewport", above, Above)
	summary("below the viewport", below, Below)
	summary("scrolled out of view inside containers", clipped, Clipped)
	summary("left of the viewport", left, Left)
	summary("right of the viewport", right, Right)
	for _, c := range append(append([]*candidate{}, onScreen...), clipped...) {
		if e, ok := listed[c.n]; ok && c.where == Clipped && c.container != nil {
			if ce, ok := listed[c.container]; ok {
				e.Container = ce.ID
			}
		}
	}

	// Metadata, when it changed.
	if md := extractMetadata(snaps[0].snap); md != nil {
		fp := md.fingerprint()
		if fp != t.lastMeta {
			t.lastMeta = fp
			obs.Metadata = md
			if l := md.line(); l != "" {
				tb.add(l)
			}
		}
	}

	// The visible text gets the rest.
	obs.VisibleText = visibleText(snaps, viewport, 32<<10)
	nonce := newNonce()
	open, closeLine := "visible text <<<"+nonce, nonce+">>>"
	text := strings.ReplaceAll(obs.VisibleText, nonce, "")
	if strings.TrimSpace(text) != "" && tb.fits(open) {
		tb.must(open)
		reserve := tokensOf(closeLine) + 16
		if s.cfg.Image == ImageMarks && shown >= crowdedMarks {
			reserve += droppedNoteTokens // room for noteDropped's line
		}
		lines := strings.Split(text, "\n")
		for i, l := range lines {
			if tb.used+tokensOf(l)+1+reserve > tb.budget {
				tb.must(fmt.Sprintf("[… %d more lines of visible text; read_page gives the whole page]", len(lines)-i))
				break
			}
			tb.add(l)
		}
		tb.must(closeLine)
	}
	obs.text = s.pol.Redact(tb.b.String())
	obs.VisibleText = s.pol.Redact(obs.VisibleText)
	obs.Tokens = tokensOf(obs.text)
	for _, c := range onScreen {
		obs.Elements = append(obs.Elements, *listed[c.n])
	}
	var off []*Element
	for n, e := range listed {
		_ = n
		if e.Where != InViewport && e.Where != Covered {
			off = append(off, e)
		}
	}
	sort.Slice(off, func(i, j int) bool { return off[i].ID < off[j].ID })
	for _, e := range off {
		obs.Elements = append(obs.Elements, *e)
	}
	// Point the refs at the copies the observation holds; secret values
	// (typed into a field) never show.
	for i := range obs.Elements {
		obs.Elements[i].Value = s.pol.Redact(obs.Elements[i].Value)
		obs.Elements[i].Name = s.pol.Redact(obs.Elements[i].Name)
		obs.refs[obs.Elements[i].ID].el = &obs.Elements[i]
	}
}

// makeElement merges what the snapshot and the accessibility tree say.
func makeElement(c *candidate) *Element {
	n, a := c.n, c.ax
	if a == nil {
		a = &axInfo{}
	}
	e := &Element{
		Role:     a.role,
		Name:     a.name,
		Value:    a.value,
		Checked:  a.checked,
		Pressed:  a.pressed,
		Selected: a.selected,
		Expanded: a.expanded,
		Disabled: a.disabled,
		Focused:  a.focused,
		Required: a.required,
		Readonly: a.readonly,
		Box:      Box{n.box.X, n.box.Y, n.box.W, n.box.H},
		Where:    c.where,
		Tag:      strings.ToLower(n.name),
	}
	e.ClippedSide = clippedSide(c)
	if mapped, ok := chromeRoles[e.Role]; ok {
		e.Role = mapped
	}
	if genericRoles[e.Role] {
		switch {
		case isEditable(n):
			e.Role = "textbox"
		case c.scroll:
			e.Role = "region"
		case c.strong:
			e.Role = tagRole(n)
		default:
			e.Role = "clickable"
		}
	}
	if e.Name == "" {
		if l := domLabel(n); l != "" {
			e.Name = l // an element the accessibility tree ignores (inert) keeps its label
		} else {
			e.Name, e.NameFallback = fallbackName(n)
		}
		if a.inertModal && e.NameFallback && e.Name == n.textContent(80) {
			e.NameFallback = false // named by its content, as it would be were it not inert
		}
	}
	if n.name == "INPUT" {
		e.InputType = strings.ToLower(n.attrOr("type"))
		if e.InputType == "" {
			e.InputType = "text"
		}
		if e.Value == "" && e.InputType != "password" && e.InputType != "checkbox" && e.InputType != "radio" {
			e.Value = n.inputVal
		}
	}
	if e.InputType == "password" {
		e.Value = "" // never show a password field's content
	}
	if p := n.attrOr("placeholder"); p != "" {
		e.Placeholder = p
	} else if p := n.attrOr("aria-placeholder"); p != "" {
		e.Placeholder = p
	}
	if n.name == "SELECT" {
		var chosen []string
		e.Options, chosen = selectOptions(n)
		if _, multi := n.attr("multiple"); multi {
			e.Multiple, e.SelectedOptions = true, chosen
		}
	}
	if n.name == "A" || n.name == "AREA" {
		e.Href = resolveHref(n)
	}
	if c.scroll || (n.clipsOverflow() && (n.scrollsX() || n.scrollsY())) {
		switch {
		case n.scrollsX() && n.scrollsY():
			e.Scrollable = "both"
		case n.scrollsX():
			e.Scrollable = "horizontal"
		default:
			e.Scrollable = "vertical"
		}
	}
	if n.doc.owner != nil || c.src.parent != nil {
		e.Frame = n.doc.url
	}
	return e
}

// chromeRoles maps Chromium's internal role names to ARIA ones the model
// knows.
var chromeRoles = map[string]string{
	"DisclosureTriangle":    "button",
	"PopUpButton":           "combobox",
	"MenuListPopup":         "listbox",
	"MenuListOption":        "option",
	"ListBoxOption":         "option",
	"ToggleButton":          "button",
	"TextField":             "textbox",
	"TextFieldWithComboBox": "combobox",
	"Audio":                 "audio",
	"Video":                 "video",
}

func tagRole(n *snapNode) string {
	switch n.name {
	case "A", "AREA":
		return "link"
	case "BUTTON", "SUMMARY":
		return "button"
	case "SELECT":
		return "combobox"
	case "TEXTAREA":
		return "textbox"
	case "INPUT":
		switch strings.ToLower(n.attrOr("type")) {
		case "checkbox":
			return "checkbox"
		case "radio":
			return "radio"
		case "button", "submit", "reset", "image":
			return "button"
		case "range":
			return "slider"
		}
		return "textbox"
	}
	return "clickable"
}

// fallbackName makes a name for an element without an accessible one.
func fallbackName(n *snapNode) (string, bool) {
	if t := n.textContent(80); t != "" {
		return t, true
	}
	for _, a := range []string{"title", "aria-label", "alt", "value", "name"} {
		if v := strings.TrimSpace(n.attrOr(a)); v != "" {
			return v, true
		}
	}
	// An image inside: its alt or file name.
	var img string
	var walk func(x *snapNode, d int)
	walk = func(x *snapNode, d int) {
		if img != "" || d > 8 {
			return
		}
		if x.name == "IMG" || x.name == "svg" || x.name == "SVG" {
			if v := x.attrOr("alt"); v != "" {
				img = v
				return
			}
			if v := x.attrOr("src"); v != "" {
				if u, err := url.Parse(v); err == nil {
					img = "image " + lastSegment(u.Path)
					return
				}
			}
		}
		for _, c := range x.children {
			walk(c, d+1)
		}
	}
	walk(n, 0)
	if img != "" {
		return img, true
	}
	if id := n.attrOr("id"); id != "" {
		return "#" + id, true
	}
	if cls := strings.Fields(n.attrOr("class")); len(cls) > 0 {
		return "." + strings.Join(cls[:min(len(cls), 2)], "."), true
	}
	return strings.ToLower(n.name), true
}

func lastSegment(p string) string {
	p = strings.TrimRight(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// selectOptions lists a <select>'s option labels, and those of the
// options selected now.
func selectOptions(n *snapNode) (labels, selected []string) {
	var out []string
	var walk func(x *snapNode, d int)
	walk = func(x *snapNode, d int) {
		if d > 3 || len(out) >= 200 {
			return
		}
		for _, c := range x.children {
			switch c.name {
			case "OPTION":
				label := c.attrOr("label")
				if label == "" {
					var b strings.Builder
					for _, t := range c.children {
						if t.nodeType == 3 {
							b.WriteString(t.value)
						}
					}
					label = strings.Join(strings.Fields(b.String()), " ")
				}
				out = append(out, label)
				if c.selected {
					selected = append(selected, label)
				}
			case "OPTGROUP":
				walk(c, d+1)
			}
		}
	}
	walk(n, 0)
	return out, selected
}

func resolveHref(n *snapNode) string {
	h, ok := n.attr("href")
	if !ok {
		return ""
	}
	base := n.doc.baseURL
	if base == "" {
		base = n.doc.url
	}
	b, err := url.Parse(base)
	if err != nil {
		return h
	}
	u, err := b.Parse(strings.TrimSpace(h))
	if err != nil {
		return h
	}
	return u.String()
}

// describeCover names what covers an element.
func describeCover(owner *snapNode, listed map[*snapNode]*Element) string {
	if e, ok := listed[owner]; ok {
		return e.Role + " " + q(e.Name, 40)
	}
	role := strings.ToLower(owner.attrOr("role"))
	if role == "" {
		if owner.name == "DIALOG" {
			role = "dialog"
		} else {
			role = strings.ToLower(owner.name)
		}
	}
	name := domLabel(owner)
	if name == "" {
		name = owner.textContent(40)
	}
	if name == "" {
		return owner.describe()
	}
	return role + " " + q(name, 40)
}

// coverID is the id of the listed element that is the cover or the first
// listed one inside it.
func coverID(owner *snapNode, listed map[*snapNode]*Element) int {
	if e, ok := listed[owner]; ok {
		return e.ID
	}
	best := 0
	for n, e := range listed {
		if n.isDescendantOf(owner) && (best == 0 || e.ID < best) {
			best = e.ID
		}
	}
	return best
}

func tokensOf(s string) int { return tokenCount(s) }

func (s *Surfer) tabInfos() []TabInfo {
	out := make([]TabInfo, len(s.tabs))
	for i, t := range s.tabs {
		out[i] = TabInfo{Index: i, Title: t.title, URL: t.page.URL(), Active: i == s.active}
	}
	return out
}

// visibleText is the text on screen, in document order, a line per
// rendered line, up to max bytes.
func visibleText(snaps []*frameSnap, viewport rect, max int) string {
	var b strings.Builder
	for _, fs := range snaps {
		if b.Len() >= max {
			break
		}
		for _, d := range fs.snap.docs {
			lastBottom := -1e9
			for _, n := range d.nodes {
				if b.Len() >= max {
					break
				}
				if n.nodeType != 3 || !n.hasLayout || n.box.empty() {
					continue
				}
				t := strings.Join(strings.Fields(n.text), " ")
				if t == "" {
					continue
				}
				if n.box.intersect(n.clipFor()).intersect(viewport).empty() {
					continue
				}
				if n.parent != nil && (n.parent.name == "SCRIPT" || n.parent.name == "STYLE" || n.parent.name == "NOSCRIPT") {
					continue
				}
				if b.Len() > 0 {
					if n.box.Y >= lastBottom-2 {
						b.WriteByte('\n')
					} else {
						b.WriteByte(' ')
					}
				}
				b.WriteString(t)
				lastBottom = max64(lastBottom, n.box.bottom())
				if n.box.Y >= lastBottom-2 {
					lastBottom = n.box.bottom()
				}
			}
		}
	}
	return truncate(b.String(), max)
}

func max64(a, b float64) float64 {
	if a > b {
		return a
	}
	return b
}

// canvasNotes says plainly what surf cannot read: canvas pixels and
// plugin content on screen; shot says whether the observation has a
// screenshot to point to.
func canvasNotes(snaps []*frameSnap, viewport rect, shot bool) []string {
	see := "; see the screenshot"
	if !shot {
		see = ""
	}
	var out []string
	for _, fs := range snaps {
		for _, d := range fs.snap.docs {
			for _, n := range d.nodes {
				if n.name != "CANVAS" && n.name != "EMBED" && n.name != "OBJECT" {
					continue
				}
				if !n.hasLayout || n.box.W < 16 || n.box.H < 16 || n.box.intersect(n.clipFor()).intersect(viewport).empty() {
					continue
				}
				what := "canvas"
				if n.name != "CANVAS" {
					what = "embedded object"
				}
				label := n.attrOr("aria-label")
				if label == "" {
					label = n.attrOr("title")
				}
				name := ""
				if label != "" {
					name = " " + q(label, 40)
				}
				out = append(out, fmt.Sprintf("%s%s at (%d,%d) %dx%d: its content is pixels only, surf cannot read it%s",
					what, name, int(n.box.X), int(n.box.Y), int(n.box.W), int(n.box.H), see))
				if len(out) >= 5 {
					return out
				}
			}
		}
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
	return s.maskedScreenshot(ctx, s.tabs[s.active])
}

// Blocked summarizes what the policy stopped since the last observation.
type Blocked struct {
	// Navigations are the pages and actions stopped, each with why.
	Navigations []string `json:"navigations,omitempty"`
	// Requests counts subresource requests stopped, and Hosts names their
	// hosts (the first few).
	Requests int      `json:"requests,omitempty"`
	Hosts    []string `json:"hosts,omitempty"`
	// Unrecorded counts subresource requests a replayed session refused
	// because its recording does not hold them, and UnrecordedURLs names
	// the first few.
	Unrecorded     int      `json:"unrecorded,omitempty"`
	UnrecordedURLs []string `json:"unrecorded_urls,omitempty"`
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

func (b Blocked) lines() []string {
	var out []string
	for _, n := range b.Navigations {
		out = append(out, "blocked: "+n)
	}
	if b.Requests > 0 {
		out = append(out, fmt.Sprintf("blocked: %d subresource requests by the policy (hosts %s)", b.Requests, quoteList(b.Hosts, 8)))
	}
	if b.Unrecorded > 0 {
		urls := make([]string, len(b.UnrecordedURLs))
		for i, u := range b.UnrecordedURLs {
			urls[i] = q(u, 120)
		}
		more := ""
		if b.Unrecorded > len(urls) {
			more = ", ..."
		}
		out = append(out, fmt.Sprintf("blocked: %d subresource requests not in recording (%s%s)", b.Unrecorded, strings.Join(urls, ", "), more))
	}
	return out
}
