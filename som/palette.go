package som

import (
	"image"
	"image/color"
	"math"
)

// DefaultPalette holds saturated colours that are far apart in hue and
// lightness, so that neighbouring marks are easy to tell apart. Each is
// either dark enough for white digits or light enough for black ones with
// a contrast ratio of at least 5.5:1, more than WCAG's 4.5:1 minimum, so
// digits survive downscaling. Treat it as read-only.
var DefaultPalette = []color.RGBA{
	{0xC8, 0x10, 0x3C, 0xFF}, // red
	{0x15, 0x65, 0xC0, 0xFF}, // blue
	{0x2E, 0xA0, 0x43, 0xFF}, // green
	{0xF5, 0x82, 0x31, 0xFF}, // orange
	{0x91, 0x1E, 0xB4, 0xFF}, // purple
	{0x00, 0xA5, 0xB5, 0xFF}, // teal
	{0xF0, 0x32, 0xE6, 0xFF}, // magenta
	{0xE0, 0xB8, 0x00, 0xFF}, // amber
	{0x3F, 0x3F, 0xC8, 0xFF}, // indigo
	{0x8B, 0x57, 0x2A, 0xFF}, // brown
}

var (
	black = color.RGBA{0, 0, 0, 0xFF}
	white = color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
)

// linear maps an sRGB channel value to linear light, as WCAG 2 defines.
var linear = func() (t [256]float64) {
	for v := range t {
		s := float64(v) / 255
		if s <= 0.04045 {
			t[v] = s / 12.92
		} else {
			t[v] = math.Pow((s+0.055)/1.055, 2.4)
		}
	}
	return t
}()

// relativeLuminance is the WCAG 2 relative luminance of c, in [0, 1].
func relativeLuminance(c color.RGBA) float64 {
	return 0.2126*linear[c.R] + 0.7152*linear[c.G] + 0.0722*linear[c.B]
}

// contrastRatio is the WCAG 2 contrast ratio between a and b, in [1, 21].
func contrastRatio(a, b color.RGBA) float64 {
	la, lb := relativeLuminance(a), relativeLuminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// textColor returns black or white, whichever contrasts more with bg. For
// any opaque bg the ratio is at least 4.58:1, above WCAG's 4.5:1.
func textColor(bg color.RGBA) color.RGBA {
	if contrastRatio(bg, black) >= contrastRatio(bg, white) {
		return black
	}
	return white
}

// assignColours gives every label a palette colour that differs from the
// colours of its neighbours (marks whose box or tag is within a tag's
// height of its own) where the palette allows. It prefers ID mod the
// palette size, so a lone mark's colour depends only on its ID.
func assignColours(bounds image.Rectangle, labels []Label, order []int, palette []color.RGBA, margin int) {
	n := len(palette)
	if len(labels) == 0 {
		return
	}
	text := make([]color.RGBA, n)
	for i, c := range palette {
		c.A = 0xFF
		palette[i] = c // palette is our own copy (see Layout)
		text[i] = textColor(c)
	}
	// Spatial index over each label's footprint: box plus tag.
	foot := make([]image.Rectangle, len(labels))
	g := newGrid(bounds, len(labels))
	for i, l := range labels {
		foot[i] = l.Box.Union(l.Rect).Inset(-margin)
		g.add(foot[i])
	}
	colour := make([]int, len(labels))
	for i := range colour {
		colour[i] = -1
	}
	used := make([]int, n) // weighted neighbours using each colour
	for _, i := range order {
		clear(used)
		a := labels[i]
		g.query(foot[i], func(j int) bool {
			if j == i || colour[j] < 0 {
				return true
			}
			// Marks whose boxes or tags touch must differ; marks merely
			// nearby should.
			b := labels[j]
			w := 1
			if touches(a.Box, b.Box) || touches(a.Rect, b.Box) || touches(b.Rect, a.Box) ||
				(!a.Rect.Empty() && !b.Rect.Empty() && touches(a.Rect.Inset(-TagGap), b.Rect)) {
				w = 1 << 16
			}
			used[colour[j]] += w
			return true
		})
		pref := a.ID % n
		if pref < 0 {
			pref += n
		}
		best := -1
		for k := range n {
			c := (pref + k) % n
			if best < 0 || used[c] < used[best] {
				best = c
			}
			if used[c] == 0 {
				break
			}
		}
		colour[i] = best
		labels[i].Color = palette[best]
		labels[i].Text = text[best]
	}
}
