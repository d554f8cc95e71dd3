package perception

import (
	"math"
	"testing"
)

func TestParseClipPath(t *testing.T) {
	box := Rect{100, 50, 200, 100} // x 100-300, y 50-150
	for _, c := range []struct {
		value   string
		in, out [][2]float64
	}{
		{"inset(0px 0px 0px 60%)", [][2]float64{{250, 100}, {221, 60}}, [][2]float64{{200, 100}, {219, 100}}},
		{"inset(10px)", [][2]float64{{111, 61}, {289, 139}}, [][2]float64{{105, 100}, {200, 145}}},
		{"inset(0px 50% 0px 0px round 8px)", [][2]float64{{150, 100}}, [][2]float64{{250, 100}}},
		{"polygon(0px 0px, 35% 0px, 35% 100%, 0px 100%)", [][2]float64{{150, 100}}, [][2]float64{{200, 100}}},
		{"polygon(evenodd, 50% 0%, 100% 100%, 0% 100%)", [][2]float64{{200, 140}}, [][2]float64{{110, 60}}},
		{"circle(30% at 80% 50%)", [][2]float64{{260, 100}}, [][2]float64{{200, 100}}},
		{"circle(20px at right bottom)", [][2]float64{{295, 145}}, [][2]float64{{270, 100}}},
		{"circle(closest-side)", [][2]float64{{200, 100}, {200, 55}}, [][2]float64{{120, 100}}},
		{"ellipse(50px 20px at 50% 50%)", [][2]float64{{240, 100}, {200, 115}}, [][2]float64{{200, 125}, {255, 100}}},
		{"inset(0px) border-box", [][2]float64{{200, 100}}, nil},
	} {
		s, ok := parseClipPath(c.value, box)
		if !ok {
			t.Errorf("%s: not read", c.value)
			continue
		}
		for _, p := range c.in {
			if !s.Contains(p[0], p[1]) {
				t.Errorf("%s: (%g, %g) should be inside", c.value, p[0], p[1])
			}
		}
		for _, p := range c.out {
			if s.Contains(p[0], p[1]) {
				t.Errorf("%s: (%g, %g) should be outside", c.value, p[0], p[1])
			}
		}
	}
	for _, v := range []string{"", "none", "url(\"#clip\")", "path(\"M 0 0 L 10 10 Z\")", "inset(1em)", "circle(30% at 80%)", "polygon(0px 0px, 10px)", "inset(0px) content-box", "inset(calc(10% + 2px))"} {
		if _, ok := parseClipPath(v, box); ok {
			t.Errorf("%q was read", v)
		}
	}
	// A circle's percentage is of the box's diagonal over √2.
	if s, _ := parseClipPath("circle(50%)", Rect{0, 0, 30, 40}); math.Abs(s.rx-0.5*50/math.Sqrt2) > 1e-9 {
		t.Errorf("circle(50%%) of a 30x40 box has radius %g; want %g", s.rx, 0.5*50/math.Sqrt2)
	}
}
