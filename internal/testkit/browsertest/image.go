package browsertest

import (
	"image"
	"math"
)

// LumaSpread is the largest difference of a pixel's luma (0-255) from the
// mean luma of r in img: small for a box painted one colour, large where
// text is drawn. It is 0 for an empty r.
func LumaSpread(img image.Image, r image.Rectangle) float64 {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return 0
	}
	var ls []float64
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			l := (0.299*float64(cr) + 0.587*float64(cg) + 0.114*float64(cb)) / 257
			ls = append(ls, l)
			sum += l
		}
	}
	mean := sum / float64(len(ls))
	worst := 0.0
	for _, l := range ls {
		worst = max(worst, math.Abs(l-mean))
	}
	return worst
}
