package som

import (
	"image"
	"image/color"
	"sync"
)

// The YCbCr canvas draws straight into a JPEG-style Y'CbCr image: luma per
// pixel, and each chroma sample set to the average over its block of the
// drawn colours and the old chroma, which is what a JPEG encoder's chroma
// averaging makes of the same drawing in RGB. So the result matches the
// RGBA path after re-encoding, without converting the whole image to RGB
// and back.

// subsampling returns the chroma block size of a subsample ratio, and false
// for ratios this package does not know.
func subsampling(r image.YCbCrSubsampleRatio) (hs, vs int, ok bool) {
	switch r {
	case image.YCbCrSubsampleRatio444:
		return 1, 1, true
	case image.YCbCrSubsampleRatio422:
		return 2, 1, true
	case image.YCbCrSubsampleRatio420:
		return 2, 2, true
	case image.YCbCrSubsampleRatio440:
		return 1, 2, true
	case image.YCbCrSubsampleRatio411:
		return 4, 1, true
	case image.YCbCrSubsampleRatio410:
		return 4, 2, true
	}
	return 0, 0, false
}

// ycbcrOK reports whether m can take the YCbCr fast path: a known
// subsampling, bounds at non-negative coordinates (where chroma blocks are
// aligned) and planes long enough for the bounds.
func ycbcrOK(m *image.YCbCr) bool {
	if _, _, ok := subsampling(m.SubsampleRatio); !ok {
		return false
	}
	return m.Rect.Min.X >= 0 && m.Rect.Min.Y >= 0 && ycbcrPlanesOK(m)
}

// ycbcrPlanesOK reports whether m's planes cover its bounds, so that a
// malformed image cannot make a copy panic. Offsets grow with x and y, so
// checking the first and last pixel is enough.
func ycbcrPlanesOK(m *image.YCbCr) bool {
	b := m.Rect
	if b.Empty() {
		return true
	}
	if m.YStride < b.Dx() || m.CStride < 0 || len(m.Cb) != len(m.Cr) {
		return false
	}
	return m.YOffset(b.Min.X, b.Min.Y) >= 0 && m.YOffset(b.Max.X-1, b.Max.Y-1) < len(m.Y) &&
		m.COffset(b.Min.X, b.Min.Y) >= 0 && m.COffset(b.Max.X-1, b.Max.Y-1) < len(m.Cb)
}

// cloneYCbCr copies m, which must satisfy ycbcrOK, into a new image of
// the same bounds and subsampling.
func cloneYCbCr(m *image.YCbCr) *image.YCbCr {
	b := m.Rect
	dst := image.NewYCbCr(b, m.SubsampleRatio)
	if b.Empty() {
		return dst
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		copy(dst.Y[dst.YOffset(b.Min.X, y):][:b.Dx()], m.Y[m.YOffset(b.Min.X, y):][:b.Dx()])
	}
	hs, vs, _ := subsampling(m.SubsampleRatio)
	cw := (b.Max.X+hs-1)/hs - b.Min.X/hs
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if y != b.Min.Y && y%vs != 0 {
			continue // same chroma row as the line above
		}
		d, s := dst.COffset(b.Min.X, y), m.COffset(b.Min.X, y)
		copy(dst.Cb[d:][:cw], m.Cb[s:][:cw])
		copy(dst.Cr[d:][:cw], m.Cr[s:][:cw])
	}
	return dst
}

// ycbcrCanvas keeps, for every pixel it draws, the pixel's own chroma in
// scratch planes, and on flush sets each touched chroma sample to the
// average over its block of the drawn chroma and, for pixels not drawn,
// the sample's old value. Drawing order and overdraw (a tag over an
// outline) are thereby handled exactly as in RGB.
type ycbcrCanvas struct {
	m      *image.YCbCr
	hs, vs int
	*scratch
}

var _ canvas = (*ycbcrCanvas)(nil)

// scratch is the per-pixel state of a ycbcrCanvas, pooled between calls.
// drawn and seen are all false between uses: flush clears what it set.
type scratch struct {
	cb, cr []uint8
	drawn  []bool  // per pixel
	seen   []bool  // per chroma sample: already in blocks
	blocks []block // every touched chroma block
}

// block is a chroma block: its first pixel inside the image and the offset
// of its chroma sample.
type block struct{ x, y, o int }

var scratchPool sync.Pool

func newYCbCrCanvas(m *image.YCbCr) *ycbcrCanvas {
	hs, vs, _ := subsampling(m.SubsampleRatio)
	n := m.Rect.Dx() * m.Rect.Dy()
	s, _ := scratchPool.Get().(*scratch)
	if s == nil || len(s.drawn) < n || len(s.seen) < len(m.Cb) {
		s = &scratch{
			cb:    make([]uint8, n),
			cr:    make([]uint8, n),
			drawn: make([]bool, n),
			seen:  make([]bool, len(m.Cb)),
		}
	}
	return &ycbcrCanvas{m: m, hs: hs, vs: vs, scratch: s}
}

// pix is the index of pixel (x, y) in the scratch planes.
func (c *ycbcrCanvas) pix(x, y int) int {
	return (y-c.m.Rect.Min.Y)*c.m.Rect.Dx() + x - c.m.Rect.Min.X
}

// touch records the chroma blocks that r overlaps (r inside the image).
// Blocks next to each other in a row have consecutive chroma offsets.
func (c *ycbcrCanvas) touch(r image.Rectangle) {
	lo := c.m.Rect.Min
	bx0 := r.Min.X / c.hs * c.hs
	for by := r.Min.Y / c.vs * c.vs; by < r.Max.Y; by += c.vs {
		y := max(by, lo.Y)
		o := c.m.COffset(max(bx0, lo.X), y)
		for bx := bx0; bx < r.Max.X; bx += c.hs {
			if !c.seen[o] {
				c.seen[o] = true
				c.blocks = append(c.blocks, block{max(bx, lo.X), y, o})
			}
			o++
		}
	}
}

func (c *ycbcrCanvas) fill(r image.Rectangle, col color.RGBA) {
	m := c.m
	r = r.Intersect(m.Rect)
	if r.Empty() {
		return
	}
	yy, cb, cr := color.RGBToYCbCr(col.R, col.G, col.B)
	w := r.Dx()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := m.Y[m.YOffset(r.Min.X, y):][:w]
		for i := range row {
			row[i] = yy
		}
		p := c.pix(r.Min.X, y)
		for i := p; i < p+w; i++ {
			c.cb[i], c.cr[i], c.drawn[i] = cb, cr, true
		}
	}
	c.touch(r)
}

func (c *ycbcrCanvas) glyph(mask []uint8, w, h int, at image.Point, clip image.Rectangle, col color.RGBA) {
	m := c.m
	r := image.Rect(at.X, at.Y, at.X+w, at.Y+h).Intersect(clip).Intersect(m.Rect)
	if r.Empty() {
		return
	}
	yy, cb, cr := color.RGBToYCbCr(col.R, col.G, col.B)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		row := mask[(y-at.Y)*w:]
		px := m.Y[m.YOffset(r.Min.X, y):][:r.Dx()]
		p := c.pix(r.Min.X, y)
		for i := range px {
			a := uint32(row[r.Min.X-at.X+i])
			if a == 0 {
				continue
			}
			px[i] = blend(px[i], yy, a)
			k := p + i
			if !c.drawn[k] {
				o := m.COffset(r.Min.X+i, y)
				c.cb[k], c.cr[k], c.drawn[k] = m.Cb[o], m.Cr[o], true
			}
			c.cb[k] = blend(c.cb[k], cb, a)
			c.cr[k] = blend(c.cr[k], cr, a)
		}
	}
	c.touch(r)
}

// flush writes the chroma of every touched block and clears the scratch
// state for the next use.
func (c *ycbcrCanvas) flush() {
	m := c.m
	b, w := m.Rect, m.Rect.Dx()
	for _, blk := range c.blocks {
		x1 := min(blk.x/c.hs*c.hs+c.hs, b.Max.X)
		y1 := min(blk.y/c.vs*c.vs+c.vs, b.Max.Y)
		o := blk.o
		oldB, oldR := int(m.Cb[o]), int(m.Cr[o])
		var sb, sr, n int
		for y := blk.y; y < y1; y++ {
			k := (y-b.Min.Y)*w + blk.x - b.Min.X
			for x := blk.x; x < x1; x, k = x+1, k+1 {
				if c.drawn[k] {
					sb += int(c.cb[k])
					sr += int(c.cr[k])
					c.drawn[k] = false
				} else {
					sb += oldB
					sr += oldR
				}
				n++
			}
		}
		m.Cb[o] = uint8((sb + n/2) / n)
		m.Cr[o] = uint8((sr + n/2) / n)
		c.seen[o] = false
	}
	c.blocks = c.blocks[:0]
	scratchPool.Put(c.scratch)
	c.scratch = nil
}

func (c *ycbcrCanvas) gray() {
	m := c.m
	b := m.Rect
	if b.Empty() {
		return
	}
	cw := (b.Max.X+c.hs-1)/c.hs - b.Min.X/c.hs
	for y := b.Min.Y; y < b.Max.Y; y++ {
		o := m.COffset(b.Min.X, y)
		for i := range m.Cb[o:][:cw] {
			m.Cb[o+i] = 128
			m.Cr[o+i] = 128
		}
	}
}
