package som

import (
	"cmp"
	"image"
	"image/color"
	"math"
	"slices"
	"strconv"
)

// Placement says where a label's tag ended up relative to its mark's box.
type Placement uint8

const (
	// Dropped: there was no room for the tag anywhere in the image (or,
	// with Options.MaxDetach, near enough to its box); only the outline
	// is drawn. It happens only when the image is crowded with tags.
	Dropped Placement = iota
	// Outside: the tag touches the box from outside, at an edge or a
	// corner, and covers none of it.
	Outside
	// Straddle: the tag lies across the box's edge.
	Straddle
	// Inside: the tag lies within the box.
	Inside
	// Detached: the tag sits away from the box, because every spot next
	// to it was taken; Draw joins the two with a leader line.
	Detached
)

func (p Placement) String() string {
	switch p {
	case Dropped:
		return "dropped"
	case Outside:
		return "outside"
	case Straddle:
		return "straddle"
	case Inside:
		return "inside"
	case Detached:
		return "detached"
	}
	return "Placement(" + strconv.Itoa(int(p)) + ")"
}

// Label is where and how one mark is drawn.
type Label struct {
	// Mark is the index of the mark in the slice given to Layout.
	Mark int
	// ID is the mark's ID, the number in the tag.
	ID int
	// Box is the visible part of the mark's box in image pixels.
	Box image.Rectangle
	// Rect is the tag, inside the image bounds; empty when Place is
	// Dropped. No two tags of one layout overlap, and tags are at
	// least TagGap pixels apart.
	Rect image.Rectangle
	// Place says where the tag is relative to the box.
	Place Placement
	// FontSize is the font size of the digits; smaller than the
	// requested size when the tag had to shrink to fit.
	FontSize float64
	// Color is the outline and tag colour; Text, black or white, is the
	// digit colour, with a WCAG contrast ratio of at least 4.5:1 against
	// Color.
	Color, Text color.RGBA
	// Covered is copied from the mark: the outline is dashed.
	Covered bool
}

// TagGap is the least distance in pixels between two tags, so that
// adjacent numbers never run together ("12" "3" reading as "123").
const TagGap = 2

// Cost weights for a candidate tag position, per pixel of overlap. Covering
// another element is worse than covering the labelled one: it hides text
// the model needs and makes the tag look like it belongs to the other
// element.
const (
	costOther = 1.0
	costOwn   = 0.5
	// costText is per pixel of page text that is not a mark (Options.Text).
	costText = 0.75
	costRank = 1e-3 // tie-break by preference order
	// costMislead is added per pixel of a tag that looks like it labels
	// another element.
	costMislead = 1.0
)

// shrinkFactor is the size of the last-resort smaller tags.
const shrinkFactor = 0.8

// searchBudget bounds the candidate positions tried in the fallback searches
// of one Layout call, so that pathological input (thousands of marks on one
// spot) still finishes quickly. Ordinary pages use a small fraction of it.
const searchBudget = 1 << 20

// tagFont is the geometry of tags at one font size.
type tagFont struct {
	size         float64
	cellW, cellH int
	padX, padY   int
}

func newTagFont(size float64) tagFont {
	f := tagFont{size: size}
	if g := glyphs(size); g != nil {
		f.cellW, f.cellH = g.cellW, g.cellH
	} else {
		f.cellW, f.cellH = int(math.Ceil(0.6*size)), int(math.Ceil(0.85*size))
	}
	f.padX = max(2, int(math.Round(0.2*size)))
	f.padY = max(1, int(math.Round(0.08*size)))
	return f
}

// dims returns the size of a tag showing n characters.
func (f tagFont) dims(n int) (w, h int) {
	return n*f.cellW + 2*f.padX, f.cellH + 2*f.padY
}

// Layout places the tag of every mark whose box is at least partly inside
// bounds and picks its colour. It returns one Label per such mark, in the
// order of marks; marks with no visible box are left out.
//
// Tags lie inside bounds and never overlap: any two are at least TagGap
// pixels apart. Each tag takes the free spot, among fixed candidates
// around and inside its box (above, beside, below, across an edge or a
// corner, inside), with the lowest cost: the area it covers of other
// marks' boxes, plus half the area it covers of its own box, plus a
// penalty if it looks like it labels another box (lies more on another
// box than on its own, or nearer to one). The most crowded marks choose
// first. When no candidate is free, the tag tries spots a little further
// out, then a smaller font, then wherever there is room (Detached, joined
// to its box by a leader line), and only when the image is full is it
// Dropped. If some tags ended up away from their boxes, the layout is
// redone with small tags first around those crowded boxes, and the better
// of the two is kept.
//
// Layout is pure and safe for concurrent use.
func Layout(bounds image.Rectangle, marks []Mark, opts Options) []Label {
	return layout(bounds, marks, opts.config())
}

func layout(bounds image.Rectangle, marks []Mark, cfg config) []Label {
	bounds = saneBounds(bounds)
	labels := make([]Label, 0, len(marks))
	for i, m := range marks {
		b, ok := pixelBox(m.Box, cfg.scale, bounds)
		if !ok {
			continue
		}
		labels = append(labels, Label{Mark: i, ID: m.ID, Box: b, Covered: m.Covered})
	}
	if len(labels) == 0 {
		return labels
	}
	p := newPlacer(bounds, labels, cfg)
	order := p.order()
	p.run(order, nil)
	if bad := badness(labels); bad > 0 && len(p.fonts) > 1 {
		// Some tags had to move away from their boxes. Try again with
		// small tags first around those crowded boxes, and keep whichever
		// layout leaves fewer tags detached.
		first := slices.Clone(labels)
		small := p.crowdedAround()
		p.reset()
		p.run(order, small)
		if badness(labels) >= bad {
			copy(labels, first)
		}
	}
	_, h := p.fonts[0].dims(1)
	assignColours(bounds, labels, order, slices.Clone(cfg.palette), h)
	return labels
}

// saneBounds limits bounds to coordinates whose areas fit in an int.
func saneBounds(b image.Rectangle) image.Rectangle {
	const lim = 1 << 28
	return b.Intersect(image.Rect(-lim, -lim, lim, lim))
}

type placer struct {
	bounds image.Rectangle
	labels []Label
	boxes  *grid // mark boxes, indexed like labels
	tags   *grid // placed tags
	texts  *grid // page text to avoid (Options.Text), nil if none
	fonts  []tagFont
	budget int
	detach int // Options.MaxDetach, 0 for none
	// full is the smallest tag size for which a search of the whole image
	// found no room; larger tags skip that search.
	full image.Point
	// resume remembers, per box and tag size, the gap at which the last
	// whole-image search found room: tags are only ever added, so the
	// next search for the same box and size can start there. It keeps
	// piles of identical boxes from searching the same rings again.
	resume map[ringKey]int
}

type ringKey struct {
	box  image.Rectangle
	w, h int
}

func newPlacer(bounds image.Rectangle, labels []Label, cfg config) *placer {
	p := &placer{
		bounds: bounds,
		labels: labels,
		boxes:  newGrid(bounds, len(labels)),
		tags:   newGrid(bounds, len(labels)),
		budget: searchBudget,
		resume: map[ringKey]int{},
		detach: cfg.detach,
	}
	for _, l := range labels {
		p.boxes.add(l.Box)
	}
	if len(cfg.text) > 0 {
		p.texts = newGrid(bounds, len(cfg.text))
		for _, t := range cfg.text {
			if r, ok := pixelBox(t, cfg.scale, bounds); ok {
				p.texts.add(r)
			}
		}
	}
	p.fonts = []tagFont{newTagFont(cfg.fontSize)}
	if s := quantiseSize(max(minFontSize, cfg.fontSize*shrinkFactor)); s < cfg.fontSize {
		p.fonts = append(p.fonts, newTagFont(s))
	}
	return p
}

// order returns label indices, most crowded box first (the marks with the
// fewest free spots around them get the first pick), then in mark order.
func (p *placer) order() []int {
	_, h := p.fonts[0].dims(1)
	crowd := make([]int, len(p.labels))
	for i, l := range p.labels {
		p.boxes.query(l.Box.Inset(-h), func(j int) bool {
			if j != i {
				crowd[i]++
			}
			return true
		})
	}
	idx := make([]int, len(p.labels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(crowd[b], crowd[a]) })
	return idx
}

// stage is one step of the search for a tag position.
type stage struct {
	font   int  // index into placer.fonts
	ring   bool // false: the fixed candidates; true: rings around the box
	maxGap int  // for rings, in tag heights; 0 means the whole image
}

// stages is the search for most tags: full-size tags next to the box, then
// a little further out, then smaller tags, then anywhere.
var stages = []stage{
	{font: 0},
	{font: 0, ring: true, maxGap: 2},
	{font: 1},
	{font: 1, ring: true, maxGap: 2},
	{font: 0, ring: true},
	{font: 1, ring: true},
}

// smallStages is the search for tags in crowded spots: smaller tags
// straight away, so that they fit next to their boxes.
var smallStages = []stage{
	{font: 1},
	{font: 1, ring: true, maxGap: 2},
	{font: 1, ring: true},
}

// run places the labels in order; small, if not nil, marks the labels
// that start with smaller tags.
func (p *placer) run(order []int, small []bool) {
	for _, i := range order {
		if small != nil && small[i] {
			p.place(i, smallStages)
		} else {
			p.place(i, stages)
		}
	}
}

// badness counts tags away from their boxes, dropped ones twice.
func badness(labels []Label) int {
	n := 0
	for _, l := range labels {
		switch l.Place {
		case Detached:
			n++
		case Dropped:
			n += 2
		}
	}
	return n
}

// crowdedAround marks the labels whose boxes lie within two tag heights of
// a box whose tag was detached or dropped.
func (p *placer) crowdedAround() []bool {
	_, h := p.fonts[0].dims(1)
	small := make([]bool, len(p.labels))
	for _, l := range p.labels {
		if l.Place != Detached && l.Place != Dropped {
			continue
		}
		p.boxes.query(l.Box.Inset(-2*h), func(j int) bool {
			small[j] = true
			return true
		})
	}
	return small
}

// reset forgets all placed tags.
func (p *placer) reset() {
	p.tags = newGrid(p.bounds, len(p.labels))
	p.budget = searchBudget
	p.full = image.Point{}
	clear(p.resume)
	for i := range p.labels {
		l := &p.labels[i]
		l.Rect, l.Place, l.FontSize = image.Rectangle{}, Dropped, 0
	}
}

func (p *placer) place(i int, stages []stage) {
	l := &p.labels[i]
	n := len(strconv.Itoa(l.ID))
	for _, st := range stages {
		if st.font >= len(p.fonts) {
			continue
		}
		f := p.fonts[st.font]
		w, h := f.dims(n)
		if w > p.bounds.Dx() || h > p.bounds.Dy() {
			continue
		}
		var r image.Rectangle
		var ok bool
		switch {
		case !st.ring:
			r, ok = p.candidates(i, w, h)
		case st.maxGap > 0:
			r, ok, _ = p.rings(i, w, h, 0, st.maxGap*h, 2)
		default:
			if p.full != (image.Point{}) && w >= p.full.X && h >= p.full.Y {
				continue
			}
			key := ringKey{l.Box, w, h}
			limit := -1
			if p.detach > 0 {
				limit = p.detach // no further than that: Dropped instead
			}
			var d int
			r, ok, d = p.rings(i, w, h, p.resume[key], limit, max(2, h/2))
			if ok {
				p.resume[key] = d
			} else if p.budget > 0 && limit < 0 {
				p.full = image.Pt(w, h)
			}
		}
		if ok && p.detach > 0 && rectDist(r, l.Box) > float64(p.detach) {
			ok = false // a ring's corner spot can lie beyond the bound
		}
		if ok {
			l.Rect = r
			l.FontSize = f.size
			l.Place = classify(r, l.Box)
			p.tags.add(r.Inset(-TagGap))
			return
		}
	}
	l.Place = Dropped
	l.FontSize = p.fonts[0].size
}

// classify says where tag r is relative to box b.
func classify(r, b image.Rectangle) Placement {
	switch {
	case r.In(b):
		return Inside
	case r.Overlaps(b):
		return Straddle
	case r.Min.X <= b.Max.X && b.Min.X <= r.Max.X && r.Min.Y <= b.Max.Y && b.Min.Y <= r.Max.Y:
		return Outside // touching
	}
	return Detached
}

// Candidate spots, as an x choice and a y choice relative to the box.
const (
	xLeft     = iota // left edges aligned
	xRight           // right edges aligned
	xOutLeft         // left of the box
	xOutRight        // right of the box
	xMidLeft         // across the left edge
	xMidRight        // across the right edge
	numX
)

const (
	yAbove     = iota // above the box
	yBelow            // below the box
	yTop              // top edges aligned
	yBottom           // bottom edges aligned
	yMidTop           // across the top edge
	yMidBottom        // across the bottom edge
	yCentre           // centred vertically
	numY
)

// candidateOrder lists every (x, y) spot, most preferred first: above the
// box, then beside it, below, on its corners, inside.
var candidateOrder = func() [][2]int {
	first := [][2]int{
		{xLeft, yAbove}, {xRight, yAbove},
		{xOutLeft, yTop}, {xOutRight, yTop},
		{xLeft, yBelow}, {xRight, yBelow},
		{xOutLeft, yCentre}, {xOutRight, yCentre},
		{xMidLeft, yMidTop}, {xMidRight, yMidTop},
		{xLeft, yMidTop}, {xRight, yMidTop},
		{xOutLeft, yAbove}, {xOutRight, yAbove},
		{xOutLeft, yBelow}, {xOutRight, yBelow},
		{xLeft, yTop}, {xRight, yTop},
		{xLeft, yBottom}, {xRight, yBottom},
	}
	seen := map[[2]int]bool{}
	for _, c := range first {
		seen[c] = true
	}
	for y := range numY {
		for x := range numX {
			if c := [2]int{x, y}; !seen[c] {
				first = append(first, c)
			}
		}
	}
	return first
}()

// candidates tries the fixed spots around box i and returns the free one
// with the lowest cost.
func (p *placer) candidates(i, w, h int) (image.Rectangle, bool) {
	b := p.labels[i].Box
	xs := [numX]int{b.Min.X, b.Max.X - w, b.Min.X - w, b.Max.X, b.Min.X - w/2, b.Max.X - w/2}
	ys := [numY]int{b.Min.Y - h, b.Max.Y, b.Min.Y, b.Max.Y - h, b.Min.Y - h/2, b.Max.Y - h/2, (b.Min.Y + b.Max.Y - h) / 2}
	best, bestCost, found := image.Rectangle{}, math.Inf(1), false
	for rank, c := range candidateOrder {
		r := p.clampIn(image.Rect(xs[c[0]], ys[c[1]], xs[c[0]]+w, ys[c[1]]+h))
		if p.tags.any(r) {
			continue
		}
		cost := p.cost(i, r) + float64(rank)*costRank
		if cost < bestCost {
			best, bestCost, found = r, cost, true
			if cost < costRank*float64(len(candidateOrder)) {
				break // covers nothing: no later spot can do better
			}
		}
	}
	return best, found
}

// clampIn moves r (no larger than the bounds) inside the bounds.
func (p *placer) clampIn(r image.Rectangle) image.Rectangle {
	dx := max(0, p.bounds.Min.X-r.Min.X) - max(0, r.Max.X-p.bounds.Max.X)
	dy := max(0, p.bounds.Min.Y-r.Min.Y) - max(0, r.Max.Y-p.bounds.Max.Y)
	return r.Add(image.Pt(dx, dy))
}

// cost is how bad tag r is for label i: the area it covers of other boxes,
// less so of its own, and a penalty if it looks like it belongs to another
// box (see misleading).
func (p *placer) cost(i int, r image.Rectangle) float64 {
	own, other, mis := p.affinity(i, r)
	c := costOther*float64(other) + costOwn*float64(own)
	if mis {
		c += costMislead * float64(area(r))
	}
	if p.texts != nil {
		text := 0
		p.texts.query(r, func(j int) bool {
			text += area(r.Intersect(p.texts.rects[j]))
			return true
		})
		c += costText * float64(text)
	}
	return c
}

// affinity returns the area of tag r on box i, the area on the other boxes,
// and whether the tag is misleading: it lies more on another box than on
// its own, or lies on none and is at least as close to another box. Boxes
// that contain box i (a card around a link) do not make a tag misleading.
func (p *placer) affinity(i int, r image.Rectangle) (own, other int, misleading bool) {
	return tagAffinity(p.boxes, i, r)
}

// tagAffinity is affinity over any index of boxes.
func tagAffinity(boxes *grid, i int, r image.Rectangle) (own, other int, misleading bool) {
	ownBox := boxes.rects[i]
	dOwn := rectDist(r, ownBox)
	bestOther, bestDist := 0, math.Inf(1)
	search := r
	if ownBox.Intersect(r).Empty() {
		// Boxes closer than the own box may lie around the tag.
		k := int(math.Ceil(dOwn))
		search = r.Inset(-k - 1)
	}
	boxes.query(search, func(j int) bool {
		b := boxes.rects[j]
		if j == i {
			own = area(r.Intersect(b))
			return true
		}
		a := area(r.Intersect(b))
		other += a
		if ownBox.In(b) {
			return true // a container: a tag near the box is always on it
		}
		bestOther = max(bestOther, a)
		bestDist = min(bestDist, rectDist(r, b))
		return true
	})
	switch {
	case own > 0:
		misleading = bestOther > own
	case bestOther > 0:
		misleading = true
	default:
		misleading = bestDist <= dOwn
	}
	return own, other, misleading
}

func area(r image.Rectangle) int {
	if r.Empty() {
		return 0
	}
	return r.Dx() * r.Dy()
}

// rings searches rings of spots around box i, at growing gaps from the box
// (from, from+step, ... up to maxGap, or until the rings leave the image
// when maxGap < 0), spots step pixels apart along each ring. It returns the
// cheapest free spot of the first ring that has one, and that ring's gap.
func (p *placer) rings(i, w, h, from, maxGap, step int) (image.Rectangle, bool, int) {
	b := p.labels[i].Box
	bd := p.bounds
	for d := from; maxGap < 0 || d <= maxGap; d += step {
		if b.Min.X-d-w < bd.Min.X && b.Max.X+d+w > bd.Max.X && b.Min.Y-d-h < bd.Min.Y && b.Max.Y+d+h > bd.Max.Y {
			break // the ring lies wholly outside the image
		}
		best, bestCost, found := image.Rectangle{}, math.Inf(1), false
		try := func(x, y int) bool {
			if p.budget <= 0 {
				return false
			}
			p.budget--
			r := image.Rect(x, y, x+w, y+h)
			if p.tags.any(r) {
				return true
			}
			if c := p.cost(i, r); c < bestCost {
				best, bestCost, found = r, c, true
				if c == 0 {
					return false
				}
			}
			return true
		}
		x0, x1 := max(b.Min.X-d-w, bd.Min.X), min(b.Max.X+d, bd.Max.X-w)
		y0, y1 := max(b.Min.Y-d-h, bd.Min.Y), min(b.Max.Y+d, bd.Max.Y-h)
		sides := []func() bool{
			func() bool { // above
				y := b.Min.Y - d - h
				if y < bd.Min.Y {
					return true
				}
				for x := x0; x <= x1; x += step {
					if !try(x, y) {
						return false
					}
				}
				return true
			},
			func() bool { // left
				x := b.Min.X - d - w
				if x < bd.Min.X {
					return true
				}
				for y := y0; y <= y1; y += step {
					if !try(x, y) {
						return false
					}
				}
				return true
			},
			func() bool { // right
				x := b.Max.X + d
				if x+w > bd.Max.X {
					return true
				}
				for y := y0; y <= y1; y += step {
					if !try(x, y) {
						return false
					}
				}
				return true
			},
			func() bool { // below
				y := b.Max.Y + d
				if y+h > bd.Max.Y {
					return true
				}
				for x := x0; x <= x1; x += step {
					if !try(x, y) {
						return false
					}
				}
				return true
			},
		}
		for _, side := range sides {
			if !side() {
				break
			}
		}
		if found {
			return best, true, d
		}
		if p.budget <= 0 {
			break
		}
	}
	return image.Rectangle{}, false, 0
}
