package perception

import (
	"math"
	"strconv"
	"strings"
)

// clip-path: a shape cut out of an element, outside of which neither the
// element nor anything inside it is painted or takes the pointer. surf
// reads the basic shapes (inset, polygon, circle, ellipse) against the
// element's border box, so that hit-testing in the snapshot, and so the
// click point, follows the part of the element that is shown. Other
// values (url(), path(), shapes against another box) are not read: the
// element counts as unclipped, and a click there still finds a free
// point with the browser's own hit test.

// clipShape is a clip-path shape in viewport coordinates.
type clipShape struct {
	poly   [][2]float64 // a polygon (inset is one too), or
	cx, cy float64      // an ellipse's centre
	rx, ry float64      // and radii
}

// contains reports whether (x, y) is inside the shape.
func (c *clipShape) Contains(x, y float64) bool {
	if c.poly != nil {
		return inPolygon(c.poly, x, y)
	}
	if c.rx <= 0 || c.ry <= 0 {
		return false
	}
	dx, dy := (x-c.cx)/c.rx, (y-c.cy)/c.ry
	return dx*dx+dy*dy <= 1
}

// inPolygon is the even-odd rule.
func inPolygon(p [][2]float64, x, y float64) bool {
	in := false
	for i, j := 0, len(p)-1; i < len(p); j, i = i, i+1 {
		xi, yi, xj, yj := p[i][0], p[i][1], p[j][0], p[j][1]
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// parseClipPath reads a computed clip-path value against a border box. It
// reports false for "none" and for what it does not read.
func parseClipPath(v string, box Rect) (*clipShape, bool) {
	v = strings.TrimSpace(v)
	if v == "" || v == "none" {
		return nil, false
	}
	if strings.HasSuffix(v, " border-box") {
		v = strings.TrimSpace(strings.TrimSuffix(v, " border-box"))
	}
	open := strings.IndexByte(v, '(')
	if open <= 0 || !strings.HasSuffix(v, ")") {
		return nil, false
	}
	fn, args := v[:open], strings.TrimSpace(v[open+1:len(v)-1])
	switch fn {
	case "inset":
		if i := strings.Index(args, " round "); i >= 0 {
			args = args[:i] // rounded corners: the square ones are near enough
		}
		f := strings.Fields(args)
		if len(f) < 1 || len(f) > 4 {
			return nil, false
		}
		var d [4]float64 // top, right, bottom, left
		for i := range d {
			k := map[int][]int{1: {0, 0, 0, 0}, 2: {0, 1, 0, 1}, 3: {0, 1, 2, 1}, 4: {0, 1, 2, 3}}[len(f)][i]
			ref := box.H
			if i%2 == 1 {
				ref = box.W
			}
			n, ok := clipLength(f[k], ref)
			if !ok {
				return nil, false
			}
			d[i] = n
		}
		x0, y0, x1, y1 := box.X+d[3], box.Y+d[0], box.Right()-d[1], box.Bottom()-d[2]
		return &clipShape{poly: [][2]float64{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}}, true
	case "polygon":
		parts := strings.Split(args, ",")
		if f := strings.Fields(parts[0]); len(f) == 1 && (f[0] == "nonzero" || f[0] == "evenodd") {
			parts = parts[1:]
		}
		var poly [][2]float64
		for _, p := range parts {
			f := strings.Fields(p)
			if len(f) != 2 {
				return nil, false
			}
			x, okx := clipLength(f[0], box.W)
			y, oky := clipLength(f[1], box.H)
			if !okx || !oky {
				return nil, false
			}
			poly = append(poly, [2]float64{box.X + x, box.Y + y})
		}
		if len(poly) < 3 {
			return nil, false
		}
		return &clipShape{poly: poly}, true
	case "circle", "ellipse":
		size, at, _ := strings.Cut(args, "at ")
		cx, cy := box.W/2, box.H/2
		if f := strings.Fields(at); len(f) == 2 {
			var okx, oky bool
			cx, okx = clipPosition(f[0], box.W, "left", "right")
			cy, oky = clipPosition(f[1], box.H, "top", "bottom")
			if !okx || !oky {
				return nil, false
			}
		} else if len(f) != 0 {
			return nil, false
		}
		f := strings.Fields(size)
		c := &clipShape{cx: box.X + cx, cy: box.Y + cy}
		side := func(s string, ref, centre float64) (float64, bool) {
			switch s {
			case "closest-side":
				return math.Min(centre, ref-centre), true
			case "farthest-side":
				return math.Max(centre, ref-centre), true
			}
			return clipLength(s, ref)
		}
		var ok bool
		if fn == "circle" {
			r := "closest-side"
			if len(f) == 1 {
				r = f[0]
			} else if len(f) > 1 {
				return nil, false
			}
			switch r {
			case "closest-side":
				c.rx = math.Min(math.Min(cx, box.W-cx), math.Min(cy, box.H-cy))
				ok = true
			case "farthest-side":
				c.rx = math.Max(math.Max(cx, box.W-cx), math.Max(cy, box.H-cy))
				ok = true
			default:
				// A percentage of a circle's radius is of the box's
				// diagonal over √2.
				c.rx, ok = clipLength(r, math.Hypot(box.W, box.H)/math.Sqrt2)
			}
			c.ry = c.rx
		} else {
			rx, ry := "closest-side", "closest-side"
			if len(f) == 2 {
				rx, ry = f[0], f[1]
			} else if len(f) != 0 {
				return nil, false
			}
			var okx, oky bool
			c.rx, okx = side(rx, box.W, cx)
			c.ry, oky = side(ry, box.H, cy)
			ok = okx && oky
		}
		if !ok {
			return nil, false
		}
		return c, true
	}
	return nil, false
}

// clipLength reads "12px", "40%" (of ref) or "0".
func clipLength(s string, ref float64) (float64, bool) {
	switch {
	case s == "0":
		return 0, true
	case strings.HasSuffix(s, "px"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "px"), 64)
		return f, err == nil
	case strings.HasSuffix(s, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
		return f / 100 * ref, err == nil
	}
	return 0, false
}

// clipPosition reads one coordinate of a shape's centre: a length, or a
// keyword for the start, centre or end.
func clipPosition(s string, ref float64, start, end string) (float64, bool) {
	switch s {
	case start:
		return 0, true
	case "center":
		return ref / 2, true
	case end:
		return ref, true
	}
	return clipLength(s, ref)
}

// clipPaths finds the elements of a snapshot with a clip-path surf reads.
// It is nil for the (usual) page with none.
func (s *Snapshot) clipPaths() map[*Node]*clipShape {
	var out map[*Node]*clipShape
	for _, d := range s.docs {
		for _, n := range d.nodes {
			if !n.isElement() || !n.hasLayout {
				continue
			}
			if c, ok := parseClipPath(n.style(styleClipPath), n.box); ok {
				if out == nil {
					out = map[*Node]*clipShape{}
				}
				out[n] = c
			}
		}
	}
	return out
}

// clippedAway reports whether a clip-path of n or of an ancestor in its
// document hides the point (x, y).
func clippedAway(paths map[*Node]*clipShape, n *Node, x, y float64) bool {
	for a, d := n, 0; a != nil && d < 256; a, d = a.parent, d+1 {
		if c, ok := paths[a]; ok && !c.Contains(x, y) {
			return true
		}
	}
	return false
}
