package websurfer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// An observation is captured in named phases: capturePage reads what the
// browser has (snapshots, metrics, out-of-process frames, frame boxes);
// perception.Perceive parses it and locates the elements; fetchAX reads
// the accessibility data of the elements that step picks; perception.Number
// and perception.Render number them and write the text; drawMarks draws
// the image. Frames carry their *cdpSession as perception's opaque Handle.

// frameRead is one out-of-process frame's snapshot, read concurrently with
// the page's.
type frameRead struct {
	o   *oopif
	res *domsnapshot.CaptureSnapshotResult
	err error
}

// sessOf is the CDP session of a perceived frame.
func sessOf(fs *frameSnap) *cdpSession {
	sess, _ := fs.Handle.(*cdpSession)
	return sess
}

// capturePage reads the active tab for an observation: its layout metrics
// and DOM snapshot, those of its out-of-process frames, and where its
// iframe elements show their documents. On the direct session the reads
// are sent in the order the renderer is to run them: the metrics, the
// snapshot, then the frame boxes and the accessibility reads of ahead. (The
// metrics, sent from a goroutine of their own, used to land behind up to a
// hundred accessibility reads, and the frame boxes, asked for once the
// snapshot was read, behind all of them.)
func (s *Surfer) capturePage(ctx context.Context, t *tab, ahead *axAhead) (*perception.Capture, error) {
	frames := s.outOfProcessFrames(ctx, t)
	var (
		wg      sync.WaitGroup
		metrics page.GetLayoutMetricsResult
		mErr    error
		mainRes *domsnapshot.CaptureSnapshotResult
		mainErr error
	)
	metricsWait := func() error { return t.sess.Call(ctx, page.CommandGetLayoutMetrics, nil, &metrics) }
	wait := func() (*domsnapshot.CaptureSnapshotResult, error) { return captureSnapshot(ctx, t.sess) }
	if t.sess.direct != nil {
		reply, err := t.sess.sendDirect(ctx, page.CommandGetLayoutMetrics, nil)
		metricsWait = func() error {
			if err != nil {
				return err
			}
			return reply(ctx, &metrics)
		}
		wait = sendSnapshot(ctx, t.sess)
		ahead.boxes = sendBoxesAhead(ctx, t)
		ahead.send(ctx)
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		mErr = metricsWait()
	}()
	go func() {
		defer wg.Done()
		mainRes, mainErr = wait()
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
	if mErr == nil && metrics.CSSLayoutViewport == nil {
		mErr = errors.New("reading the viewport: no layout viewport")
	}
	if err := errors.Join(mErr, mainErr); err != nil {
		return nil, err
	}
	return s.assemble(ctx, t, &metrics, mainRes, reads, ahead.boxes), nil
}

// assemble puts what was read into a perception.Capture: the frame boxes
// are read (those sent ahead from their replies), and each out-of-process
// frame is given its parent and the iframe element showing it.
func (s *Surfer) assemble(ctx context.Context, t *tab, metrics *page.GetLayoutMetricsResult, mainRes *domsnapshot.CaptureSnapshotResult, reads []*frameRead, ahead *boxAhead) *perception.Capture {
	boxes := s.readFrameBoxes(ctx, t, mainRes, reads, ahead)
	c := &perception.Capture{URL: t.page.URL(), Metrics: metrics, Main: mainRes, Boxes: boxes[t.sess], Handle: t.sess}
	index := map[playwright.Frame]int{}
	for i, r := range reads {
		index[r.o.frame] = i
		fc := perception.FrameCapture{URL: r.o.frame.URL(), Parent: -1, Snapshot: r.res, Boxes: boxes[r.o.sess], Handle: r.o.sess}
		for f := r.o.frame.ParentFrame(); f != nil; f = f.ParentFrame() {
			if j, ok := index[f]; ok {
				fc.Parent = j
				break
			}
		}
		switch {
		case r.err != nil:
			fc.Err = r.err.Error()
		case r.res != nil:
			if err := s.frameOwner(ctx, t, c, fc.Parent, r.o); err != nil {
				fc.Err = err.Error()
			}
		}
		fc.Owner = cdp.BackendNodeID(r.o.owner)
		c.Frames = append(c.Frames, fc)
	}
	return c
}

// frameOwner asks the parent frame for the iframe element showing an
// out-of-process frame, when the frame boxes did not find it. The parent is
// the nearest frame around it that was read.
func (s *Surfer) frameOwner(ctx context.Context, t *tab, c *perception.Capture, parent int, o *oopif) error {
	if o.owner != 0 {
		return nil
	}
	if o.frameID == "" {
		return errors.New("its frame id is unknown")
	}
	sess := t.sess
	for ; parent >= 0; parent = c.Frames[parent].Parent {
		if fc := c.Frames[parent]; fc.Err == "" && fc.Snapshot != nil {
			sess = fc.Handle.(*cdpSession)
			break
		}
	}
	res, err := cdp.Call(ctx, sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdp.FrameID(o.frameID)})
	if err != nil {
		return fmt.Errorf("finding its iframe: %w", err)
	}
	o.owner = int64(res.BackendNodeID)
	return nil
}

// axNodes are the accessibility nodes an observation read, by session.
type axNodes = map[*cdpSession]map[cdp.BackendNodeID]*accessibility.Node

// fetchAX reads the accessibility data of the elements perception picks
// (perception.AXTargets), each frame's on its own session, sets it, and
// returns the nodes read by session.
func fetchAX(ctx context.Context, p *perception.Page, ahead *axAhead) axNodes {
	wanted := perception.AXTargets(p)
	bySess := map[*cdpSession][]cdp.BackendNodeID{}
	for _, c := range wanted {
		bySess[sessOf(c.Frame)] = append(bySess[sessOf(c.Frame)], c.Node.Backend())
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ax := map[*cdpSession]map[cdp.BackendNodeID]*accessibility.Node{}
	for sess, ids := range bySess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := fetchAXNodes(ctx, sess, ids, ahead.sentOn(sess), &ahead.used)
			mu.Lock()
			ax[sess] = m
			mu.Unlock()
		}()
	}
	wg.Wait()
	for _, c := range wanted {
		c.SetAX(ax[sessOf(c.Frame)][c.Node.Backend()])
	}
	ahead.keep(bySess[ahead.t.sess])
	return ax
}

// axConcurrency bounds the AX requests in flight per session.
const axConcurrency = 24

// fetchAXNodes asks Chromium for the accessibility node of each backend node,
// concurrently; those already asked for (sent) are read from their
// replies. Nodes that vanished in the meantime are left out.
func fetchAXNodes(ctx context.Context, sess *cdpSession, ids []cdp.BackendNodeID, sent map[cdp.BackendNodeID]axReply, used *atomic.Int32) map[cdp.BackendNodeID]*accessibility.Node {
	out := make(map[cdp.BackendNodeID]*accessibility.Node, len(ids))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, axConcurrency)
	no := false
	for _, id := range ids {
		wg.Add(1)
		reply, ok := sent[id]
		if !ok {
			sem <- struct{}{}
		}
		go func() {
			defer wg.Done()
			var res accessibility.GetPartialAXTreeResult
			var err error
			if ok {
				err = reply(ctx, &res)
				used.Add(1)
			} else {
				defer func() { <-sem }()
				res, err = cdp.Call(ctx, sess, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: id, FetchRelatives: &no})
			}
			if err != nil {
				return
			}
			for _, n := range res.Nodes {
				if n.BackendDOMNodeID == id {
					mu.Lock()
					out[id] = n
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return out
}

// axReply waits for the reply to an accessibility read sent ahead.
type axReply func(ctx context.Context, result any) error

// maxAXAhead bounds the accessibility reads sent ahead of an observation.
const maxAXAhead = 96

// axAhead is an observation's accessibility reads sent before it knows
// which elements it lists: right behind the page's DOM snapshot, on the
// direct session, for the elements the tab's last observation of the same
// document read, which the next one mostly reads again (a page observed
// after typing, a click that opens a menu, or unchanged). The renderer
// answers them while surf decodes the snapshot instead of after, and runs
// them after the snapshot, so what they say is no older than the
// snapshot, as when they are sent later. Those the observation then
// wants are read from their replies, the others it asks for as before,
// and the replies nobody wants are dropped as they come.
type axAhead struct {
	t       *tab
	rnav    int64 // the tab's rnav when the observation began
	replies map[cdp.BackendNodeID]axReply
	used    atomic.Int32 // the replies read
	boxes   *boxAhead    // the frame boxes sent ahead with them, if any
}

// seenNodes is what a tab's last observation asked the browser about in
// its own document: the backend node ids (accessibility nodes or iframe
// elements), and the tab's rnav then (a navigation makes them another
// document's).
type seenNodes struct {
	rnav int64
	ids  []cdp.BackendNodeID
}

// newAXAhead starts an observation's accessibility reads of tab t.
func newAXAhead(t *tab) *axAhead {
	return &axAhead{t: t, rnav: t.rnav.Load()}
}

// send sends the reads of the nodes the tab's last observation of the same
// document asked for; it is called right after the snapshot is sent.
func (a *axAhead) send(ctx context.Context) {
	t := a.t
	seen := t.axSeen
	if t.sess.direct == nil || len(seen.ids) == 0 || seen.rnav != a.rnav {
		return
	}
	no := false
	a.replies = make(map[cdp.BackendNodeID]axReply, len(seen.ids))
	for _, id := range seen.ids {
		wait, err := t.sess.sendDirect(ctx, accessibility.CommandGetPartialAXTree, accessibility.GetPartialAXTreeParams{BackendNodeID: id, FetchRelatives: &no})
		if err != nil {
			return // the others are asked for when wanted
		}
		a.replies[id] = wait
	}
}

// sentOn returns the reads sent ahead on sess.
func (a *axAhead) sentOn(sess *cdpSession) map[cdp.BackendNodeID]axReply {
	if sess != a.t.sess {
		return nil
	}
	return a.replies
}

// keep records the nodes read on the tab's own session, for the next
// observation to send ahead.
func (a *axAhead) keep(ids []cdp.BackendNodeID) {
	a.t.axSeen = seenNodes{rnav: a.rnav, ids: slices.Clone(ids[:min(len(ids), maxAXAhead)])}
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
