package websurfer

import (
	"context"
	"math"
	"sort"

	"github.com/surfkit/surf/perception"
)

// hitsElement reports whether a click landing on hit (the browser's hit
// test at an element's click point) acts on the element.
func hitsElement(hit *snapNode, r *elementRef) bool {
	return hit != nil && (hit.IsDescendantOf(r.node) || perception.Reaches(hit, r.node))
}

// freePointGrid is how many points across and down the search for a free
// point tries.
const freePointGrid = 5

// movePointToFree looks for a point of an element's visible box that the
// browser hit-tests to the element, for when its click point is not free:
// part of it is cut away by a clip-path, or covered by something, perhaps
// something the observation did not see. It tries a grid of points, the
// nearest to the centre first, and on success makes the first free one the
// element's click point. It reports whether it found one; an error means
// the page or frame is gone.
func (s *Surfer) movePointToFree(ctx context.Context, r *elementRef) (bool, error) {
	for _, p := range gridPoints(r.vis, freePointGrid) {
		if p[0] == math.Round(r.clickX) && p[1] == math.Round(r.clickY) {
			continue
		}
		hit, _, err := s.hitTestAt(ctx, r, p[0], p[1])
		if err != nil {
			if isGone(err) {
				return false, err
			}
			return false, nil
		}
		if hitsElement(hit, r) {
			r.clickX, r.clickY = p[0], p[1]
			return true, nil
		}
	}
	return false, nil
}

// gridPoints are n×n points spread over the inside of a box, on whole
// pixels (what the browser's hit test takes), nearest to the centre first.
// A box too small to spread points over gives none.
func gridPoints(b rect, n int) [][2]float64 {
	if b.W < 2 || b.H < 2 {
		return nil
	}
	cx, cy := b.Center()
	var pts [][2]float64
	seen := map[[2]float64]bool{}
	for i := range n {
		for j := range n {
			p := [2]float64{
				math.Round(b.X + b.W*(float64(i)+0.5)/float64(n)),
				math.Round(b.Y + b.H*(float64(j)+0.5)/float64(n)),
			}
			// Rounding must not leave the box.
			p[0] = min(max(p[0], math.Ceil(b.X)), math.Ceil(b.Right())-1)
			p[1] = min(max(p[1], math.Ceil(b.Y)), math.Ceil(b.Bottom())-1)
			if !b.Contains(p[0], p[1]) || seen[p] {
				continue
			}
			seen[p] = true
			pts = append(pts, p)
		}
	}
	sort.SliceStable(pts, func(i, j int) bool {
		return math.Hypot(pts[i][0]-cx, pts[i][1]-cy) < math.Hypot(pts[j][0]-cx, pts[j][1]-cy)
	})
	return pts
}
