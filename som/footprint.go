package som

import (
	"image"
	"image/color"
)

// Footprint lists rectangles covering every pixel Render would change when
// drawing labels on an image with the given bounds (Grayscale aside,
// which changes them all). A caller that keeps an image in a form where
// untouched areas cost nothing, such as a JPEG's DCT blocks, decodes and
// re-encodes only these areas. The rectangles are clipped to bounds and
// may overlap.
func Footprint(bounds image.Rectangle, labels []Label, opts Options) []image.Rectangle {
	rc := &recordCanvas{bounds: bounds}
	paint(rc, bounds, labels, opts.config())
	return rc.rects
}

// recordCanvas records where drawing would happen instead of drawing.
type recordCanvas struct {
	bounds image.Rectangle
	rects  []image.Rectangle
}

func (c *recordCanvas) add(r image.Rectangle) {
	r = r.Intersect(c.bounds)
	if r.Empty() {
		return
	}
	// Leader lines are drawn a pixel at a time: grow the last rectangle
	// when the new one touches it.
	if n := len(c.rects); n > 0 {
		last := c.rects[n-1]
		if grown := last.Union(r); grown.Dx()*grown.Dy() <= last.Dx()*last.Dy()+r.Dx()*r.Dy()+16 {
			c.rects[n-1] = grown
			return
		}
	}
	c.rects = append(c.rects, r)
}

func (c *recordCanvas) fill(r image.Rectangle, _ color.RGBA) { c.add(r) }

func (c *recordCanvas) glyph(_ []uint8, w, h int, at image.Point, clip image.Rectangle, _ color.RGBA) {
	c.add(image.Rect(at.X, at.Y, at.X+w, at.Y+h).Intersect(clip))
}

func (c *recordCanvas) gray()  { c.add(c.bounds) }
func (c *recordCanvas) flush() {}
