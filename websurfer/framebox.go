package websurfer

import (
	"context"
	"math"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// frameBoxes holds where iframe elements show their documents: the content
// quad DOM.getBoxModel gives for each iframe element (inside its border and
// its padding, with CSS zoom and translations applied), by the CDP session
// that holds the element and its backend node id, in that session's
// viewport coordinates.
//
// The snapshot alone cannot place a frame's document exactly: it gives the
// iframe's border box, and its computed border and padding widths are
// before zoom.
type frameBoxes map[*cdpSession]map[cdp.BackendNodeID]frameBox

// frameBox is an iframe element's content box and the zoom it renders
// its document at (CSS zoom on it or its ancestors: the frame's own CSS
// pixels are that many viewport pixels).
type frameBox struct {
	content rect
	zoom    float64
}

// ownerIDs lists the backend node ids of the iframe elements whose
// documents a snapshot holds (same-process frames).
func ownerIDs(res *domsnapshot.CaptureSnapshotResult) []cdp.BackendNodeID {
	var out []cdp.BackendNodeID
	for _, d := range res.Documents {
		nt := d.Nodes
		if nt == nil || nt.ContentDocumentIndex == nil {
			continue
		}
		for _, idx := range nt.ContentDocumentIndex.Index {
			if idx >= 0 && int(idx) < len(nt.BackendNodeID) {
				out = append(out, nt.BackendNodeID[idx])
			}
		}
	}
	return out
}

// readFrameBoxes asks the browser for the content box of every iframe
// element showing a frame: those in each snapshot that hold same-process
// documents, and the iframe of each out-of-process frame in its parent's
// session. The calls run concurrently; an iframe whose box cannot be read
// is left out (the snapshot's estimate is used for it).
func (s *Surfer) readFrameBoxes(ctx context.Context, t *tab, mainRes *domsnapshot.CaptureSnapshotResult, reads []*frameRead) frameBoxes {
	type job struct {
		sess *cdpSession
		id   cdp.BackendNodeID
		o    *oopif // an out-of-process frame whose owner id is not known yet
	}
	var jobs []job
	for _, id := range ownerIDs(mainRes) {
		jobs = append(jobs, job{sess: t.sess, id: id})
	}
	byFrame := map[playwright.Frame]*oopif{}
	for _, r := range reads {
		byFrame[r.o.frame] = r.o
	}
	for _, r := range reads {
		if r.err != nil || r.res == nil {
			continue
		}
		for _, id := range ownerIDs(r.res) {
			jobs = append(jobs, job{sess: r.o.sess, id: id})
		}
		parent := t.sess
		for f := r.o.frame.ParentFrame(); f != nil; f = f.ParentFrame() {
			if o, ok := byFrame[f]; ok {
				parent = o.sess
				break
			}
		}
		jobs = append(jobs, job{sess: parent, id: cdp.BackendNodeID(r.o.owner), o: r.o})
	}
	if len(jobs) == 0 {
		return nil
	}
	out := frameBoxes{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := j.id
			if j.o != nil && id == 0 {
				if j.o.frameID == "" {
					return
				}
				res, err := cdp.Call(ctx, j.sess, dom.GetFrameOwner, dom.GetFrameOwnerParams{FrameID: cdp.FrameID(j.o.frameID)})
				if err != nil {
					return
				}
				id = res.BackendNodeID
				j.o.owner = int64(id) // each frame's owner is read by this goroutine only
			}
			b, ok := contentBoxOf(ctx, j.sess, id)
			if !ok {
				return
			}
			mu.Lock()
			if out[j.sess] == nil {
				out[j.sess] = map[cdp.BackendNodeID]frameBox{}
			}
			out[j.sess][id] = b
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// contentBoxOf reads an element's content box (the bounds of its content
// quad) in its session's viewport coordinates, and its zoom: its border
// quad's width over its width in its own CSS pixels.
func contentBoxOf(ctx context.Context, sess *cdpSession, id cdp.BackendNodeID) (frameBox, bool) {
	res, err := cdp.Call(ctx, sess, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: id})
	if err != nil || res.Model == nil || len(res.Model.Content) != 8 || len(res.Model.Border) != 8 {
		return frameBox{}, false
	}
	c, b := quadBounds(res.Model.Content), quadBounds(res.Model.Border)
	if c.empty() {
		return frameBox{}, false
	}
	zoom := 1.0
	if res.Model.Width > 0 && b.W > 0 {
		zoom = b.W / float64(res.Model.Width)
		if math.Abs(zoom-1) < 0.01 || zoom < 0.05 || zoom > 20 {
			zoom = 1
		}
	}
	return frameBox{content: c, zoom: zoom}, true
}

func quadBounds(q dom.Quad) rect {
	x0, y0 := math.Min(math.Min(q[0], q[2]), math.Min(q[4], q[6])), math.Min(math.Min(q[1], q[3]), math.Min(q[5], q[7]))
	x1, y1 := math.Max(math.Max(q[0], q[2]), math.Max(q[4], q[6])), math.Max(math.Max(q[1], q[3]), math.Max(q[5], q[7]))
	return rect{x0, y0, x1 - x0, y1 - y0}
}

// frameBox is where an iframe element shows its document, in viewport
// coordinates: the content box the browser reported for it, or, when it
// did not, the inside of its border as the snapshot gives it.
func (n *snapNode) frameBox() rect {
	if n.frameKnown {
		return n.frameContent
	}
	return n.contentBox()
}

// frameScale is how many viewport pixels one CSS pixel of the frame an
// iframe element shows is (its CSS zoom): the browser hit-tests a frame in
// its own CSS pixels, while the snapshot gives its boxes as rendered.
func (n *snapNode) frameScale() float64 {
	if n.frameKnown && n.frameZoom > 0 {
		return n.frameZoom
	}
	return 1
}

// setFrameBox records an iframe's content box from boxes (in its
// session's viewport coordinates, which start at originX, originY), if
// the browser reported one.
func (n *snapNode) setFrameBox(boxes map[cdp.BackendNodeID]frameBox, originX, originY float64) {
	if b, ok := boxes[n.backend]; ok {
		n.frameContent, n.frameZoom, n.frameKnown = b.content.offset(originX, originY), b.zoom, true
	}
}
