package perception

import (
	"github.com/surfkit/surf/internal/textcut"
	"math"
	"strconv"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/domsnapshot"
)

// SnapshotStyles are the computed styles to ask DOMSnapshot for, in this
// order (the style* constants index into them).
var SnapshotStyles = []string{"visibility", "cursor", "pointer-events", "overflow-x", "overflow-y", "position", "opacity", "display", "border-left-width", "border-top-width", "clip-path"}

const (
	styleVisibility = iota
	styleCursor
	stylePointerEvents
	styleOverflowX
	styleOverflowY
	stylePosition
	styleOpacity
	styleDisplay
	styleBorderLeft
	styleBorderTop
	styleClipPath
)

// Rect is a box in CSS pixels.
type Rect struct{ X, Y, W, H float64 }

// Everywhere is a clip that clips nothing.
var Everywhere = Rect{-1e7, -1e7, 2e7, 2e7}

func (r Rect) Empty() bool            { return r.W <= 0 || r.H <= 0 }
func (r Rect) Right() float64         { return r.X + r.W }
func (r Rect) Bottom() float64        { return r.Y + r.H }
func (r Rect) Area() float64          { return max(r.W, 0) * max(r.H, 0) }
func (r Rect) Center() (x, y float64) { return r.X + r.W/2, r.Y + r.H/2 }
func (r Rect) Contains(x, y float64) bool {
	return x >= r.X && x < r.X+r.W && y >= r.Y && y < r.Y+r.H
}
func (r Rect) Intersect(o Rect) Rect {
	x0, y0 := max(r.X, o.X), max(r.Y, o.Y)
	x1, y1 := min(r.Right(), o.Right()), min(r.Bottom(), o.Bottom())
	if x1 <= x0 || y1 <= y0 {
		return Rect{X: x0, Y: y0}
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}
func (r Rect) Offset(dx, dy float64) Rect { return Rect{r.X + dx, r.Y + dy, r.W, r.H} }

// Node is one DOM node of a snapshot document, with what surf needs of
// its layout. Boxes are in the top-level viewport's CSS pixels.
type Node struct {
	doc      *snapDoc
	index    int
	parent   *Node // the DOM parent; a shadow root's parent is its host
	children []*Node
	nodeType int64
	name     string // tag name (upper case), "#text", "#document-fragment", ...
	value    string // nodeValue: the text of text nodes
	backend  cdp.BackendNodeID
	attrs    []int64 // string-table indexes, name/value pairs
	shadow   string  // for shadow roots: "open", "closed" or "user-agent"

	hasLayout  bool
	box        Rect // border box, viewport coordinates
	paint      int64
	styles     []int64
	text       string // layout text of a text node
	frags      []Rect // a text node's line boxes, viewport coordinates
	clickable  bool   // has click listeners or is a link (DOMSnapshot's isClickable)
	inputVal   string
	checked    bool
	selected   bool
	contentDoc *snapDoc // the document of a same-process iframe

	frameContent Rect    // an iframe's content box as the browser reported it (see frameBox)
	frameZoom    float64 // and its rendered width over its CSS width (CSS zoom and transforms)
	frameKnown   bool

	hitBoxes   []Rect // where it takes clicks, for the hit index
	inertMemo  int8   // inert: 0 not known yet, 1 no, 2 yes
	clipMemo   Rect   // clipInside memo
	clipMemoOK bool
}

// snapDoc is one document of a snapshot: the page, or a same-process frame.
type snapDoc struct {
	snap    *Snapshot
	index   int
	frameID string
	url     string
	baseURL string
	title   string
	nodes   []*Node
	scrollX float64
	scrollY float64
	width   float64 // content size
	height  float64
	// clip is the part of the viewport the document is shown in: the
	// viewport for the page, the iframe's content box for a frame.
	clip  Rect
	owner *Node // the iframe element showing this document, if any
	// graphics are its visible canvases, images, SVGs... (see graphics).
	graphics   []*Node
	graphicsOK bool
	// originX, originY is where the document's viewport starts in the
	// top-level viewport, and scale how many viewport pixels one of its
	// layout pixels is: less or more than 1 when a CSS transform scales
	// its iframe or an element around it (CSS zoom is already in its
	// layout pixels).
	originX, originY, scale float64
}

// snapshot is a parsed DOMSnapshot of one CDP session: the page with its
// same-process frames, or an out-of-process frame.
type Snapshot struct {
	strings  []string
	docs     []*snapDoc
	viewport Rect // the top-level viewport
	hits     *hitIndex
	// originX, originY is where the session's viewport starts in the
	// top-level viewport (non-zero for an out-of-process frame), scale
	// how many viewport pixels one of its layout pixels is, and zoom how
	// many of its layout pixels one of its CSS pixels is (see placement).
	originX, originY, scale, zoom float64
}

// placement is where the top document of a snapshot is shown in the
// top-level viewport: its viewport starts at X, Y; one of its layout
// pixels is Scale viewport pixels (a CSS transform on its iframe or
// around it scales it; CSS zoom does not, the document lays out in zoomed
// pixels); one of its CSS pixels is Zoom of its layout pixels (the CSS
// zoom of its iframe, which the browser's hit test divides out).
type placement struct{ X, Y, Scale, Zoom float64 }

// topPlacement is the page's own: the viewport, unscaled.
var topPlacement = placement{Scale: 1, Zoom: 1}

// framePlacement places a frame's document in the content box of its
// iframe (viewport coordinates; frameZoom is its rendered width in
// viewport pixels over its CSS width, 0 if not known): the document's
// viewport, its #document box in the snapshot, spans the content box;
// the ratio of the two is the scale of the transforms around it (a
// zoomed frame lays out in zoomed pixels), and the rest of frameZoom is
// its CSS zoom.
func framePlacement(content Rect, frameZoom float64, doc *domsnapshot.DocumentSnapshot, strs []string) placement {
	pl := placement{X: content.X, Y: content.Y, Scale: 1, Zoom: 1}
	if w, h := viewSize(doc, strs); w > 0 && content.W > 0 {
		pl.Scale = content.W / w
	} else if h > 0 && content.H > 0 {
		pl.Scale = content.H / h
	}
	if math.Abs(pl.Scale-1) < 0.005 || pl.Scale < 0.01 || pl.Scale > 100 {
		pl.Scale = 1
	}
	if frameZoom > 0 {
		// frameZoom is the transforms' scale times the frame's zoom.
		pl.Zoom = frameZoom / pl.Scale
		if math.Abs(pl.Zoom-1) < 0.01 || pl.Zoom < 0.05 || pl.Zoom > 20 {
			pl.Zoom = 1
		}
	}
	return pl
}

// viewSize is the size of a document's viewport in its layout pixels:
// the box of its #document node.
func viewSize(d *domsnapshot.DocumentSnapshot, strs []string) (w, h float64) {
	if d == nil || d.Nodes == nil || d.Layout == nil {
		return 0, 0
	}
	for li, ni := range d.Layout.NodeIndex {
		if ni < 0 || int(ni) >= len(d.Nodes.NodeType) || d.Nodes.NodeType[ni] != 9 {
			continue
		}
		if li < len(d.Layout.Bounds) && len(d.Layout.Bounds[li]) == 4 {
			return d.Layout.Bounds[li][2], d.Layout.Bounds[li][3]
		}
	}
	return 0, 0
}

func (s *Snapshot) str(i domsnapshot.StringIndex) string {
	if i < 0 || int(i) >= len(s.strings) {
		return ""
	}
	return s.strings[i]
}

// attr returns an attribute's value and whether it is present.
func (n *Node) attr(name string) (string, bool) {
	st := n.doc.snap.strings
	for i := 0; i+1 < len(n.attrs); i += 2 {
		k := n.attrs[i]
		if k >= 0 && int(k) < len(st) && strings.EqualFold(st[k], name) {
			v := n.attrs[i+1]
			if v >= 0 && int(v) < len(st) {
				return st[v], true
			}
			return "", true
		}
	}
	return "", false
}

func (n *Node) attrOr(name string) string {
	v, _ := n.attr(name)
	return v
}

func (n *Node) style(i int) string {
	if i >= len(n.styles) {
		return ""
	}
	v := n.styles[i]
	if v < 0 || int(v) >= len(n.doc.snap.strings) {
		return ""
	}
	return n.doc.snap.strings[v]
}

func (n *Node) isElement() bool { return n.nodeType == 1 }

// flatParent is the parent across document boundaries: a frame document's
// root continues to the iframe element showing it.
func (n *Node) flatParent() *Node {
	if n.parent != nil {
		return n.parent
	}
	return n.doc.owner
}

// isDescendantOf reports whether n is a, or lies inside a, across shadow
// roots and same-process frames.
func (n *Node) isDescendantOf(a *Node) bool {
	for x, depth := n, 0; x != nil && depth < 4096; x, depth = x.flatParent(), depth+1 {
		if x == a {
			return true
		}
	}
	return false
}

// parseSnapshot turns the columnar DOMSnapshot result into trees. pl is
// where the first document lies in the top-level viewport (not the origin
// for an out-of-process frame), and clip the part of the viewport it
// shows. boxes are the content boxes of the session's iframe elements as
// the browser reported them (see frameBoxes), in the session's viewport
// coordinates; a frame without one is placed inside its iframe's border.
func parseSnapshot(res *domsnapshot.CaptureSnapshotResult, viewport Rect, pl placement, clip Rect, boxes map[cdp.BackendNodeID]FrameBox) *Snapshot {
	if pl.Scale <= 0 {
		pl.Scale = 1
	}
	if pl.Zoom <= 0 {
		pl.Zoom = 1
	}
	s := &Snapshot{strings: res.Strings, viewport: viewport, originX: pl.X, originY: pl.Y, scale: pl.Scale, zoom: pl.Zoom}
	for i, d := range res.Documents {
		doc := s.parseDoc(d)
		doc.index = i
		s.docs = append(s.docs, doc)
	}
	if len(s.docs) == 0 {
		return s
	}
	root := s.docs[0]
	root.clip = clip
	s.place(root, pl.X, pl.Y, pl.Scale)
	// Documents come parent before child: place each frame's document at
	// its iframe element's content box, scaled as the iframe is.
	for di, d := range res.Documents {
		if d.Nodes == nil || d.Nodes.ContentDocumentIndex == nil {
			continue
		}
		parent := s.docs[di]
		cdi := d.Nodes.ContentDocumentIndex
		for k, idx := range cdi.Index {
			if idx < 0 || int(idx) >= len(parent.nodes) || k >= len(cdi.Value) {
				continue
			}
			ci := int(cdi.Value[k])
			if ci <= di || ci >= len(s.docs) || s.docs[ci].owner != nil {
				continue
			}
			owner, child := parent.nodes[idx], s.docs[ci]
			owner.contentDoc, child.owner = child, owner
			owner.setFrameBox(boxes, pl.X, pl.Y, pl.Scale)
			content := owner.frameBox()
			child.clip = content.Intersect(owner.clipFor())
			cp := framePlacement(content, 0, res.Documents[ci], res.Strings)
			if !owner.frameKnown {
				cp.Scale = parent.scale // no box from the browser: as its parent is
			}
			s.place(child, cp.X, cp.Y, cp.Scale)
		}
	}
	return s
}

// place moves a document's boxes from its own coordinates into the
// viewport's, given where its viewport starts and how many viewport
// pixels one of its pixels is.
func (s *Snapshot) place(doc *snapDoc, originX, originY, scale float64) {
	doc.originX, doc.originY, doc.scale = originX, originY, scale
	at := func(r Rect) Rect {
		return Rect{originX + (r.X-doc.scrollX)*scale, originY + (r.Y-doc.scrollY)*scale, r.W * scale, r.H * scale}
	}
	for _, n := range doc.nodes {
		if n.hasLayout {
			n.box = at(n.box)
		}
		for i := range n.frags {
			n.frags[i] = at(n.frags[i])
		}
	}
}

func (s *Snapshot) parseDoc(d *domsnapshot.DocumentSnapshot) *snapDoc {
	doc := &snapDoc{
		snap:    s,
		frameID: s.str(d.FrameID),
		url:     s.str(d.DocumentURL),
		baseURL: s.str(d.BaseURL),
		title:   s.str(d.Title),
		scrollX: d.ScrollOffsetX,
		scrollY: d.ScrollOffsetY,
		width:   d.ContentWidth,
		height:  d.ContentHeight,
	}
	nt := d.Nodes
	if nt == nil {
		return doc
	}
	n := len(nt.NodeType)
	doc.nodes = make([]*Node, n)
	for i := 0; i < n; i++ {
		node := &Node{doc: doc, index: i, nodeType: nt.NodeType[i]}
		if i < len(nt.NodeName) {
			node.name = s.str(nt.NodeName[i])
		}
		if i < len(nt.NodeValue) && node.nodeType == 3 {
			node.value = s.str(nt.NodeValue[i])
		}
		if i < len(nt.BackendNodeID) {
			node.backend = nt.BackendNodeID[i]
		}
		if i < len(nt.Attributes) {
			node.attrs = nt.Attributes[i]
		}
		doc.nodes[i] = node
	}
	for i := 0; i < n && i < len(nt.ParentIndex); i++ {
		p := nt.ParentIndex[i]
		if p >= 0 && int(p) < i { // parents precede children; anything else is ignored
			doc.nodes[i].parent = doc.nodes[p]
			doc.nodes[p].children = append(doc.nodes[p].children, doc.nodes[i])
		}
	}
	rareS := func(r *domsnapshot.RareStringData, set func(*Node, string)) {
		if r == nil {
			return
		}
		for k, idx := range r.Index {
			if idx >= 0 && int(idx) < n && k < len(r.Value) {
				set(doc.nodes[idx], s.str(r.Value[k]))
			}
		}
	}
	rareB := func(r *domsnapshot.RareBooleanData, set func(*Node)) {
		if r == nil {
			return
		}
		for _, idx := range r.Index {
			if idx >= 0 && int(idx) < n {
				set(doc.nodes[idx])
			}
		}
	}
	rareS(nt.ShadowRootType, func(x *Node, v string) { x.shadow = v })
	rareS(nt.InputValue, func(x *Node, v string) { x.inputVal = v })
	rareS(nt.TextValue, func(x *Node, v string) { x.inputVal = v })
	rareB(nt.IsClickable, func(x *Node) { x.clickable = true })
	rareB(nt.InputChecked, func(x *Node) { x.checked = true })
	rareB(nt.OptionSelected, func(x *Node) { x.selected = true })

	if lt := d.Layout; lt != nil {
		byLayout := make([]*Node, len(lt.NodeIndex))
		for li, ni := range lt.NodeIndex {
			if ni < 0 || int(ni) >= n {
				continue
			}
			node := doc.nodes[ni]
			byLayout[li] = node
			if node.hasLayout {
				continue // further boxes of the same node
			}
			node.hasLayout = true
			if li < len(lt.Bounds) && len(lt.Bounds[li]) == 4 {
				b := lt.Bounds[li]
				node.box = Rect{b[0], b[1], b[2], b[3]}
			}
			if li < len(lt.Styles) {
				node.styles = lt.Styles[li]
			}
			if li < len(lt.PaintOrders) {
				node.paint = lt.PaintOrders[li]
			}
			if li < len(lt.Text) {
				node.text = s.str(lt.Text[li])
			}
		}
		if tb := d.TextBoxes; tb != nil {
			for k, li := range tb.LayoutIndex {
				if li < 0 || int(li) >= len(byLayout) || byLayout[li] == nil || k >= len(tb.Bounds) || len(tb.Bounds[k]) != 4 {
					continue
				}
				node := byLayout[li]
				if len(node.frags) < 16 {
					b := tb.Bounds[k]
					node.frags = append(node.frags, Rect{b[0], b[1], b[2], b[3]})
				}
			}
		}
	}
	return doc
}

// lineBox is the box to point at for an element whose text wraps over
// several lines: its bounding box then spans both lines, and its centre
// may fall on other text. It returns the first line's text box inside
// limit, or false when the element does not wrap.
func (n *Node) lineBox(limit Rect) (Rect, bool) {
	frags := n.inlineFrags()
	if len(frags) < 2 {
		return Rect{}, false
	}
	lines := 0
	lastY := -1e9
	for _, f := range frags {
		if f.Y > lastY+f.H/2 {
			lines++
			lastY = f.Y
		}
	}
	if lines < 2 {
		return Rect{}, false
	}
	for _, f := range frags {
		if v := f.Intersect(limit); !v.Empty() && v.W >= 2 {
			return v, true
		}
	}
	return Rect{}, false
}

// inlineFrags returns the line boxes of an inline element's text: where
// it actually paints. It returns nil for other elements.
func (n *Node) inlineFrags() []Rect {
	if n.style(styleDisplay) != "inline" {
		return nil
	}
	var frags []Rect
	var walk func(x *Node, d int)
	walk = func(x *Node, d int) {
		if d > 6 || len(frags) > 16 {
			return
		}
		frags = append(frags, x.frags...)
		for _, c := range x.children {
			walk(c, d+1)
		}
	}
	walk(n, 0)
	return frags
}

// transparent reports whether n or an ancestor is fully transparent.
func (n *Node) transparent() bool {
	for a, d := n, 0; a != nil && d < 64; a, d = a.parent, d+1 {
		if a.hasLayout && a.style(styleOpacity) == "0" {
			return true
		}
	}
	return false
}

// contentBox is the inside of an element's border: where an iframe shows
// its document, and what an overflow container clips to. The snapshot
// gives the left and top border widths; the right and bottom ones are
// taken to match.
func (n *Node) contentBox() Rect {
	bl, bt := px(n.style(styleBorderLeft)), px(n.style(styleBorderTop))
	r := Rect{n.box.X + bl, n.box.Y + bt, n.box.W - 2*bl, n.box.H - 2*bt}
	if r.W <= 0 || r.H <= 0 {
		return n.box
	}
	return r
}

// px reads a computed length such as "2px".
func px(s string) float64 {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "px"), 64)
	if err != nil || v < 0 || v > 1000 {
		return 0
	}
	return v
}

// clipsOverflow reports whether n clips its descendants to its box.
func (n *Node) clipsOverflow() bool {
	if !n.hasLayout || !n.isElement() {
		return false
	}
	if n.name == "HTML" || n.name == "BODY" {
		return false // their overflow applies to the viewport
	}
	ox, oy := n.style(styleOverflowX), n.style(styleOverflowY)
	return (ox != "" && ox != "visible") || (oy != "" && oy != "visible")
}

// scrollsY reports whether n is a vertical scroll container whose content
// overflows it: some descendant's box reaches past its inside.
func (n *Node) scrollsY() bool {
	oy := n.style(styleOverflowY)
	if oy != "auto" && oy != "scroll" {
		return false
	}
	in := n.contentBox()
	return n.overflows(func(b Rect) bool { return b.Bottom() > in.Bottom()+1 || b.Y < in.Y-1 })
}

func (n *Node) scrollsX() bool {
	ox := n.style(styleOverflowX)
	if ox != "auto" && ox != "scroll" {
		return false
	}
	in := n.contentBox()
	return n.overflows(func(b Rect) bool { return b.Right() > in.Right()+1 || b.X < in.X-1 })
}

// overflows reports whether a laid-out descendant's box passes test. It
// looks at most a few thousand nodes deep into the container.
func (n *Node) overflows(test func(Rect) bool) bool {
	seen := 0
	var walk func(x *Node) bool
	walk = func(x *Node) bool {
		for _, c := range x.children {
			seen++
			if seen > 4000 {
				return false
			}
			if c.hasLayout && !c.box.Empty() && c.style(stylePosition) != "fixed" && test(c.box) {
				return true
			}
			if walk(c) {
				return true
			}
		}
		return false
	}
	return walk(n)
}

// clipFor is the part of the viewport n can paint into: its document's clip
// narrowed by every overflow-clipping ancestor in its containing-block
// chain (fixed elements escape all of them, absolute ones skip static
// ancestors).
func (n *Node) clipFor() Rect {
	switch n.style(stylePosition) {
	case "fixed":
		return n.doc.clip
	case "absolute":
		for a := n.parent; a != nil; a = a.parent {
			if a.isElement() && a.hasLayout && a.style(stylePosition) != "static" && a.style(stylePosition) != "" {
				return a.clipInside()
			}
		}
		return n.doc.clip
	}
	if n.parent == nil {
		return n.doc.clip
	}
	return n.parent.clipInside()
}

// clipInside is the clip n's in-flow children get.
func (n *Node) clipInside() Rect {
	if n.clipMemoOK {
		return n.clipMemo
	}
	c := n.clipFor()
	if n.clipsOverflow() {
		c = c.Intersect(n.contentBox())
	}
	n.clipMemo, n.clipMemoOK = c, true
	return c
}

// scrollContainer is the nearest ancestor that scrolls and clips n, if any.
func (n *Node) scrollContainer() *Node {
	for a := n.parent; a != nil; a = a.parent {
		if a.clipsOverflow() && (a.scrollsY() || a.scrollsX()) {
			return a
		}
	}
	return nil
}

// hitIndex finds the topmost painted element at a point, using the
// snapshot's paint order. It holds element boxes that intersect the
// viewport, in a grid of cells.
type hitIndex struct {
	cell  float64
	cols  int
	rows  int
	x0    float64
	y0    float64
	cells [][]*Node
	// clipPaths are the elements with a clip-path shape (see clipShape).
	clipPaths map[*Node]*clipShape
}

const hitCell = 64

func (s *Snapshot) buildHits() {
	vp := s.viewport
	h := &hitIndex{cell: hitCell, x0: vp.X, y0: vp.Y}
	h.cols = int(math.Ceil(vp.W/hitCell)) + 1
	h.rows = int(math.Ceil(vp.H/hitCell)) + 1
	h.cells = make([][]*Node, h.cols*h.rows)
	h.clipPaths = s.clipPaths()
	for _, d := range s.docs {
		for _, n := range d.nodes {
			if !n.isElement() || !n.hasLayout || n.box.Empty() {
				continue
			}
			if n.style(styleVisibility) != "visible" && n.style(styleVisibility) != "" {
				continue
			}
			if n.style(stylePointerEvents) == "none" || n.inert() {
				continue // the browser's hit test passes through it
			}
			clip := n.clipFor().Intersect(vp)
			n.hitBoxes = nil
			if frags := n.inlineFrags(); len(frags) > 1 {
				// An inline element that wraps paints its lines, not the
				// box around them.
				for _, f := range frags {
					if b := f.Intersect(clip); !b.Empty() {
						n.hitBoxes = append(n.hitBoxes, b)
					}
				}
			} else if b := n.box.Intersect(clip); !b.Empty() {
				n.hitBoxes = []Rect{b}
			}
			for _, b := range n.hitBoxes {
				c0, c1 := h.col(b.X), h.col(b.Right()-0.01)
				r0, r1 := h.row(b.Y), h.row(b.Bottom()-0.01)
				for r := r0; r <= r1; r++ {
					for c := c0; c <= c1; c++ {
						if cell := h.cells[r*h.cols+c]; len(cell) == 0 || cell[len(cell)-1] != n {
							h.cells[r*h.cols+c] = append(cell, n)
						}
					}
				}
			}
		}
	}
	s.hits = h
}

func (h *hitIndex) col(x float64) int {
	return min(max(int((x-h.x0)/h.cell), 0), h.cols-1)
}
func (h *hitIndex) row(y float64) int {
	return min(max(int((y-h.y0)/h.cell), 0), h.rows-1)
}

// top returns the element painted on top at (x, y), or nil.
func (s *Snapshot) top(x, y float64) *Node {
	if s.hits == nil {
		s.buildHits()
	}
	h := s.hits
	var best *Node
	for _, n := range h.cells[h.row(y)*h.cols+h.col(x)] {
		in := false
		for _, b := range n.hitBoxes {
			if b.Contains(x, y) {
				in = true
				break
			}
		}
		if !in || (h.clipPaths != nil && clippedAway(h.clipPaths, n, x, y)) {
			continue
		}
		if best == nil || n.paint > best.paint ||
			(n.paint == best.paint && (n.doc.index > best.doc.index || (n.doc == best.doc && n.index > best.index))) {
			best = n
		}
	}
	return best
}

// inert reports whether n is inert: it or an element around it (across
// shadow roots and same-process frames) has the inert attribute. The
// browser hit-tests an inert node as if it had pointer-events: none (HTML,
// "inert subtrees"), so an inert overlay covers nothing: the click goes
// through to what is under it.
func (n *Node) inert() bool {
	var walk func(x *Node, depth int) bool
	walk = func(x *Node, depth int) bool {
		if x == nil || depth > 4096 {
			return false
		}
		if x.inertMemo != 0 {
			return x.inertMemo == 2
		}
		in := false
		if _, ok := x.attr("inert"); ok && x.isElement() {
			in = true
		} else {
			in = walk(x.flatParent(), depth+1)
		}
		x.inertMemo = 1
		if in {
			x.inertMemo = 2
		}
		return in
	}
	return walk(n, 0)
}

// ariaHidden reports whether n or an ancestor is aria-hidden or inert, or
// n sits in a hidden <template>-like subtree.
func (n *Node) ariaHidden() bool {
	for a := n; a != nil; a = a.flatParent() {
		if !a.isElement() {
			continue
		}
		if v, ok := a.attr("aria-hidden"); ok && strings.EqualFold(strings.TrimSpace(v), "true") {
			return true
		}
		if _, ok := a.attr("inert"); ok {
			return true
		}
	}
	return false
}

// describe is a short human description of an element, for messages such
// as what covers a button.
func (n *Node) describe() string {
	if n == nil {
		return ""
	}
	tag := strings.ToLower(n.name)
	if v := n.attrOr("aria-label"); v != "" {
		return strconv.Quote(textcut.Bytes(v, 40)) + " " + tag
	}
	if role := n.attrOr("role"); role != "" {
		tag = role
	}
	if id := n.attrOr("id"); id != "" {
		return tag + "#" + textcut.Bytes(id, 30)
	}
	if cls := strings.Fields(n.attrOr("class")); len(cls) > 0 {
		return tag + "." + textcut.Bytes(cls[0], 30)
	}
	return tag
}

// textContent joins the layout text under n (what is rendered), up to max
// bytes.
func (n *Node) textContent(max int) string {
	var b strings.Builder
	var walk func(x *Node, depth int)
	walk = func(x *Node, depth int) {
		if b.Len() >= max || depth > 64 {
			return
		}
		if x.nodeType == 3 && x.hasLayout {
			t := strings.TrimSpace(x.text)
			if t != "" {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(t)
			}
		}
		for _, c := range x.children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return textcut.Bytes(b.String(), max)
}

// findBackend finds the node with a backend id in a snapshot.
func findBackend(s *Snapshot, id cdp.BackendNodeID) *Node {
	for _, d := range s.docs {
		for _, n := range d.nodes {
			if n.backend == id {
				return n
			}
		}
	}
	return nil
}

// Backend is the node's backend node id.
func (n *Node) Backend() cdp.BackendNodeID { return n.backend }

// FrameID is the id of the frame whose document holds the node.
func (n *Node) FrameID() string { return n.doc.frameID }

// InFrame reports whether the node's document is shown by an iframe
// element of the same snapshot (a same-process frame).
func (n *Node) InFrame() bool { return n.doc.owner != nil }

// IsDescendantOf reports whether n is a, or lies inside a, across shadow
// roots and same-process frames.
func (n *Node) IsDescendantOf(a *Node) bool { return n.isDescendantOf(a) }

// Describe is a short human description of an element, for messages such
// as what covers a button.
func (n *Node) Describe() string { return n.describe() }

// FrameBox is where an iframe element shows its document, viewport
// coordinates.
func (n *Node) FrameBox() Rect { return n.frameBox() }

// HitPoint converts a point of the top-level viewport into the
// coordinates the browser's hit test (DOM.getNodeForLocation) takes on the
// snapshot's session: its top document's CSS pixels, scrolled.
func (s *Snapshot) HitPoint(x, y float64) (float64, float64) {
	scale, zoom := s.scale, s.zoom
	if scale <= 0 {
		scale = 1
	}
	if zoom <= 0 {
		zoom = 1
	}
	sx, sy := s.Scroll()
	return ((x-s.originX)/scale + sx) / zoom, ((y-s.originY)/scale + sy) / zoom
}

// Scroll is how far the snapshot's top document is scrolled.
func (s *Snapshot) Scroll() (x, y float64) {
	if len(s.docs) == 0 {
		return 0, 0
	}
	return s.docs[0].scrollX, s.docs[0].scrollY
}

// FindBackend finds the node with a backend id in a snapshot.
func FindBackend(s *Snapshot, id cdp.BackendNodeID) *Node { return findBackend(s, id) }

// Reaches reports whether a click landing on top acts on target: top is
// the target or inside it, or top is a label for it.
func Reaches(top, target *Node) bool { return reaches(top, target) }
