package som

import (
	"image/color"
	"math"
	"math/rand/v2"
	"testing"
)

// WCAG 2 requires 4.5:1 for normal text; the default palette aims higher.
const (
	wcagMinContrast    = 4.5
	paletteMinContrast = 5.5
	paletteMinDeltaE   = 25 // CIE76 distance between any two palette colours
)

func TestTextColorContrast(t *testing.T) {
	// Known values from the WCAG definition.
	if got := contrastRatio(black, white); math.Abs(got-21) > 1e-9 {
		t.Errorf("contrast(black, white) = %v, want 21", got)
	}
	if got := contrastRatio(white, white); got != 1 {
		t.Errorf("contrast(white, white) = %v, want 1", got)
	}
	// #767676 on white is the classic 4.54:1 grey.
	if got := contrastRatio(color.RGBA{0x76, 0x76, 0x76, 0xFF}, white); math.Abs(got-4.54) > 0.01 {
		t.Errorf("contrast(#767676, white) = %.3f, want 4.54", got)
	}
	for i, c := range DefaultPalette {
		tc := textColor(c)
		if r := contrastRatio(c, tc); r < paletteMinContrast {
			t.Errorf("palette[%d] %v: text %v has contrast %.2f, want >= %v", i, c, tc, r, paletteMinContrast)
		}
	}
	// Any opaque colour gets a text colour with at least 4.5:1, so custom
	// palettes are safe too. Check the grey ramp (the worst case is a mid
	// grey) and random colours.
	check := func(c color.RGBA) {
		if r := contrastRatio(c, textColor(c)); r < wcagMinContrast {
			t.Fatalf("%v: text contrast %.3f, want >= %v", c, r, wcagMinContrast)
		}
	}
	for v := range 256 {
		check(color.RGBA{uint8(v), uint8(v), uint8(v), 0xFF})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		check(color.RGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 0xFF})
	}
}

func TestPaletteDistinct(t *testing.T) {
	for i, a := range DefaultPalette {
		for j, b := range DefaultPalette[:i] {
			if d := deltaE(a, b); d < paletteMinDeltaE {
				t.Errorf("palette[%d] %v and palette[%d] %v are too alike: delta E %.1f < %v", j, b, i, a, d, paletteMinDeltaE)
			}
		}
	}
}

// TestNeighbourColours checks that touching marks get different colours
// in the dense scenes, where the palette is large enough.
func TestNeighbourColours(t *testing.T) {
	for _, s := range denseScenes() {
		labels := Layout(imageRect(s.w, s.h), s.marks, Options{})
		same := 0
		for i, a := range labels {
			for _, b := range labels[:i] {
				if a.Color == b.Color && (touches(a.Box, b.Box) || touches(a.Rect, b.Box) || touches(b.Rect, a.Box) || touches(a.Rect.Inset(-TagGap), b.Rect)) {
					same++
					t.Logf("%s: %d and %d touch and share colour %v", s.name, a.ID, b.ID, a.Color)
				}
			}
		}
		if same > 0 {
			t.Errorf("%s: %d touching pairs share a colour", s.name, same)
		}
	}
}

// deltaE is the CIE76 colour difference of two sRGB colours.
func deltaE(a, b color.RGBA) float64 {
	l1, a1, b1 := lab(a)
	l2, a2, b2 := lab(b)
	return math.Sqrt((l1-l2)*(l1-l2) + (a1-a2)*(a1-a2) + (b1-b2)*(b1-b2))
}

func lab(c color.RGBA) (l, a, b float64) {
	lin := func(v uint8) float64 {
		s := float64(v) / 255
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	r, g, bl := lin(c.R), lin(c.G), lin(c.B)
	x := (0.4124*r + 0.3576*g + 0.1805*bl) / 0.95047
	y := 0.2126*r + 0.7152*g + 0.0722*bl
	z := (0.0193*r + 0.1192*g + 0.9505*bl) / 1.08883
	f := func(t float64) float64 {
		if t > 216.0/24389 {
			return math.Cbrt(t)
		}
		return (24389.0/27*t + 16) / 116
	}
	fx, fy, fz := f(x), f(y), f(z)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}
