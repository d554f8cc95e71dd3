package websurfer

import (
	"context"
	"math"
	"sync"

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
func (s *Surfer) readFrameBoxes(ctx context.Context, t *tab, mainRes *domsnapshot.CaptureSnapshotResult, reads []*frameRead) frameBoxes {
	type job struct {
		sess *cdpSession
		id   cdp.BackendNodeID
		o    *oopif // an out-of-process frame whose owner id is not known yet
	}
	var jobs []job
	for _, id := range perception.OwnerIDs(mainRes) {
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
			b, ok := contentBoxOf(ctx, j.sess, id)
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
	if err != nil || res.Model == nil || len(res.Model.Content) != 8 || len(res.Model.Border) != 8 {
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
