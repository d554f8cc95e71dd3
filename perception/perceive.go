package perception

import (
	"github.com/chromedp/cdproto/cdp"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Location says where an element is relative to the viewport.
type Location string

const (
	// InViewport: at least part of the element is on screen and its
	// click point is free.
	InViewport Location = "viewport"
	// Covered: on screen, but another element is painted over every
	// point surf tried (a banner, a dialog).
	Covered Location = "covered"
	// Clipped: inside a scroll container (or frame) that has scrolled it
	// out of sight; scroll that container to reach it.
	Clipped Location = "clipped"
	Above   Location = "above"
	Below   Location = "below"
	Left    Location = "left"
	Right   Location = "right"
)

// interactiveRoles are ARIA roles whose elements the model can act on.
var interactiveRoles = map[string]bool{
	"button": true, "link": true, "checkbox": true, "radio": true, "switch": true,
	"tab": true, "menuitem": true, "menuitemcheckbox": true, "menuitemradio": true,
	"option": true, "combobox": true, "listbox": true, "textbox": true, "searchbox": true,
	"slider": true, "spinbutton": true, "treeitem": true, "gridcell": true, "scrollbar": true,
}

// Candidate is an element surf may list, found in a snapshot.
type Candidate struct {
	Node   *Node
	Frame  *Frame // the snapshot it came from
	strong bool   // a control by tag, role or editability; weak ones come from cursor, listeners or tabindex
	scroll bool   // a scroll container

	Where     Location
	Vis       Rect // visible part, viewport coordinates
	container *Node
	ClickX    float64 // where a click reaches it, viewport coordinates
	ClickY    float64
	cover     *Node // what covers it, when Covered
	coverSrc  *Frame
	dist      float64 // distance from the viewport, for off-screen elements

	ax *axInfo
}

// Frame is one snapshot with where it came from: the page, or an
// out-of-process frame shown by an iframe element of its parent.
type Frame struct {
	Snap *Snapshot
	// Handle is the caller's binding of the frame to the browser (its CDP
	// session): perception never reads it.
	Handle any
	URL    string // of the frame, empty for the page
	Parent *Frame
	Owner  *Node // the iframe element in Parent's snapshot

	boxes map[cdp.BackendNodeID]FrameBox // where its iframe elements show their documents
}

// findCandidates collects the interactive elements of a snapshot.
func findCandidates(fs *Frame, viewport Rect) []*Candidate {
	var out []*Candidate
	vpArea := viewport.Area()
	isCand := map[*Node]bool{}
	for f := fs; f.Parent != nil; f = f.Parent {
		if f.Owner != nil && f.Owner.ariaHidden() {
			return nil // an out-of-process frame in an inert or aria-hidden iframe: as hidden as its iframe
		}
	}
	for _, doc := range fs.Snap.docs {
		for _, n := range doc.nodes {
			if !n.isElement() || !n.hasLayout {
				continue
			}
			strong, weak, scroll := classify(n)
			if !strong && !weak && !scroll {
				continue
			}
			if v := n.style(styleVisibility); v != "" && v != "visible" {
				continue
			}
			if n.box.W < 2 && n.box.H < 2 || n.box.W < 1 || n.box.H < 1 {
				continue // zero-size (and 1px "visually hidden")
			}
			if offPage(n) {
				continue
			}
			if !strong && !scroll {
				// A weak candidate inside a listed one is part of it; a
				// huge one is a framework's event root, not a control.
				if n.box.Area() > 0.3*vpArea || hasCandidateAncestor(n, isCand) {
					continue
				}
				if n.name == "HTML" || n.name == "BODY" {
					continue
				}
			}
			if n.ariaHidden() || (n.transparent() && !paintedUnder(n, graphics(doc))) {
				continue
			}
			isCand[n] = true
			out = append(out, &Candidate{Node: n, Frame: fs, strong: strong, scroll: scroll && !strong})
		}
	}
	// A weak candidate holding a real control (a label around its input, a
	// card around its link) is not listed: the control is.
	holds := map[*Node]bool{}
	for _, c := range out {
		if !c.strong {
			continue
		}
		for a, d := c.Node.flatParent(), 0; a != nil && d < 256; a, d = a.flatParent(), d+1 {
			if holds[a] {
				break
			}
			holds[a] = true
		}
	}
	kept := out[:0]
	for _, c := range out {
		if !c.strong && !c.scroll && holds[c.Node] {
			continue
		}
		if c.Node.name == "LABEL" && !c.strong {
			continue // clicking a label acts on its control, which is listed
		}
		kept = append(kept, c)
	}
	return kept
}

// A fully transparent element (opacity: 0, on it or around it) paints
// nothing, yet the browser hit-tests it as usual: it takes the clicks on
// whatever is under it. Most are hidden on purpose (a honeypot field a
// bot should not fill, a trap link), and are not listed. But a page that
// draws its controls on a canvas, an image or an SVG lays transparent hit
// regions over them: the model sees the button in the drawing, and the
// transparent element is what takes its click. So a transparent element
// is listed when a visible graphic (canvas, img, svg, video, embed,
// object) of its document lies under its centre, painted before it, and it
// is not a field that takes typed text (the usual honeypot, which a
// drawing does not show as one).

// graphicTags are the elements that paint a picture a transparent hit
// region can stand for.
var graphicTags = map[string]bool{"CANVAS": true, "IMG": true, "svg": true, "SVG": true, "VIDEO": true, "EMBED": true, "OBJECT": true}

// graphics lists the visible graphics of a document, once.
func graphics(doc *snapDoc) []*Node {
	if doc.graphicsOK {
		return doc.graphics
	}
	doc.graphicsOK = true
	for _, g := range doc.nodes {
		if !graphicTags[g.name] || !g.hasLayout || g.box.W < 4 || g.box.H < 4 {
			continue
		}
		if v := g.style(styleVisibility); v != "" && v != "visible" {
			continue
		}
		if g.transparent() {
			continue
		}
		doc.graphics = append(doc.graphics, g)
	}
	return doc.graphics
}

// paintedUnder reports whether a transparent element n lies over one of a
// document's graphics, which shows what it is, and is not a text field.
func paintedUnder(n *Node, gs []*Node) bool {
	if len(gs) == 0 || takesText(n) {
		return false
	}
	cx, cy := n.box.Center()
	for _, g := range gs {
		if g == n || !g.box.Intersect(g.clipFor()).Contains(cx, cy) {
			continue // not under its centre, or clipped away there
		}
		if g.paint < n.paint || n.isDescendantOf(g) {
			return true // painted before it, so under it
		}
	}
	return false
}

// takesText reports whether n is a field for typed text.
func takesText(n *Node) bool {
	switch n.name {
	case "TEXTAREA":
		return true
	case "INPUT":
		switch strings.ToLower(n.attrOr("type")) {
		case "button", "submit", "reset", "image", "checkbox", "radio", "range", "color", "file":
			return false
		}
		return true
	}
	return isEditable(n)
}

// classify says why n may be interactive.
func classify(n *Node) (strong, weak, scroll bool) {
	switch n.name {
	case "A", "AREA":
		if _, ok := n.attr("href"); ok {
			strong = true
		}
	case "BUTTON", "SELECT", "TEXTAREA", "SUMMARY":
		strong = true
	case "INPUT":
		strong = !strings.EqualFold(n.attrOr("type"), "hidden")
	case "VIDEO", "AUDIO":
		_, strong = n.attr("controls")
	}
	if role := strings.ToLower(strings.TrimSpace(n.attrOr("role"))); role != "" {
		for _, r := range strings.Fields(role) {
			if interactiveRoles[r] {
				strong = true
				break
			}
		}
	}
	if isEditable(n) && (n.parent == nil || !isEditable(n.parent)) {
		strong = true
	}
	if !strong {
		if t, ok := n.attr("tabindex"); ok {
			if v, err := strconv.Atoi(strings.TrimSpace(t)); err == nil && v >= 0 {
				weak = true
			}
		}
		if n.clickable {
			weak = true
		}
		if n.style(styleCursor) == "pointer" && (n.parent == nil || n.parent.style(styleCursor) != "pointer") {
			weak = true
		}
	}
	if n.clipsOverflow() && (n.scrollsY() || n.scrollsX()) {
		scroll = true
	}
	return strong, weak, scroll
}

func isEditable(n *Node) bool {
	v, ok := n.attr("contenteditable")
	if !ok {
		return false
	}
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "" || v == "true" || v == "plaintext-only"
}

func hasCandidateAncestor(n *Node, isCand map[*Node]bool) bool {
	for a, d := n.flatParent(), 0; a != nil && d < 256; a, d = a.flatParent(), d+1 {
		if isCand[a] {
			return true
		}
	}
	return false
}

// offPage reports elements positioned outside their document's page area
// (the "visually hidden" technique of placing them at -9999px).
func offPage(n *Node) bool {
	doc := n.doc
	scale := doc.scale
	if scale <= 0 {
		scale = 1
	}
	// Back to document coordinates, in the document's own pixels.
	left := (n.box.X-doc.originX)/scale + doc.scrollX
	top := (n.box.Y-doc.originY)/scale + doc.scrollY
	w, h := n.box.W/scale, n.box.H/scale
	return left+w <= 0 || top+h <= 0 || (doc.width > 0 && left >= doc.width)
}

// locate decides where each candidate is and, for those on screen, the
// point a click would use and whether something covers it.
func locate(cands []*Candidate, viewport Rect) {
	for _, c := range cands {
		n := c.Node
		inClip := n.box.Intersect(n.clipFor())
		if inClip.Empty() {
			c.Where = Clipped
			c.container = n.scrollContainer()
			if c.container == nil {
				c.container = n.doc.owner
			}
			c.dist = 0
			if cb := n.doc.clip; !cb.Empty() && !cb.Intersect(viewport).Empty() {
				// A frame or container on screen hides it: it counts as near.
			} else {
				c.dist = distance(n.box, viewport)
			}
			continue
		}
		vis := inClip.Intersect(viewport)
		if vis.Empty() {
			c.Where, c.dist = side(inClip, viewport), distance(inClip, viewport)
			continue
		}
		if lb, ok := n.lineBox(vis); ok {
			vis = lb // a wrapped link: point at its first visible line
		}
		c.Vis = vis
		c.Where = InViewport
		c.ClickX, c.ClickY, c.cover, c.coverSrc = clickPoint(c, vis)
		if c.cover != nil {
			c.Where = Covered
		}
	}
}

func side(b, vp Rect) Location {
	switch {
	case b.Bottom() <= vp.Y:
		return Above
	case b.Y >= vp.Bottom():
		return Below
	case b.Right() <= vp.X:
		return Left
	default:
		return Right
	}
}

func distance(b, vp Rect) float64 {
	dx := math.Max(0, math.Max(vp.X-b.Right(), b.X-vp.Right()))
	dy := math.Max(0, math.Max(vp.Y-b.Bottom(), b.Y-vp.Bottom()))
	return math.Hypot(dx, dy)
}

// clickPoint finds a point of vis where a click reaches the element: the
// centre first, then points around it. When every point is covered it
// returns the centre and what covers it.
func clickPoint(c *Candidate, vis Rect) (x, y float64, cover *Node, coverSrc *Frame) {
	cx, cy := vis.Center()
	points := [][2]float64{{cx, cy}}
	if vis.W >= 8 && vis.H >= 8 {
		for _, f := range [][2]float64{{0.25, 0.5}, {0.75, 0.5}, {0.5, 0.25}, {0.5, 0.75}, {0.25, 0.25}, {0.75, 0.25}, {0.25, 0.75}, {0.75, 0.75}, {0.1, 0.5}, {0.9, 0.5}} {
			points = append(points, [2]float64{vis.X + vis.W*f[0], vis.Y + vis.H*f[1]})
		}
	}
	for i, p := range points {
		cov, src := coverAt(c, p[0], p[1])
		if cov == nil {
			return p[0], p[1], nil, nil
		}
		if i == 0 {
			cover, coverSrc = cov, src
		}
	}
	return cx, cy, cover, coverSrc
}

// coverAt returns what is painted over c at (x, y), if anything: first in
// c's own snapshot, then, for an out-of-process frame, over its iframe in
// each parent snapshot.
func coverAt(c *Candidate, x, y float64) (*Node, *Frame) {
	fs := c.Frame
	target := c.Node
	for fs != nil {
		top := fs.Snap.top(x, y)
		if top != nil && !reaches(top, target) {
			return top, fs
		}
		if top == nil && fs.Parent == nil {
			return nil, nil
		}
		target = fs.Owner
		fs = fs.Parent
		if target == nil {
			return nil, nil
		}
	}
	return nil, nil
}

// reaches reports whether a click landing on top acts on target: top is the
// target or inside it, or top is a label for it.
func reaches(top, target *Node) bool {
	if top.isDescendantOf(target) {
		return true
	}
	for a, d := top, 0; a != nil && d < 64; a, d = a.flatParent(), d+1 {
		if a.name == "LABEL" {
			if target.isDescendantOf(a) {
				return true
			}
			if f := a.attrOr("for"); f != "" && f == target.attrOr("id") {
				return true
			}
			break
		}
	}
	// Anything else, an ancestor painted over its child included, takes
	// the click instead of the target.
	return false
}

// CoverOwner climbs from what is on top to the element worth naming: a
// dialog, banner or overlay layer, or a listed element.
func CoverOwner(n *Node, listed map[*Node]*Element) *Node {
	best := n
	for a, d := n, 0; a != nil && d < 64; a, d = a.flatParent(), d+1 {
		if !a.isElement() {
			continue
		}
		if a.name == "BODY" || a.name == "HTML" {
			break
		}
		role := strings.ToLower(a.attrOr("role"))
		switch role {
		case "dialog", "alertdialog", "banner", "alert", "region", "navigation", "contentinfo", "complementary":
			return a
		}
		if a.name == "DIALOG" || a.attrOr("aria-modal") == "true" {
			return a
		}
		if p := a.style(stylePosition); p == "fixed" || p == "sticky" || p == "absolute" {
			best = a
		}
		if _, ok := listed[a]; ok && best == n {
			best = a
		}
	}
	return best
}

// orderCandidates sorts candidates for numbering: on-screen elements in
// reading order, then those above (nearest first), then below (nearest
// first), then the rest.
func orderCandidates(cs []*Candidate) {
	rank := func(c *Candidate) int {
		switch c.Where {
		case InViewport, Covered:
			return 0
		case Clipped:
			if c.dist == 0 {
				return 1
			}
			return 4
		case Above:
			return 2
		case Below:
			return 3
		default:
			return 4
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		ra, rb := rank(a), rank(b)
		if ra != rb {
			return ra < rb
		}
		if ra == 0 {
			ay, by := math.Round(a.Vis.Y/8), math.Round(b.Vis.Y/8)
			if ay != by {
				return ay < by
			}
			return a.Vis.X < b.Vis.X
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.Node.box.Y < b.Node.box.Y
	})
}
