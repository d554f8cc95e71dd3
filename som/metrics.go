package som

import (
	"image"
	"math"
)

// Metrics describe how well a layout serves a model reading the image.
// Shares are of the total tag area inside the image.
type Metrics struct {
	Tags        int     // labels with a tag
	Dropped     int     // labels without a tag
	Overlapping int     // tags that overlap another tag
	Obscured    int     // tags partly hidden by a tag drawn after them
	HiddenShare float64 // share of tag area hidden by tags drawn after them
	OffImage    int     // tags not wholly inside the image
	CoverAny    float64 // share of tag area lying on any mark's box
	CoverOther  float64 // share lying on another mark's box: hides its text
	CoverOwn    float64 // share lying on the labelled mark's own box
	Detached    int     // tags that do not touch their own box
	Misleading  int     // tags that lie more on another box than on their own, or nearer to one
	MeanDist    float64 // mean distance in pixels from a tag to its box (0 when touching)
	MaxDist     float64 // largest such distance
}

// Measure computes Metrics for labels drawn in order on an image with the
// given bounds. It accepts any labels, not only those from Layout, so that
// other placement schemes can be compared with it. Its cost grows with the
// total tag area.
func Measure(bounds image.Rectangle, labels []Label) Metrics {
	var m Metrics
	bounds = saneBounds(bounds)
	boxes := newGrid(bounds, len(labels))
	tags := newGrid(bounds, len(labels))
	for _, l := range labels {
		boxes.add(l.Box)
		tags.add(l.Rect)
	}
	var total, any, other, own, hidden int
	var sumDist float64
	var near []int
	for i, l := range labels {
		if l.Rect.Empty() {
			m.Dropped++
			continue
		}
		m.Tags++
		if !l.Rect.In(bounds) {
			m.OffImage++
		}
		overlapping, obscured := false, false
		tags.query(l.Rect, func(j int) bool {
			if j != i {
				overlapping = true
				if j > i {
					obscured = true
				}
			}
			return true
		})
		if overlapping {
			m.Overlapping++
		}
		if obscured {
			m.Obscured++
		}
		d := rectDist(l.Rect, l.Box)
		sumDist += d
		m.MaxDist = max(m.MaxDist, d)
		if !touches(l.Rect, l.Box) {
			m.Detached++
		}
		if _, _, mis := tagAffinity(boxes, i, l.Rect); mis {
			m.Misleading++
		}

		// Per pixel of the tag: which boxes and later tags lie on it.
		r := l.Rect.Intersect(bounds)
		near = near[:0]
		boxes.query(r, func(j int) bool { near = append(near, j); return true })
		nb := len(near)
		tags.query(r, func(j int) bool {
			if j > i {
				near = append(near, j)
			}
			return true
		})
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				p := image.Pt(x, y)
				total++
				onOwn, onOther := false, false
				for _, j := range near[:nb] {
					if p.In(labels[j].Box) {
						if j == i {
							onOwn = true
						} else {
							onOther = true
						}
					}
				}
				if onOwn || onOther {
					any++
				}
				if onOwn {
					own++
				}
				if onOther {
					other++
				}
				for _, j := range near[nb:] {
					if p.In(labels[j].Rect) {
						hidden++
						break
					}
				}
			}
		}
	}
	if m.Tags > 0 {
		m.MeanDist = sumDist / float64(m.Tags)
	}
	if total > 0 {
		t := float64(total)
		m.CoverAny, m.CoverOther, m.CoverOwn = float64(any)/t, float64(other)/t, float64(own)/t
		m.HiddenShare = float64(hidden) / t
	}
	return m
}

// rectDist is the Euclidean distance between two rectangles, 0 if they
// touch or overlap.
func rectDist(a, b image.Rectangle) float64 {
	dx := max(0, b.Min.X-a.Max.X, a.Min.X-b.Max.X)
	dy := max(0, b.Min.Y-a.Max.Y, a.Min.Y-b.Max.Y)
	return math.Hypot(float64(dx), float64(dy))
}

// touches reports whether a and b (both non-empty) overlap or share an
// edge or corner.
func touches(a, b image.Rectangle) bool {
	return !a.Empty() && !b.Empty() && rectDist(a, b) == 0
}
