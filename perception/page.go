package perception

import (
	"errors"
	"fmt"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
)

// DefaultTokenBudget is the o200k token budget of an observation's text
// when none is given.
const DefaultTokenBudget = 2500

// Capture is what the browser returned for one observation of a tab,
// decoded: the layout metrics, the page's snapshot and those of its
// out-of-process frames, and where iframe elements show their documents.
type Capture struct {
	// URL is the page's URL as the browser has it; empty means the main
	// document's.
	URL     string                             `json:"url"`
	Metrics *page.GetLayoutMetricsResult       `json:"metrics"`
	Main    *domsnapshot.CaptureSnapshotResult `json:"main"`
	// Boxes are the content boxes of the page snapshot's iframe elements
	// (DOM.getBoxModel), by backend node id.
	Boxes map[cdp.BackendNodeID]FrameBox `json:"boxes,omitempty"`
	// Frames are the out-of-process frames, parents before children.
	Frames []FrameCapture `json:"frames,omitempty"`
	// Handle is the caller's binding of the page (see Frame.Handle).
	Handle any `json:"-"`
}

// FrameCapture is one out-of-process frame of a Capture.
type FrameCapture struct {
	URL string `json:"url"`
	// Parent is the index in Capture.Frames of the nearest out-of-process
	// frame around this one, -1 for the page.
	Parent int `json:"parent"`
	// Owner is the backend node id of the iframe element showing the frame
	// in its parent's snapshot; 0 if the browser did not say.
	Owner    cdp.BackendNodeID                  `json:"owner,omitempty"`
	Snapshot *domsnapshot.CaptureSnapshotResult `json:"snapshot,omitempty"`
	Boxes    map[cdp.BackendNodeID]FrameBox     `json:"boxes,omitempty"`
	// Err says why the frame could not be read, if it could not.
	Err    string `json:"err,omitempty"`
	Handle any    `json:"-"`
}

// Page is a Capture parsed and located: the snapshots, the viewport, and
// the candidate elements in numbering order.
type Page struct {
	URL      string
	Title    string
	View     Rect // the layout viewport
	Viewport Viewport
	// Frames are the page's snapshot first, then those of the
	// out-of-process frames that could be placed.
	Frames     []*Frame
	Candidates []*Candidate
	// Notes say which frames could not be read (Unread).
	Notes  []string
	Unread []UnreadFrame
}

// UnreadFrame is an out-of-process frame that could not be read or placed.
type UnreadFrame struct {
	URL string
	Err error
}

// Perceive parses a capture (see Parse), and finds and locates the
// elements surf may list. It is pure: the same capture gives the same page.
func Perceive(c *Capture) (*Page, error) {
	p, err := Parse(c)
	if err != nil {
		return nil, err
	}
	// Elements: candidates from every snapshot, located, ordered.
	for _, fs := range p.Frames {
		p.Candidates = append(p.Candidates, findCandidates(fs, p.View)...)
	}
	locate(p.Candidates, p.View)
	orderCandidates(p.Candidates)
	return p, nil
}

// Parse parses a capture's snapshots, places its out-of-process frames at
// their iframe elements, and reads where the viewport is on the page.
func Parse(c *Capture) (*Page, error) {
	if c == nil || c.Main == nil {
		return nil, errors.New("perceiving the page: no snapshot")
	}
	if c.Metrics == nil || c.Metrics.CSSLayoutViewport == nil {
		return nil, errors.New("reading the viewport: no layout viewport")
	}
	vp := c.Metrics.CSSLayoutViewport
	p := &Page{View: Rect{0, 0, float64(vp.ClientWidth), float64(vp.ClientHeight)}}
	main := &Frame{Snap: parseSnapshot(c.Main, p.View, topPlacement, Everywhere, c.Boxes), boxes: c.Boxes, Handle: c.Handle}
	p.Frames = []*Frame{main}
	placeFrames(p, c.Frames)

	p.URL = c.URL
	if d := main.Snap.docs; len(d) > 0 {
		p.Title = d[0].title
		if p.URL == "" {
			p.URL = d[0].url
		}
	}
	p.Viewport = Viewport{
		Width: int(vp.ClientWidth), Height: int(vp.ClientHeight),
		ScrollX: float64(vp.PageX), ScrollY: float64(vp.PageY),
	}
	if cs := c.Metrics.CSSContentSize; cs != nil {
		p.Viewport.PageWidth, p.Viewport.PageHeight = cs.Width, cs.Height
	}
	p.Viewport.Shown, p.Viewport.Position, p.Viewport.MoreAbove, p.Viewport.MoreBelow =
		position(p.Viewport.ScrollY, p.View.H, p.Viewport.PageHeight)
	p.Viewport.horizontalExtent()
	return p, nil
}

// placeFrames parses each out-of-process frame's snapshot at its iframe
// element's place in its parent's snapshot, and notes each frame that
// could not be read. Parents come before children.
func placeFrames(p *Page, frames []FrameCapture) {
	placed := make([]*Frame, len(frames))
	for i, fc := range frames {
		fs, err := placeFrame(p, frames, placed, i)
		if err != nil {
			p.Unread = append(p.Unread, UnreadFrame{URL: fc.URL, Err: err})
			p.Notes = append(p.Notes, fmt.Sprintf("frame %s could not be read: %v", Quote(fc.URL, 80), err))
			continue
		}
		placed[i] = fs
		p.Frames = append(p.Frames, fs)
	}
}

func placeFrame(p *Page, frames []FrameCapture, placed []*Frame, i int) (*Frame, error) {
	fc := frames[i]
	switch {
	case fc.Err != "":
		return nil, errors.New(fc.Err)
	case fc.Snapshot == nil:
		return nil, errors.New("no snapshot")
	}
	// The parent: the nearest frame around it that was placed.
	parent := p.Frames[0]
	for a, d := fc.Parent, 0; a >= 0 && a < i && d <= len(frames); a, d = frames[a].Parent, d+1 {
		if placed[a] != nil {
			parent = placed[a]
			break
		}
	}
	owner := parent.ownerOf(fc.Owner)
	if owner == nil {
		if fc.Owner == 0 {
			return nil, errors.New("its frame id is unknown")
		}
		return nil, errors.New("its iframe is not rendered")
	}
	ps := parent.Snap
	owner.setFrameBox(parent.boxes, ps.originX, ps.originY, ps.scale)
	content := owner.frameBox()
	clip := content.Intersect(owner.clipFor())
	var pl placement
	if owner.frameKnown {
		var doc *domsnapshot.DocumentSnapshot
		if len(fc.Snapshot.Documents) > 0 {
			doc = fc.Snapshot.Documents[0]
		}
		pl = framePlacement(content, owner.frameZoom*ps.scale, doc, fc.Snapshot.Strings)
	} else {
		// No box from the browser: inside its iframe's border, as its
		// parent is.
		pl = placement{X: content.X, Y: content.Y, Scale: ps.scale, Zoom: 1}
	}
	return &Frame{
		Snap:   parseSnapshot(fc.Snapshot, p.View, pl, clip, fc.Boxes),
		boxes:  fc.Boxes,
		Handle: fc.Handle,
		URL:    fc.URL,
		Parent: parent,
		Owner:  owner,
	}, nil
}

// ownerOf finds the laid-out iframe element with a backend id.
func (fs *Frame) ownerOf(id cdp.BackendNodeID) *Node {
	if id == 0 {
		return nil
	}
	for _, d := range fs.Snap.docs {
		for _, n := range d.nodes {
			if n.backend == id && n.hasLayout {
				return n
			}
		}
	}
	return nil
}

// maxOffscreen is how many elements above and below the viewport get their
// accessibility data fetched, for the summaries.
const maxOffscreen = 8

// AXTargets picks the candidates whose accessibility data Number needs:
// all on screen, those hidden in on-screen containers, and the nearest
// ones above and below.
func AXTargets(p *Page) []*Candidate { return axTargets(p.Candidates) }

// SetAX sets what the accessibility tree says of c (Accessibility.
// getPartialAXTree's node for it); nil means it had nothing.
func (c *Candidate) SetAX(n *accessibility.Node) {
	if n == nil {
		c.ax = nil
		return
	}
	c.ax = parseAX(n)
}
