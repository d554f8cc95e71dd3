package websurfer

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/surfkit/surf/perception"
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
type frameBoxes map[*cdpSession]map[cdp.BackendNodeID]perception.FrameBox

// readFrameBoxes asks the browser for the content box of every iframe
// element showing a frame: those in each snapshot that hold same-process
// documents, and the iframe of each out-of-process frame in its parent's
// session. The calls run concurrently; an iframe whose box cannot be read
// is left out (the snapshot's estimate is used for it).
//
// The boxes of the tab's own iframe elements that ahead asked for are read
// from its replies; the iframe elements of this snapshot are kept for the
// next observation to send ahead.
func (s *Surfer) readFrameBoxes(ctx context.Context, t *tab, mainRes *domsnapshot.CaptureSnapshotResult, reads []*frameRead, ahead *boxAhead) frameBoxes {
	type job struct {
		sess *cdpSession
		id   cdp.BackendNodeID
		o    *oopif // an out-of-process frame whose owner id is not known yet
	}
	var jobs []job
	owners := perception.OwnerIDs(mainRes)
	for _, id := range owners {
		jobs = append(jobs, job{sess: t.sess, id: id})
	}
	ahead.keep(owners)
	byFrame := map[playwright.Frame]*oopif{}
	for _, r := range reads {
		byFrame[r.o.frame] = r.o
	}
	for _, r := range reads {
		if r.err != nil || r.res == nil {
			continue
		}
		for _, id := range perception.OwnerIDs(r.res) {
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
			var b perception.FrameBox
			var ok bool
			if reply := ahead.sentFor(j.sess, id); reply != nil {
				var res dom.GetBoxModelResult
				if reply(ctx, &res) == nil {
					b, ok = contentBox(res)
				}
			} else {
				b, ok = contentBoxOf(ctx, j.sess, id)
			}
			if !ok {
				return
			}
			mu.Lock()
			if out[j.sess] == nil {
				out[j.sess] = map[cdp.BackendNodeID]perception.FrameBox{}
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
func contentBoxOf(ctx context.Context, sess *cdpSession, id cdp.BackendNodeID) (perception.FrameBox, bool) {
	res, err := cdp.Call(ctx, sess, dom.GetBoxModel, dom.GetBoxModelParams{BackendNodeID: id})
	if err != nil {
		return perception.FrameBox{}, false
	}
	return contentBox(res)
}

// contentBox is contentBoxOf's reading of DOM.getBoxModel's result.
func contentBox(res dom.GetBoxModelResult) (perception.FrameBox, bool) {
	if res.Model == nil || len(res.Model.Content) != 8 || len(res.Model.Border) != 8 {
		return perception.FrameBox{}, false
	}
	c, b := quadBounds(res.Model.Content), quadBounds(res.Model.Border)
	if c.Empty() {
		return perception.FrameBox{}, false
	}
	zoom := 1.0
	if res.Model.Width > 0 && b.W > 0 {
		zoom = b.W / float64(res.Model.Width)
		if math.Abs(zoom-1) < 0.01 || zoom < 0.05 || zoom > 20 {
			zoom = 1
		}
	}
	return perception.FrameBox{Content: c, Zoom: zoom}, true
}

func quadBounds(q dom.Quad) rect {
	x0, y0 := math.Min(math.Min(q[0], q[2]), math.Min(q[4], q[6])), math.Min(math.Min(q[1], q[3]), math.Min(q[5], q[7]))
	x1, y1 := math.Max(math.Max(q[0], q[2]), math.Max(q[4], q[6])), math.Max(math.Max(q[1], q[3]), math.Max(q[5], q[7]))
	return rect{X: x0, Y: y0, W: x1 - x0, H: y1 - y0}
}

// maxBoxesAhead bounds the frame-box reads sent ahead of an observation.
const maxBoxesAhead = 32

// boxAhead is an observation's frame-box reads sent before its snapshot
// is read, as axAhead's accessibility reads are: DOM.getBoxModel of the
// iframe elements the tab's last observation of the same document placed,
// on the direct session right behind the snapshot and before the
// accessibility reads, for the renderer to answer while surf decodes the
// snapshot. They run after the snapshot, so what they say is no older
// than it. readFrameBoxes takes the replies of the iframes the snapshot
// still has and asks for the others; the rest are dropped as they come. A
// nil *boxAhead has nothing sent and keeps nothing.
type boxAhead struct {
	t       *tab
	rnav    int64
	replies map[cdp.BackendNodeID]axReply
	used    atomic.Int32
}

// sendBoxesAhead sends the box reads of the iframe elements the tab's last
// observation of the same document placed; it is called right after the
// snapshot is sent on the direct session.
func sendBoxesAhead(ctx context.Context, t *tab) *boxAhead {
	a := &boxAhead{t: t, rnav: t.rnav.Load()}
	seen := t.boxSeen
	if t.sess.direct == nil || len(seen.ids) == 0 || seen.rnav != a.rnav {
		return a
	}
	a.replies = make(map[cdp.BackendNodeID]axReply, len(seen.ids))
	for _, id := range seen.ids {
		wait, err := t.sess.sendDirect(ctx, dom.CommandGetBoxModel, dom.GetBoxModelParams{BackendNodeID: id})
		if err != nil {
			break // the others are asked for when wanted
		}
		a.replies[id] = wait
	}
	return a
}

// sentFor returns the reply of the read of id sent ahead on sess, nil if
// none was.
func (a *boxAhead) sentFor(sess *cdpSession, id cdp.BackendNodeID) axReply {
	if a == nil || sess != a.t.sess {
		return nil
	}
	r := a.replies[id]
	if r != nil {
		a.used.Add(1)
	}
	return r
}

// keep records the iframe elements of the tab's own document, for the
// next observation to send ahead.
func (a *boxAhead) keep(ids []cdp.BackendNodeID) {
	if a == nil {
		return
	}
	a.t.boxSeen = seenNodes{rnav: a.rnav, ids: slices.Clone(ids[:min(len(ids), maxBoxesAhead)])}
}
