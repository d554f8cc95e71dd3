package perception

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// FrameBox is an iframe element's content box and its zoom: its rendered
// width over its width in CSS pixels (CSS zoom on it or its ancestors,
// times the scale of CSS transforms on them).
type FrameBox struct {
	Content Rect    `json:"content"`
	Zoom    float64 `json:"zoom"`
}

// OwnerIDs lists the backend node ids of the iframe elements whose
// documents a snapshot holds (same-process frames).
func OwnerIDs(res *domsnapshot.CaptureSnapshotResult) []cdp.BackendNodeID {
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

// frameBox is where an iframe element shows its document, in viewport
// coordinates: the content box the browser reported for it, or, when it
// did not, the inside of its border as the snapshot gives it.
func (n *Node) frameBox() Rect {
	if n.frameKnown {
		return n.frameContent
	}
	return n.contentBox()
}

// setFrameBox records an iframe's content box from boxes (in its
// session's viewport coordinates, whose (0,0) is at originX, originY and
// whose pixels are scale viewport pixels), if the browser reported one.
func (n *Node) setFrameBox(boxes map[cdp.BackendNodeID]FrameBox, originX, originY, scale float64) {
	if b, ok := boxes[n.backend]; ok {
		c := b.Content
		n.frameContent = Rect{originX + c.X*scale, originY + c.Y*scale, c.W * scale, c.H * scale}
		n.frameZoom, n.frameKnown = b.Zoom, true
	}
}
