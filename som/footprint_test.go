package som

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// TestFootprintCoversEveryChange renders random layouts on a noisy image
// and checks that every pixel that changed lies inside the footprint: a
// caller may rely on it to re-encode only those areas.
func TestFootprintCoversEveryChange(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 60; trial++ {
		w, h := 200+rng.IntN(600), 150+rng.IntN(400)
		src := image.NewRGBA(image.Rect(0, 0, w, h))
		for i := range src.Pix {
			src.Pix[i] = uint8(rng.IntN(256))
		}
		var marks []Mark
		for i := 0; i < 1+rng.IntN(120); i++ {
			marks = append(marks, Mark{
				ID:      rng.IntN(1000),
				Box:     Rect{X: rng.Float64()*float64(w) - 20, Y: rng.Float64()*float64(h) - 20, W: 2 + rng.Float64()*120, H: 2 + rng.Float64()*60},
				Covered: rng.IntN(4) == 0,
			})
		}
		opts := Options{}
		labels := Layout(src.Bounds(), marks, opts)
		out := Render(src, labels, opts).(*image.RGBA)
		fp := Footprint(src.Bounds(), labels, opts)
		inside := func(x, y int) bool {
			p := image.Pt(x, y)
			for _, r := range fp {
				if p.In(r) {
					return true
				}
			}
			return false
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if src.RGBAAt(x, y) != out.RGBAAt(x, y) && !inside(x, y) {
					t.Fatalf("trial %d: pixel (%d,%d) changed outside the footprint (%d rects)", trial, x, y, len(fp))
				}
			}
		}
	}
}

func TestFootprintOfNothing(t *testing.T) {
	if fp := Footprint(image.Rect(0, 0, 100, 100), nil, Options{}); len(fp) != 0 {
		t.Errorf("no labels, footprint %v", fp)
	}
	var _ color.RGBA
}
