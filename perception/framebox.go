package perception

import (
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// FrameBox is an iframe element's content box and the zoom it renders
// its document at (CSS zoom on it or its ancestors: the frame's own CSS
// pixels are that many viewport pixels).
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

// frameScale is how many viewport pixels one CSS pixel of the frame an
// iframe element shows is (its CSS zoom): the browser hit-tests a frame in
// its own CSS pixels, while the snapshot gives its boxes as rendered.
func (n *Node) frameScale() float64 {
	if n.frameKnown && n.frameZoom > 0 {
		return n.frameZoom
	}
	return 1
}

// setFrameBox records an iframe's content box from boxes (in its
// session's viewport coordinates, which start at originX, originY), if
// the browser reported one.
func (n *Node) setFrameBox(boxes map[cdp.BackendNodeID]FrameBox, originX, originY float64) {
	if b, ok := boxes[n.backend]; ok {
		n.frameContent, n.frameZoom, n.frameKnown = b.Content.Offset(originX, originY), b.Zoom, true
	}
}
