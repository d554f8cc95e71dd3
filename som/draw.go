package som

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"strconv"
)

// Draw returns a copy of img with marks drawn on it: an outline around each
// visible box and a numbered tag placed by Layout. img is never modified.
//
// If img is an *image.YCbCr (what image/jpeg decodes to) whose bounds start
// at non-negative coordinates, the result is an *image.YCbCr of the same
// subsampling, drawn without converting to RGB, ready to be re-encoded as
// JPEG. Otherwise the result is an *image.RGBA with the bounds of img. A
// nil img gives an empty *image.RGBA.
//
// Draw is pure and safe for concurrent use.
func Draw(img image.Image, marks []Mark, opts Options) image.Image {
	if img == nil {
		return image.NewRGBA(image.Rectangle{})
	}
	cfg := opts.config()
	return render(img, layout(img.Bounds(), marks, cfg), cfg)
}

// Render is Draw with a layout computed beforehand by Layout (for the same
// bounds and Options), for callers that also report where the tags went.
// Labels are drawn as given, clipped to the image.
func Render(img image.Image, labels []Label, opts Options) image.Image {
	if img == nil {
		return image.NewRGBA(image.Rectangle{})
	}
	return render(img, labels, opts.config())
}

// RenderInPlace is Render drawing on img itself rather than a copy, for a
// caller that owns img and wants only the drawn result (jpegpatch's
// pixels, re-encoded where Footprint says they changed). img must take
// Render's Y'CbCr path (a known subsampling, bounds at non-negative
// coordinates, planes that cover them): for one that does not,
// RenderInPlace draws nothing and reports false.
func RenderInPlace(img *image.YCbCr, labels []Label, opts Options) bool {
	if img == nil || !ycbcrOK(img) {
		return false
	}
	cfg := opts.config()
	drawOn(newYCbCrCanvas(img), img.Bounds(), labels, cfg)
	return true
}

func render(img image.Image, labels []Label, cfg config) image.Image {
	if y, ok := img.(*image.YCbCr); ok && ycbcrOK(y) {
		dst := cloneYCbCr(y)
		drawOn(newYCbCrCanvas(dst), dst.Bounds(), labels, cfg)
		return dst
	}
	dst := cloneRGBA(img)
	drawOn(&rgbaCanvas{dst}, dst.Bounds(), labels, cfg)
	return dst
}

// drawOn paints the labels on c, greyed first if cfg says so, and flushes
// it.
func drawOn(c canvas, bounds image.Rectangle, labels []Label, cfg config) {
	if cfg.gray {
		c.gray()
	}
	paint(c, bounds, labels, cfg)
	c.flush()
}

// paint draws the labels' outlines, leader lines and tags on c.
func paint(c canvas, bounds image.Rectangle, labels []Label, cfg config) {
	for _, l := range labels {
		// Boxes from Layout are inside the image already; clip those
		// from other callers so that no loop runs past the image.
		outline(c, l.Box.Intersect(bounds), cfg.stroke, l.Color, l.Covered)
	}
	for _, l := range labels {
		if l.Place == Detached && !l.Rect.Empty() {
			leader(c, l.Rect.Intersect(bounds), l.Box.Intersect(bounds), l.Color)
		}
	}
	var gs lastGlyphs
	for _, l := range labels {
		if l.Rect.Empty() {
			continue
		}
		tag(c, l, gs.get(l.FontSize))
	}
}

// canvas is a pixel buffer the primitives draw into. All methods clip to
// the image.
type canvas interface {
	fill(r image.Rectangle, c color.RGBA)
	// glyph blends colour c into the w x h alpha mask's area at r.Min,
	// clipped to r.
	glyph(mask []uint8, w, h int, at image.Point, clip image.Rectangle, c color.RGBA)
	gray()
	// flush finishes the drawing; the canvas is not used afterwards.
	flush()
}

// outline draws a stroke-wide frame just inside box, dashed if covered.
func outline(c canvas, b image.Rectangle, stroke int, col color.RGBA, dashed bool) {
	if stroke <= 0 || b.Empty() {
		return
	}
	s := min(stroke, (b.Dx()+1)/2, (b.Dy()+1)/2)
	sides := [4]image.Rectangle{
		{b.Min, image.Pt(b.Max.X, b.Min.Y+s)},                          // top
		{image.Pt(b.Min.X, b.Max.Y-s), b.Max},                          // bottom
		{image.Pt(b.Min.X, b.Min.Y+s), image.Pt(b.Min.X+s, b.Max.Y-s)}, // left
		{image.Pt(b.Max.X-s, b.Min.Y+s), image.Pt(b.Max.X, b.Max.Y-s)}, // right
	}
	if !dashed {
		for _, r := range sides {
			c.fill(r, col)
		}
		return
	}
	dash, gap := 3*s+2, 2*s+1
	for k, r := range sides {
		if k < 2 {
			for x := r.Min.X; x < r.Max.X; x += dash + gap {
				c.fill(image.Rect(x, r.Min.Y, min(x+dash, r.Max.X), r.Max.Y), col)
			}
		} else {
			for y := r.Min.Y; y < r.Max.Y; y += dash + gap {
				c.fill(image.Rect(r.Min.X, y, r.Max.X, min(y+dash, r.Max.Y)), col)
			}
		}
	}
}

// leader draws a 1-pixel line from tag r to the nearest point of box b.
func leader(c canvas, r, b image.Rectangle, col color.RGBA) {
	if b.Empty() || r.Empty() {
		return
	}
	clampPt := func(p image.Point, q image.Rectangle) image.Point {
		return image.Pt(min(max(p.X, q.Min.X), q.Max.X-1), min(max(p.Y, q.Min.Y), q.Max.Y-1))
	}
	centre := image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
	to := clampPt(centre, b)
	from := clampPt(to, r)
	dx, dy := to.X-from.X, to.Y-from.Y
	n := max(abs(dx), abs(dy))
	if n == 0 || n > 1<<16 {
		return
	}
	for k := 0; k <= n; k++ {
		x := from.X + (dx*k+sign(dx)*n/2)/n
		y := from.Y + (dy*k+sign(dy)*n/2)/n
		c.fill(image.Rect(x, y, x+1, y+1), col)
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// lastGlyphs remembers the glyph set of the last font size used, so that
// drawing many tags takes the package cache's lock about once.
type lastGlyphs struct {
	size float64
	set  *glyphSet
}

func (gc *lastGlyphs) get(size float64) *glyphSet {
	if math.IsNaN(size) {
		size = DefaultFontSize
	}
	size = quantiseSize(min(max(size, minFontSize), maxFontSize))
	if gc.set == nil || gc.size != size {
		gc.size, gc.set = size, glyphs(size)
	}
	return gc.set
}

// tag draws the filled tag and its digits in glyph set g (nil: no digits).
func tag(c canvas, l Label, g *glyphSet) {
	c.fill(l.Rect, l.Color)
	if g == nil {
		return
	}
	text := strconv.Itoa(l.ID)
	tw := len(text) * g.cellW
	x := l.Rect.Min.X + (l.Rect.Dx()-tw+1)/2
	y := l.Rect.Min.Y + (l.Rect.Dy()-g.cellH+1)/2
	for i := 0; i < len(text); i++ {
		if k := glyphIndex(text[i]); k >= 0 {
			c.glyph(g.masks[k], g.cellW, g.cellH, image.Pt(x, y), l.Rect, l.Text)
		}
		x += g.cellW
	}
}

// cloneRGBA copies img into a new *image.RGBA with the same bounds, with
// fast paths for the types screenshots decode to.
func cloneRGBA(img image.Image) *image.RGBA {
	b := img.Bounds()
	dst := image.NewRGBA(b)
	if b.Empty() {
		return dst
	}
	switch s := img.(type) {
	case *image.RGBA:
		if !pixOK(len(s.Pix), s.Stride, 4, b, s.Rect) {
			return dst
		}
		n := 4 * b.Dx()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			copy(dst.Pix[dst.PixOffset(b.Min.X, y):][:n], s.Pix[s.PixOffset(b.Min.X, y):][:n])
		}
		return dst
	case *image.NRGBA:
		if !pixOK(len(s.Pix), s.Stride, 4, b, s.Rect) {
			return dst
		}
	case *image.YCbCr:
		if !ycbcrPlanesOK(s) {
			return dst
		}
	}
	// image/draw has fast paths for NRGBA, YCbCr, Gray, CMYK and
	// Paletted sources into an RGBA destination.
	draw.Draw(dst, b, img, b.Min, draw.Src)
	return dst
}

// pixOK reports whether a packed image's pixel slice is long enough for
// its bounds, so that a malformed image cannot make the copy panic.
func pixOK(n, stride, bpp int, b, rect image.Rectangle) bool {
	if b != rect || stride < bpp*b.Dx() {
		return false
	}
	return n >= stride*(b.Dy()-1)+bpp*b.Dx()
}

// rgbaCanvas draws into an *image.RGBA.
type rgbaCanvas struct{ m *image.RGBA }

var _ canvas = (*rgbaCanvas)(nil)

func (c *rgbaCanvas) fill(r image.Rectangle, col color.RGBA) {
	r = r.Intersect(c.m.Rect)
	if r.Empty() {
		return
	}
	w := 4 * r.Dx()
	first := c.m.Pix[c.m.PixOffset(r.Min.X, r.Min.Y):][:w]
	for i := 0; i < w; i += 4 {
		first[i], first[i+1], first[i+2], first[i+3] = col.R, col.G, col.B, 0xFF
	}
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		copy(c.m.Pix[c.m.PixOffset(r.Min.X, y):][:w], first)
	}
}

func (c *rgbaCanvas) glyph(mask []uint8, w, h int, at image.Point, clip image.Rectangle, col color.RGBA) {
	r := image.Rect(at.X, at.Y, at.X+w, at.Y+h).Intersect(clip).Intersect(c.m.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := mask[(y-at.Y)*w:]
		px := c.m.Pix[c.m.PixOffset(r.Min.X, y):]
		for x := r.Min.X; x < r.Max.X; x++ {
			a := uint32(row[x-at.X])
			p := px[4*(x-r.Min.X):][:4]
			switch a {
			case 0:
			case 0xFF:
				p[0], p[1], p[2], p[3] = col.R, col.G, col.B, 0xFF
			default:
				p[0] = blend(p[0], col.R, a)
				p[1] = blend(p[1], col.G, a)
				p[2] = blend(p[2], col.B, a)
				p[3] = 0xFF
			}
		}
	}
}

// blend mixes fg over bg with coverage a in [0, 255].
func blend(bg, fg uint8, a uint32) uint8 {
	return uint8((uint32(fg)*a + uint32(bg)*(255-a) + 127) / 255)
}

func (c *rgbaCanvas) flush() {}

func (c *rgbaCanvas) gray() {
	b := c.m.Rect
	for y := b.Min.Y; y < b.Max.Y; y++ {
		px := c.m.Pix[c.m.PixOffset(b.Min.X, y):][:4*b.Dx()]
		for i := 0; i+3 < len(px); i += 4 {
			// Rec. 601 luma, as color.GrayModel and JPEG use.
			l := uint8((19595*uint32(px[i]) + 38470*uint32(px[i+1]) + 7471*uint32(px[i+2]) + 1<<15) >> 16)
			px[i], px[i+1], px[i+2] = l, l, l
		}
	}
}
