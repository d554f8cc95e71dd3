// Package jpegpatch edits baseline JPEG images in place, re-encoding only
// the 8x8 blocks a caller draws on.
//
// It reads a JPEG's quantized DCT coefficients without turning them into
// pixels, lets the caller decode, draw on and re-encode only the blocks it
// touches, and writes the JPEG back. Drawing numbered marks on a screenshot this way
// costs a fraction of a full decode and encode, and the blocks not drawn on
// keep their exact coefficients (no second round of compression loss).
// Where the source's Huffman tables can code the blocks drawn on (the
// standard tables always can; the optimized ones Chromium writes seldom
// do), the others keep their exact bits too: Encode copies them.
//
// It handles what browsers write for screenshots: baseline (and extended)
// sequential Huffman JPEGs with 8-bit samples, one (grey) or three (YCbCr)
// components, chroma at one sample per MCU, with or without restart
// intervals. Anything else returns ErrUnsupported, and the caller falls
// back to image/jpeg.
package jpegpatch

import (
	"encoding/binary"
	"errors"
	"fmt"
	"image"
)

// ErrUnsupported is returned for JPEGs this package does not edit
// (progressive, 12-bit, CMYK, odd sampling).
var ErrUnsupported = errors.New("jpegpatch: unsupported JPEG")

// errFormat is a malformed JPEG.
type errFormat string

func (e errFormat) Error() string { return "jpegpatch: malformed JPEG: " + string(e) }

// coefs is one block's quantized coefficients in zig-zag order.
type coefs [blockSize]int16

type component struct {
	id     byte
	h, v   int // sampling factors
	tq     int // quantization table
	td, ta int // Huffman tables (DC, AC) of the scan
	bw, bh int // blocks per row and column, padded to whole MCUs
	blocks []coefs
}

// Image is a JPEG held as quantized coefficients, with pixels decoded on
// demand.
type Image struct {
	w, h   int
	comps  []component
	quant  [4][blockSize]uint16 // zig-zag order
	qSet   [4]bool
	hmax   int
	vmax   int
	mcusX  int
	mcusY  int
	ri     int // restart interval in MCUs, 0 if none
	pix    *image.YCbCr
	doneMC []bool // MCUs whose pixels are decoded
	src    source // the scan as read, for Encode to copy from
	mod    []bool // MCUs whose coefficients Update changed
}

// source is what Encode needs to copy the bits of unchanged MCUs from the
// scan Decode read.
type source struct {
	// ok is false when copying is not possible: the scan coded a block
	// differently from how the encoder would, or its Huffman tables
	// cannot be written back as they are (see huffDec.writable).
	ok bool
	// ecs is the entropy-coded data with the stuffed zero bytes and the
	// RSTn markers taken out, followed by 8 zero bytes so that it can be
	// read a word at a time.
	ecs []byte
	// spans holds, for each MCU, the bit positions in ecs where its
	// coding starts and ends.
	spans []uint32
	ri    int                // the restart interval the scan used
	tabs  [3][2]*huffmanSpec // each component's DC and AC table
}

// Bounds is the image's rectangle.
func (m *Image) Bounds() image.Rectangle { return image.Rect(0, 0, m.w, m.h) }

// huffDec is a Huffman table for decoding.
type huffDec struct {
	lut     [256]uint16 // for codes up to 8 bits: value<<8 | length; 0 means longer
	maxcode [17]int32
	valptr  [17]int32
	mincode [17]int32
	vals    []byte
	counts  [16]byte
	ok      bool
	// allOnes is set when some code is all one bits, which libjpeg
	// refuses; such a table is never written back.
	allOnes bool
	// fast reads an AC coefficient in one look at the next fastBits
	// bits, for a code and its extra bits that fit in them together:
	// coefficient<<16 | run<<8 | bits used; 0 means look the slow way
	// (longer codes, and end of block and ZRL, which have no extra bits).
	fast [1 << fastBits]int32
}

func (h *huffDec) build(counts [16]byte, vals []byte) error {
	total := 0
	for _, c := range counts {
		total += int(c)
	}
	if total == 0 || total > 256 || total != len(vals) {
		return errFormat("bad Huffman table")
	}
	*h = huffDec{vals: vals, counts: counts, ok: true}
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		n := int32(counts[l-1])
		if code+n > 1<<l {
			return errFormat("bad Huffman codes") // more codes than the length allows
		}
		h.allOnes = h.allOnes || (n > 0 && code+n == 1<<l)
		h.valptr[l] = k
		h.mincode[l] = code
		if n == 0 {
			h.maxcode[l] = -1
		} else {
			for i := int32(0); i < n; i++ {
				if l <= 8 {
					c := (code + i) << (8 - l)
					for j := int32(0); j < 1<<(8-l); j++ {
						h.lut[c|j] = uint16(vals[k+i])<<8 | uint16(l)
					}
				}
				h.fastEntries(code+i, l, vals[k+i])
			}
			code += n
			k += n
			h.maxcode[l] = code - 1
		}
		code <<= 1
	}
	return nil
}

// fastBits is how many bits huffDec.fast looks at.
const fastBits = 9

// fastEntries fills the fast entries of the l-bit code c for AC symbol
// rs: one per value of its extra bits (and of the bits after them), when
// the code and its extra bits fit in fastBits.
func (h *huffDec) fastEntries(c int32, l int, rs byte) {
	run, size := int32(rs>>4), int(rs&15)
	if size == 0 || l+size > fastBits {
		return
	}
	rest := fastBits - l - size
	for e := int32(0); e < 1<<size; e++ {
		v := extend(uint32(e), uint(size))
		entry := v<<16 | run<<8 | int32(l+size)
		base := c<<(fastBits-l) | e<<rest
		for p := int32(0); p < 1<<rest; p++ {
			h.fast[base|p] = entry
		}
	}
}

// bitReader reads entropy-coded data, undoing 0xFF byte stuffing and
// stopping at markers. It keeps the bytes it reads, unstuffed, in out, so
// that Encode can copy the coding of MCUs that do not change.
type bitReader struct {
	data   []byte
	pos    int
	acc    uint64
	n      uint
	marker byte // the marker the data ran into, 0 if none yet
	past   int  // zero bytes fed in after the data ended
	out    []byte
	// odd is set when a block was coded in a way the encoder never
	// codes it (see decodeBlock): its bits cannot be copied as they are.
	odd bool
}

// overrun reports whether decoding has used bits beyond the data, the
// zeros fill feeds in once the data ends: the data was cut short.
func (r *bitReader) overrun() bool { return r.past*8 > int(r.n) }

// bitPos is how many bits of out decoding has used.
func (r *bitReader) bitPos() int { return 8*len(r.out) - int(r.n) + 8*r.past }

func (r *bitReader) fill() {
	// Most of the time the next 8 bytes hold no 0xFF: take as many whole
	// bytes of them as fit at once.
	if r.marker == 0 && r.pos+8 <= len(r.data) {
		v := binary.BigEndian.Uint64(r.data[r.pos:])
		if !hasFF(v) {
			k := (64 - r.n) / 8
			keep := 64 - 8*k // low bits of v not taken
			r.acc |= v >> keep << keep >> r.n
			r.out = append(r.out, r.data[r.pos:r.pos+int(k)]...)
			r.pos += int(k)
			r.n += 8 * k
			return
		}
	}
	for r.n <= 56 {
		var b byte
		if r.marker != 0 || r.pos >= len(r.data) {
			b = 0 // past the data: feed zeros; decoding checks overrun
			r.past++
		} else {
			b = r.data[r.pos]
			if b == 0xFF {
				if r.pos+1 < len(r.data) && r.data[r.pos+1] == 0x00 {
					r.pos += 2
					r.out = append(r.out, b)
				} else {
					if r.pos+1 < len(r.data) {
						r.marker = r.data[r.pos+1]
					} else {
						r.marker = 0xD9
					}
					b = 0
					r.past++
				}
			} else {
				r.pos++
				r.out = append(r.out, b)
			}
		}
		r.acc |= uint64(b) << (56 - r.n)
		r.n += 8
	}
}

// hasFF reports whether any byte of v is 0xFF.
func hasFF(v uint64) bool {
	x := ^v
	return (x-0x0101010101010101)&^x&0x8080808080808080 != 0
}

func (r *bitReader) bits(n uint) uint32 {
	if n == 0 {
		return 0
	}
	if r.n < n {
		r.fill()
	}
	v := uint32(r.acc >> (64 - n))
	r.acc <<= n
	r.n -= n
	return v
}

func (r *bitReader) decode(h *huffDec) (byte, error) {
	if !h.ok {
		return 0, errFormat("missing Huffman table")
	}
	if r.n < 16 {
		r.fill()
	}
	if e := h.lut[r.acc>>56]; e != 0 {
		l := uint(e & 0xFF)
		r.acc <<= l
		r.n -= l
		return byte(e >> 8), nil
	}
	code := int32(0)
	for l := 1; l <= 16; l++ {
		code = code<<1 | int32(r.acc>>63)
		r.acc <<= 1
		r.n--
		if code <= h.maxcode[l] {
			return h.vals[h.valptr[l]+code-h.mincode[l]], nil
		}
	}
	return 0, errFormat("bad Huffman code")
}

// extend turns s received bits into a signed coefficient.
func extend(v uint32, s uint) int32 {
	if s == 0 {
		return 0
	}
	if v < 1<<(s-1) {
		return int32(v) - (1 << s) + 1
	}
	return int32(v)
}

// restart skips an RSTn marker at a restart interval boundary.
func (r *bitReader) restart() error {
	r.acc, r.n, r.past = 0, 0, 0
	if r.marker == 0 {
		// Find the marker: it follows the padding of the last byte.
		for r.pos+1 < len(r.data) && !(r.data[r.pos] == 0xFF && r.data[r.pos+1] >= 0xD0 && r.data[r.pos+1] <= 0xD7) {
			r.pos++
		}
		if r.pos+1 >= len(r.data) {
			return errFormat("missing restart marker")
		}
		r.marker = r.data[r.pos+1]
	}
	if r.marker < 0xD0 || r.marker > 0xD7 {
		return errFormat("missing restart marker")
	}
	r.pos += 2
	r.marker = 0
	return nil
}

// Decode reads a JPEG's coefficients. Pixels are decoded only when asked
// for (Pixels).
func Decode(data []byte) (*Image, error) {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return nil, errFormat("no SOI")
	}
	m := &Image{}
	var dc, ac [4]huffDec
	pos := 2
	sawFrame := false
	for {
		// Find the next marker.
		for pos < len(data) && data[pos] != 0xFF {
			pos++
		}
		for pos < len(data) && data[pos] == 0xFF {
			pos++
		}
		if pos >= len(data) {
			return nil, errFormat("no EOI")
		}
		marker := data[pos]
		pos++
		switch {
		case marker == 0xD9: // EOI
			if m.comps == nil || m.comps[0].blocks == nil {
				return nil, errFormat("no image data")
			}
			return m, nil
		case marker == 0xD8 || (marker >= 0xD0 && marker <= 0xD7) || marker == 0x01:
			continue // no length
		}
		if pos+2 > len(data) {
			return nil, errFormat("short segment")
		}
		n := int(binary.BigEndian.Uint16(data[pos:]))
		if n < 2 || pos+n > len(data) {
			return nil, errFormat("bad segment length")
		}
		seg := data[pos+2 : pos+n]
		pos += n
		switch marker {
		case 0xDB: // DQT
			for len(seg) > 0 {
				pq, tq := seg[0]>>4, int(seg[0]&15)
				if pq != 0 {
					return nil, ErrUnsupported // 16-bit tables
				}
				if tq > 3 || len(seg) < 65 {
					return nil, errFormat("bad DQT")
				}
				for i := 0; i < blockSize; i++ {
					m.quant[tq][i] = uint16(seg[1+i])
					if seg[1+i] == 0 {
						return nil, errFormat("zero quantizer")
					}
				}
				m.qSet[tq] = true
				seg = seg[65:]
			}
		case 0xC0, 0xC1: // baseline, extended sequential (8-bit)
			if sawFrame {
				return nil, errFormat("two frames")
			}
			sawFrame = true
			if err := m.frame(seg); err != nil {
				return nil, err
			}
		case 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF:
			return nil, ErrUnsupported
		case 0xC4: // DHT
			for len(seg) > 0 {
				if len(seg) < 17 {
					return nil, errFormat("bad DHT")
				}
				tc, th := seg[0]>>4, int(seg[0]&15)
				if tc > 1 || th > 3 {
					return nil, errFormat("bad DHT")
				}
				var counts [16]byte
				copy(counts[:], seg[1:17])
				total := 0
				for _, c := range counts {
					total += int(c)
				}
				if len(seg) < 17+total {
					return nil, errFormat("bad DHT")
				}
				vals := append([]byte(nil), seg[17:17+total]...)
				t := &dc[th]
				if tc == 1 {
					t = &ac[th]
				}
				if err := t.build(counts, vals); err != nil {
					return nil, err
				}
				seg = seg[17+total:]
			}
		case 0xDD: // DRI
			if len(seg) != 2 {
				return nil, errFormat("bad DRI")
			}
			m.ri = int(binary.BigEndian.Uint16(seg))
		case 0xDA: // SOS
			if !sawFrame {
				return nil, errFormat("scan before frame")
			}
			if m.comps[0].blocks != nil {
				return nil, ErrUnsupported // several scans
			}
			used, err := m.scan(seg, data[pos:], &dc, &ac)
			if err != nil {
				return nil, err
			}
			pos += used
		default:
			// APPn, COM and others: skipped.
		}
	}
}

// maxPixels bounds the images Decode takes: screenshots are far smaller,
// and the coefficients of a larger one would take hundreds of megabytes.
const maxPixels = 1 << 25

func (m *Image) frame(seg []byte) error {
	if len(seg) < 6 {
		return errFormat("bad SOF")
	}
	if seg[0] != 8 {
		return ErrUnsupported
	}
	m.h = int(binary.BigEndian.Uint16(seg[1:]))
	m.w = int(binary.BigEndian.Uint16(seg[3:]))
	nc := int(seg[5])
	if m.w == 0 || m.h == 0 || m.w > 16384 || m.h > 16384 {
		return errFormat("bad size")
	}
	if m.w*m.h > maxPixels {
		return ErrUnsupported
	}
	if nc != 1 && nc != 3 {
		return ErrUnsupported
	}
	if len(seg) != 6+3*nc {
		return errFormat("bad SOF")
	}
	m.hmax, m.vmax = 1, 1
	for i := 0; i < nc; i++ {
		c := component{id: seg[6+3*i], h: int(seg[7+3*i] >> 4), v: int(seg[7+3*i] & 15), tq: int(seg[8+3*i])}
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.tq > 3 {
			return errFormat("bad component")
		}
		if nc == 1 {
			c.h, c.v = 1, 1 // a single component is never interleaved
		}
		m.hmax, m.vmax = max(m.hmax, c.h), max(m.vmax, c.v)
		m.comps = append(m.comps, c)
	}
	if nc == 3 {
		for _, c := range m.comps[1:] {
			if c.h != 1 || c.v != 1 {
				return ErrUnsupported
			}
		}
		if _, ok := ratio(m.comps[0].h, m.comps[0].v); !ok {
			return ErrUnsupported
		}
	}
	m.mcusX = (m.w + 8*m.hmax - 1) / (8 * m.hmax)
	m.mcusY = (m.h + 8*m.vmax - 1) / (8 * m.vmax)
	for i := range m.comps {
		c := &m.comps[i]
		c.bw, c.bh = m.mcusX*c.h, m.mcusY*c.v
	}
	return nil
}

func ratio(h, v int) (image.YCbCrSubsampleRatio, bool) {
	switch {
	case h == 1 && v == 1:
		return image.YCbCrSubsampleRatio444, true
	case h == 2 && v == 1:
		return image.YCbCrSubsampleRatio422, true
	case h == 2 && v == 2:
		return image.YCbCrSubsampleRatio420, true
	case h == 1 && v == 2:
		return image.YCbCrSubsampleRatio440, true
	case h == 4 && v == 1:
		return image.YCbCrSubsampleRatio411, true
	case h == 4 && v == 2:
		return image.YCbCrSubsampleRatio410, true
	}
	return 0, false
}

// scan reads the scan header and entropy-coded data; it returns how much
// of rest it consumed.
func (m *Image) scan(hdr, rest []byte, dc, ac *[4]huffDec) (int, error) {
	if len(hdr) < 1 {
		return 0, errFormat("bad SOS")
	}
	ns := int(hdr[0])
	if ns != len(m.comps) || len(hdr) != 4+2*ns {
		return 0, ErrUnsupported // a scan per component
	}
	for i := 0; i < ns; i++ {
		cs, t := hdr[1+2*i], hdr[2+2*i]
		c := &m.comps[i]
		if c.id != cs {
			return 0, ErrUnsupported
		}
		c.td, c.ta = int(t>>4), int(t&15)
		if c.td > 3 || c.ta > 3 {
			return 0, errFormat("bad table selector")
		}
		if !m.qSet[c.tq] {
			return 0, errFormat("missing quantization table")
		}
	}
	if ss, se, a := hdr[1+2*ns], hdr[2+2*ns], hdr[3+2*ns]; ss != 0 || se != 63 || a != 0 {
		return 0, ErrUnsupported
	}
	for i := range m.comps {
		c := &m.comps[i]
		c.blocks = make([]coefs, c.bw*c.bh)
	}
	total := m.mcusX * m.mcusY
	r := &bitReader{data: rest, out: make([]byte, 0, len(rest)+8)}
	spans := make([]uint32, 2*total)
	var pred [3]int32
	for mcu := 0; mcu < total; mcu++ {
		if m.ri > 0 && mcu > 0 && mcu%m.ri == 0 {
			if err := r.restart(); err != nil {
				return 0, err
			}
			pred = [3]int32{}
		}
		spans[2*mcu] = uint32(r.bitPos())
		mx, my := mcu%m.mcusX, mcu/m.mcusX
		for ci := range m.comps {
			c := &m.comps[ci]
			for j := 0; j < c.v; j++ {
				for i := 0; i < c.h; i++ {
					b := &c.blocks[(my*c.v+j)*c.bw+mx*c.h+i]
					if err := decodeBlock(r, b, &dc[c.td], &ac[c.ta], &pred[ci]); err != nil {
						return 0, err
					}
				}
			}
		}
		if r.marker != 0 && r.marker != 0xD9 && (r.marker < 0xD0 || r.marker > 0xD7) && mcu < total-1 {
			return 0, errFormat("data ends early")
		}
		if r.overrun() {
			return 0, errFormat("data ends early")
		}
		spans[2*mcu+1] = uint32(r.bitPos())
	}
	m.src = source{ecs: append(r.out, make([]byte, 8)...), spans: spans, ri: m.ri}
	// Bit positions are kept in 32 bits.
	m.src.ok = !r.odd && len(rest) < 1<<28
	for i := range m.comps {
		c := &m.comps[i]
		d, a := &dc[c.td], &ac[c.ta]
		m.src.ok = m.src.ok && d.writable(false) && a.writable(true)
		m.src.tabs[i] = [2]*huffmanSpec{{count: d.counts, value: d.vals}, {count: a.counts, value: a.vals}}
	}
	m.mod = make([]bool, total)
	// Skip to the marker that ends the scan.
	used := r.pos
	if r.marker == 0 {
		for used+1 < len(rest) && !(rest[used] == 0xFF && rest[used+1] != 0x00 && (rest[used+1] < 0xD0 || rest[used+1] > 0xD7)) {
			used++
		}
	}
	return used, nil
}

// writable reports whether the table can be written to the output for
// copied bits to be decoded with: no value twice (the encoder would code
// it one way only), only symbols a baseline encoder emits, and no code of
// all one bits.
func (h *huffDec) writable(isAC bool) bool {
	if h.allOnes {
		return false
	}
	var seen [256]bool
	for _, v := range h.vals {
		if seen[v] {
			return false
		}
		seen[v] = true
		if isAC {
			if s := v & 15; s > 10 || (s == 0 && v != 0x00 && v != 0xF0) {
				return false
			}
		} else if v > 11 {
			return false
		}
	}
	return true
}

// decodeBlock reads one block. It flags (r.odd) the codings the encoder
// never emits, which decode to the same coefficients but whose bits cannot
// stand for the encoder's: an end of block other than 0x00 (run/size r/0
// for r other than 0 and 15), and a run of 16 zeros (ZRL) not followed by
// a non-zero coefficient.
func decodeBlock(r *bitReader, b *coefs, dc, ac *huffDec, pred *int32) error {
	s, err := r.decode(dc)
	if err != nil {
		return err
	}
	if s > 11 {
		return errFormat("bad DC")
	}
	*pred += extend(r.bits(uint(s)), uint(s))
	if *pred < -2048 || *pred > 2047 {
		return errFormat("DC out of range")
	}
	b[0] = int16(*pred)
	zrlEnd := -1 // where the last ZRL took k
	k := 1
	for k < blockSize {
		if r.n < 16 {
			r.fill()
		}
		if e := ac.fast[r.acc>>(64-fastBits)]; e != 0 {
			// A short code and its extra bits, read at once.
			l := uint(e & 0xFF)
			r.acc <<= l
			r.n -= l
			k += int(e>>8) & 0xFF
			if k >= blockSize {
				return errFormat("AC past the block")
			}
			b[k] = int16(e >> 16)
			k++
			continue
		}
		rs, err := r.decode(ac)
		if err != nil {
			return err
		}
		run, size := int(rs>>4), uint(rs&15)
		if size == 0 {
			if run != 15 {
				// End of block.
				if run != 0 || k == zrlEnd {
					r.odd = true
				}
				return nil
			}
			k += 16
			zrlEnd = k
			continue
		}
		if size > 10 {
			return errFormat("bad AC")
		}
		k += run
		if k >= blockSize {
			return errFormat("AC past the block")
		}
		b[k] = int16(extend(r.bits(size), size))
		k++
	}
	if k == zrlEnd {
		r.odd = true
	}
	return nil
}

// mcuRect is the pixel area of MCU (mx, my).
func (m *Image) mcuRect(mx, my int) image.Rectangle {
	w, h := 8*m.hmax, 8*m.vmax
	return image.Rect(mx*w, my*h, (mx+1)*w, (my+1)*h)
}

// mcusCovering lists the MCUs that rects touch.
func (m *Image) mcusCovering(rects []image.Rectangle) []int {
	seen := map[int]bool{}
	var out []int
	w, h := 8*m.hmax, 8*m.vmax
	for _, r := range rects {
		r = r.Intersect(m.Bounds())
		if r.Empty() {
			continue
		}
		for my := r.Min.Y / h; my <= (r.Max.Y-1)/h; my++ {
			for mx := r.Min.X / w; mx <= (r.Max.X-1)/w; mx++ {
				k := my*m.mcusX + mx
				if !seen[k] {
					seen[k] = true
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// Pixels returns the image as pixels, with the MCUs that rects touch
// decoded; the rest of the image is left blank. Repeated calls decode more
// of it into the same image, which is m's own: drawn on in place, it is
// what Update reads. Grey JPEGs come back as YCbCr with neutral
// chroma... so that callers draw one way; Encode keeps them grey.
func (m *Image) Pixels(rects []image.Rectangle) *image.YCbCr {
	if m.pix == nil {
		sr := image.YCbCrSubsampleRatio444
		if len(m.comps) == 3 {
			sr, _ = ratio(m.comps[0].h, m.comps[0].v)
		}
		full := image.NewYCbCr(image.Rect(0, 0, m.mcusX*8*m.hmax, m.mcusY*8*m.vmax), sr)
		if len(m.comps) == 1 {
			for i := range full.Cb {
				full.Cb[i], full.Cr[i] = 128, 128
			}
		}
		full.Rect = m.Bounds()
		m.pix = full
		m.doneMC = make([]bool, m.mcusX*m.mcusY)
	}
	for _, k := range m.mcusCovering(rects) {
		if m.doneMC[k] {
			continue
		}
		m.doneMC[k] = true
		mx, my := k%m.mcusX, k/m.mcusX
		for ci := range m.comps {
			c := &m.comps[ci]
			plane, stride := m.plane(m.pix, ci)
			for j := 0; j < c.v; j++ {
				for i := 0; i < c.h; i++ {
					bx, by := mx*c.h+i, my*c.v+j
					m.idctBlock(&c.blocks[by*c.bw+bx], c.tq, plane[8*by*stride+8*bx:], stride)
				}
			}
		}
	}
	return m.pix
}

func (m *Image) plane(p *image.YCbCr, ci int) ([]byte, int) {
	switch ci {
	case 0:
		return p.Y, p.YStride
	case 1:
		return p.Cb, p.CStride
	default:
		return p.Cr, p.CStride
	}
}

func (m *Image) idctBlock(c *coefs, tq int, dst []byte, stride int) {
	var b block
	q := &m.quant[tq]
	for zig := 0; zig < blockSize; zig++ {
		b[unzig[zig]] = int32(c[zig]) * int32(q[zig])
	}
	idct(&b)
	for y := 0; y < 8; y++ {
		row := dst[y*stride : y*stride+8]
		for x := 0; x < 8; x++ {
			v := b[y*8+x]
			switch {
			case v < -128:
				row[x] = 0
			case v > 127:
				row[x] = 255
			default:
				row[x] = uint8(v + 128)
			}
		}
	}
}

// Update re-encodes the MCUs that rects touch from img, which must have the
// image's bounds and sampling: a copy of Pixels' image drawn on, or that
// image itself drawn on in place. The other MCUs keep their coefficients
// untouched. Within those MCUs a block the drawing left alone keeps its
// coefficients too: one whose pixels in the copy are still what Pixels
// decoded, or, drawn in place, one that no rectangle touches. Update notes
// the MCUs whose coefficients it changed, for Encode to copy the others.
func (m *Image) Update(img *image.YCbCr, rects []image.Rectangle) error {
	if img.Rect != m.Bounds() {
		return fmt.Errorf("jpegpatch: image is %v, want %v", img.Rect, m.Bounds())
	}
	if len(m.comps) == 3 {
		if sr, _ := ratio(m.comps[0].h, m.comps[0].v); img.SubsampleRatio != sr {
			return fmt.Errorf("jpegpatch: image sampling %v, want %v", img.SubsampleRatio, sr)
		}
	}
	// Drawn in place, the decoded pixels are gone: the rectangles say
	// which blocks the drawing may have changed.
	var touched [][]bool
	if img == m.pix {
		touched = m.blocksTouched(rects)
	}
	for _, k := range m.mcusCovering(rects) {
		mx, my := k%m.mcusX, k/m.mcusX
		decoded := m.pix != nil && m.doneMC[k]
		for ci := range m.comps {
			c := &m.comps[ci]
			for j := 0; j < c.v; j++ {
				for i := 0; i < c.h; i++ {
					bx, by := mx*c.h+i, my*c.v+j
					// A block the drawing left alone keeps its exact
					// coefficients.
					if touched != nil && !touched[ci][by*c.bw+bx] {
						continue
					}
					var b block
					m.readBlock(img, ci, bx, by, &b)
					if touched == nil && decoded && m.sameAsDecoded(ci, bx, by, &b) {
						continue
					}
					fdct(&b)
					q := &m.quant[c.tq]
					var nc coefs
					for zig := 0; zig < blockSize; zig++ {
						v := div(b[unzig[zig]], 8*int32(q[zig]))
						nc[zig] = int16(min(max(v, -2047), 2047))
					}
					// Encode copies the bits of the MCUs not marked here:
					// a block drawn on that quantizes back to the same
					// coefficients leaves its MCU's coding as it was.
					if out := &c.blocks[by*c.bw+bx]; *out != nc {
						*out = nc
						m.mod[k] = true
					}
				}
			}
		}
	}
	return nil
}

// blocksTouched marks, for each component, the blocks holding samples of
// the pixels that rects cover.
func (m *Image) blocksTouched(rects []image.Rectangle) [][]bool {
	out := make([][]bool, len(m.comps))
	for ci := range m.comps {
		c := &m.comps[ci]
		t := make([]bool, c.bw*c.bh)
		for _, r := range rects {
			r = r.Intersect(m.Bounds())
			if r.Empty() {
				continue
			}
			// Pixel x has sample x*h/hmax of the component.
			bx0, bx1 := r.Min.X*c.h/m.hmax/8, (r.Max.X-1)*c.h/m.hmax/8
			by0, by1 := r.Min.Y*c.v/m.vmax/8, (r.Max.Y-1)*c.v/m.vmax/8
			for by := by0; by <= by1; by++ {
				for bx := bx0; bx <= bx1; bx++ {
					t[by*c.bw+bx] = true
				}
			}
		}
		out[ci] = t
	}
	return out
}

// sameAsDecoded reports whether block b equals what Pixels decoded there.
func (m *Image) sameAsDecoded(ci, bx, by int, b *block) bool {
	plane, stride := m.plane(m.pix, ci)
	for y := 0; y < 8; y++ {
		row := plane[(8*by+y)*stride+8*bx:]
		for x := 0; x < 8; x++ {
			if int32(row[x]) != b[y*8+x] {
				return false
			}
		}
	}
	return true
}

// readBlock reads an 8x8 block of component ci at block (bx, by) from img,
// repeating edge samples past the image like image/jpeg's encoder.
func (m *Image) readBlock(img *image.YCbCr, ci, bx, by int, b *block) {
	plane, stride := m.plane(img, ci)
	// Sample-grid size of this plane.
	pw, ph := m.w, m.h
	if ci > 0 {
		pw = (m.w + m.hmax - 1) / m.hmax
		ph = (m.h + m.vmax - 1) / m.vmax
	}
	for y := 0; y < 8; y++ {
		sy := min(8*by+y, ph-1)
		for x := 0; x < 8; x++ {
			sx := min(8*bx+x, pw-1)
			b[y*8+x] = int32(plane[sy*stride+sx])
		}
	}
}

func div(a, b int32) int32 {
	if a >= 0 {
		return (a + (b >> 1)) / b
	}
	return -((-a + (b >> 1)) / b)
}
