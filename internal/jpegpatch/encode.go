package jpegpatch

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"runtime"
	"sync"
)

// Encode writes the image as a baseline JPEG with the same quantization
// tables.
//
// When it can, it writes the Huffman tables and restart interval of the
// scan Decode read and copies, bit for bit, the coding of every MCU that
// Update did not change and whose DC prediction is the same as in the
// source: only the MCUs drawn on, and the one after each run of them, are
// entropy-coded again. That is not possible when a block drawn on needs a
// code the source's tables lack (Chromium writes optimized tables, which
// hold only the codes its own image uses) or when the source's coding is
// not the one this encoder would produce; then every block is coded again,
// with the standard tables, in restart segments coded in parallel.
func (m *Image) Encode(w io.Writer) error {
	procs := runtime.GOMAXPROCS(0)
	out, ok := m.encode(m.src.ri, procs, true)
	if !ok {
		out = m.encodeFull(procs)
	}
	_, err := w.Write(out)
	return err
}

// encodeFull codes every block with the standard tables, in as many
// restart segments as there are procs (at most 4): the encoding Encode
// falls back to.
func (m *Image) encodeFull(procs int) []byte {
	out, _ := m.encode(m.fullRI(procs), procs, false)
	return out
}

// fullRI is the restart interval, in MCUs, that cuts the image into a
// segment of whole MCU rows per proc (at most 4), 0 for a single segment.
func (m *Image) fullRI(procs int) int {
	segs := min(max(procs, 1), 4, m.mcusY)
	rowsPer := (m.mcusY + segs - 1) / segs
	segs = (m.mcusY + rowsPer - 1) / rowsPer
	if segs == 1 || m.mcusX*rowsPer > 0xFFFF {
		return 0
	}
	return m.mcusX * rowsPer
}

// encode writes the JPEG with a restart interval of ri MCUs (0 for none),
// its restart segments coded by up to procs goroutines. With reuse, it
// writes the source's Huffman tables and copies the bits of the MCUs that
// allow it; it reports false when that cannot be done (the tables cannot
// be written back or lack a code a block needs). Without, it writes the
// standard tables and codes every block.
func (m *Image) encode(ri, procs int, reuse bool) ([]byte, bool) {
	var t tables
	if reuse {
		if !m.src.ok || !t.fromSource(m) {
			return nil, false
		}
	} else {
		t.standard(len(m.comps))
	}
	total := m.mcusX * m.mcusY
	nseg := 1
	if ri > 0 {
		nseg = (total + ri - 1) / ri
	}
	workers := min(max(procs, 1), nseg)
	size := m.outSize()
	hdr := m.header(make([]byte, 0, 1024), &t, ri)
	outs := make([][]byte, workers)
	oks := make([]bool, workers)
	work := func(wi int) {
		var bw *bitWriter
		if wi == 0 {
			// The others' segments are appended to the first's.
			bw = newBitWriter(hdr, size+1024)
		} else {
			bw = newBitWriter(nil, size/workers+1024)
		}
		first, last := wi*nseg/workers, (wi+1)*nseg/workers
		oks[wi] = true
		for i := first; i < last && oks[wi]; i++ {
			if i > first {
				bw.marker(i)
			}
			a, b := 0, total
			if ri > 0 {
				a, b = i*ri, min((i+1)*ri, total)
			}
			oks[wi] = m.codeInterval(bw, &t, a, b, reuse)
		}
		outs[wi] = bw.bytes()
	}
	if workers == 1 {
		work(0)
	} else {
		var wg sync.WaitGroup
		for wi := range workers {
			wg.Go(func() { work(wi) })
		}
		wg.Wait()
	}
	out := outs[0]
	for wi, o := range outs {
		if !oks[wi] {
			return nil, false
		}
		if wi > 0 {
			out = append(out, 0xFF, 0xD0+byte((wi*nseg/workers-1)%8))
			out = append(out, o...)
		}
	}
	return append(out, 0xFF, 0xD9), true
}

// outSize guesses the size of the entropy-coded data, so that the output
// is seldom moved to a larger buffer: the source's, with a margin for
// other tables, and more for the MCUs drawn on (a label takes several
// times the bytes of most of a screenshot).
func (m *Image) outSize() int {
	nmod := 0
	for _, d := range m.mod {
		if d {
			nmod++
		}
	}
	return len(m.src.ecs)*9/8 + 3*nmod*(len(m.src.ecs)/len(m.mod))
}

// header appends the markers before the entropy-coded data to b.
func (m *Image) header(b []byte, t *tables, ri int) []byte {
	b = append(b, 0xFF, 0xD8)
	// DQT: each table in use.
	for tq := 0; tq < 4; tq++ {
		used := false
		for _, c := range m.comps {
			used = used || c.tq == tq
		}
		if !used {
			continue
		}
		b = append(b, 0xFF, 0xDB, 0, 67, byte(tq))
		for _, v := range m.quant[tq] {
			b = append(b, byte(v))
		}
	}
	// SOF0.
	nc := len(m.comps)
	b = append(b, 0xFF, 0xC0, 0, byte(8+3*nc), 8, byte(m.h>>8), byte(m.h), byte(m.w>>8), byte(m.w), byte(nc))
	for _, c := range m.comps {
		b = append(b, c.id, byte(c.h<<4|c.v), byte(c.tq))
	}
	// DHT: table 0 of each class, then table 1.
	for id := 0; id < 2; id++ {
		for class := 0; class < 2; class++ {
			if id >= len(t.specs[class]) {
				continue
			}
			s := t.specs[class][id]
			n := 2 + 1 + 16 + len(s.value)
			b = append(b, 0xFF, 0xC4, byte(n>>8), byte(n), byte(class<<4|id))
			b = append(b, s.count[:]...)
			b = append(b, s.value...)
		}
	}
	if ri > 0 {
		b = append(b, 0xFF, 0xDD, 0, 4, byte(ri>>8), byte(ri))
	}
	// SOS.
	b = append(b, 0xFF, 0xDA, 0, byte(6+2*nc), byte(nc))
	for i, c := range m.comps {
		b = append(b, c.id, byte(t.sel[i][0]<<4|t.sel[i][1]))
	}
	return append(b, 0, 63, 0)
}

// tables are the output's Huffman tables: the ones written, by class (DC,
// AC) and id, and each component's.
type tables struct {
	specs [2][]*huffmanSpec
	sel   [3][2]int      // each component's table ids
	luts  [3][2]*huffLUT // each component's codes
	own   [2][2]huffLUT  // codes of the source's tables, by class and id
}

// standard sets the tables of the JPEG standard: luminance ones for the
// first component, chrominance ones for the others.
func (t *tables) standard(nc int) {
	l := stdLUTs()
	t.specs = [2][]*huffmanSpec{{&stdHuffman[0]}, {&stdHuffman[1]}}
	if nc == 3 {
		t.specs[0] = append(t.specs[0], &stdHuffman[2])
		t.specs[1] = append(t.specs[1], &stdHuffman[3])
	}
	for ci := 0; ci < nc; ci++ {
		id := min(ci, 1)
		t.sel[ci] = [2]int{id, id}
		t.luts[ci] = [2]*huffLUT{&l[2*id], &l[2*id+1]}
	}
}

// fromSource sets the tables the source scan used, so that the bits of
// its MCUs mean the same in the output. It reports false when they need
// more than the two tables per class a baseline JPEG may have.
func (t *tables) fromSource(m *Image) bool {
	for ci := range m.comps {
		for class := 0; class < 2; class++ {
			s := m.src.tabs[ci][class]
			id := 0
			for id < len(t.specs[class]) && !sameSpec(t.specs[class][id], s) {
				id++
			}
			if id == len(t.specs[class]) {
				if id == 2 {
					return false
				}
				t.specs[class] = append(t.specs[class], s)
				t.own[class][id] = buildLUT(s)
			}
			t.sel[ci][class] = id
			t.luts[ci][class] = &t.own[class][id]
		}
	}
	return true
}

func sameSpec(a, b *huffmanSpec) bool {
	return a.count == b.count && bytes.Equal(a.value, b.value)
}

// huffLUT maps a value to its code (low 24 bits) and length (high 8); 0
// for a value the table has no code for.
type huffLUT [256]uint32

func buildLUT(s *huffmanSpec) huffLUT {
	var l huffLUT
	code, k := uint32(0), 0
	for n := 0; n < 16; n++ {
		nBits := uint32(n+1) << 24
		for j := uint8(0); j < s.count[n]; j++ {
			l[s.value[k]] = nBits | code
			code++
			k++
		}
		code <<= 1
	}
	return l
}

var (
	lutCache [4]huffLUT
	lutOnce  sync.Once
)

func stdLUTs() *[4]huffLUT {
	lutOnce.Do(func() {
		for i := range stdHuffman {
			lutCache[i] = buildLUT(&stdHuffman[i])
		}
	})
	return &lutCache
}

// codeInterval writes MCUs [a, b), one restart interval of the output,
// and pads its last byte. With reuse it copies the MCUs that allow it and
// reports false as soon as a block needs a code its table lacks.
func (m *Image) codeInterval(bw *bitWriter, t *tables, a, b int, reuse bool) bool {
	spans := m.src.spans
	run := -1 // the first MCU of a run to copy, -1 if none
	for k := a; k < b; k++ {
		if reuse && m.copyable(k, k == a) {
			// A run stops where the source has a restart boundary: the
			// padding bits before it are not copied.
			if run >= 0 && spans[2*k] != spans[2*k-1] {
				bw.copyBits(m.src.ecs, uint64(spans[2*run]), uint64(spans[2*k-1]))
				run = -1
			}
			if run < 0 {
				run = k
			}
			continue
		}
		if run >= 0 {
			bw.copyBits(m.src.ecs, uint64(spans[2*run]), uint64(spans[2*k-1]))
			run = -1
		}
		if !m.codeMCU(bw, t, k, k == a) && reuse {
			return false
		}
	}
	if run >= 0 {
		bw.copyBits(m.src.ecs, uint64(spans[2*run]), uint64(spans[2*b-1]))
	}
	bw.pad()
	return true
}

// copyable reports whether MCU k's bits in the source are what coding it
// would write, outStart telling whether it starts a restart interval of
// the output. They are when Update did not change it and the DC values
// its blocks are predicted from are the same: those of the previous MCU,
// or 0 at the start of a restart interval, in the source and in the
// output. The previous MCU's DC values in the source are only known when
// it did not change.
func (m *Image) copyable(k int, outStart bool) bool {
	if m.mod[k] {
		return false
	}
	srcStart := k == 0 || (m.src.ri > 0 && k%m.src.ri == 0)
	switch {
	case srcStart && outStart:
		return true
	case !srcStart && !outStart:
		return !m.mod[k-1]
	case srcStart: // predicted from 0 in the source, from MCU k-1 here
		return m.lastDCsZero(k - 1)
	default: // the other way round
		return !m.mod[k-1] && m.lastDCsZero(k-1)
	}
}

// lastDCsZero reports whether, in MCU k, the last block of every
// component has a DC value of 0.
func (m *Image) lastDCsZero(k int) bool {
	for ci := range m.comps {
		if m.lastDC(ci, k) != 0 {
			return false
		}
	}
	return true
}

// lastDC is the DC value of component ci's last block in MCU k: what the
// next MCU's first block of ci is predicted from.
func (m *Image) lastDC(ci, k int) int32 {
	c := &m.comps[ci]
	mx, my := k%m.mcusX, k/m.mcusX
	return int32(c.blocks[(my*c.v+c.v-1)*c.bw+mx*c.h+c.h-1][0])
}

// codeMCU entropy-codes MCU k, start telling whether it starts a restart
// interval. It reports false if a block needed a code its table lacks.
func (m *Image) codeMCU(bw *bitWriter, t *tables, k int, start bool) bool {
	mx, my := k%m.mcusX, k/m.mcusX
	ok := true
	for ci := range m.comps {
		c := &m.comps[ci]
		var pred int32
		if !start {
			pred = m.lastDC(ci, k-1)
		}
		dc, ac := t.luts[ci][0], t.luts[ci][1]
		for j := 0; j < c.v; j++ {
			row := c.blocks[(my*c.v+j)*c.bw+mx*c.h:]
			for i := 0; i < c.h; i++ {
				var fine bool
				pred, fine = bw.block(&row[i], dc, ac, pred)
				ok = ok && fine
			}
		}
	}
	return ok
}

// bitWriter writes entropy-coded data, stuffing a zero byte after every
// 0xFF byte. What it wrote is buf[:pos]; the rest of buf is room, into
// which whole words are stored before their bytes are counted in. The
// bits not written yet are the low n bits of acc, fewer than 8 between
// calls.
type bitWriter struct {
	buf []byte
	pos int
	acc uint64
	n   uint
}

// newBitWriter starts writing after b, with room for about size bytes.
func newBitWriter(b []byte, size int) *bitWriter {
	w := &bitWriter{buf: b, pos: len(b)}
	w.room(size)
	return w
}

// bytes is what w wrote.
func (w *bitWriter) bytes() []byte { return w.buf[:w.pos] }

// room makes sure k bytes can be stored at pos.
func (w *bitWriter) room(k int) {
	if len(w.buf)-w.pos < k {
		b := make([]byte, 2*len(w.buf)+k)
		copy(b, w.buf[:w.pos])
		w.buf = b
	}
}

// put appends the low l bits of v, which has no bits set above them; l is
// at most 55.
func (w *bitWriter) put(v uint64, l uint) {
	w.room(16)
	w.acc = w.acc<<l | v
	w.pos, w.n = flush(w.buf, w.pos, w.acc, w.n+l)
}

// flush writes the whole bytes among the n pending bits of acc (at most
// 63) at buf[pos:], which has room for 16 bytes. It returns the new pos and
// how many bits are left pending. The bytes are stored as one word, with
// no test of how many there are, and only a word that holds a 0xFF byte
// takes the slow path.
func flush(buf []byte, pos int, acc uint64, n uint) (int, uint) {
	x := acc << (64 - n)
	binary.BigEndian.PutUint64(buf[pos:pos+8], x)
	k := n >> 3
	if hasFF(x >> (64 - 8*k)) {
		return stuff(buf, pos, x, k), n & 7
	}
	return pos + int(k), n & 7
}

// stuff writes the top k bytes of x at buf[pos:], a zero after each 0xFF.
func stuff(buf []byte, pos int, x uint64, k uint) int {
	for ; k > 0; k-- {
		b := byte(x >> 56)
		x <<= 8
		buf[pos] = b
		pos++
		if b == 0xFF {
			buf[pos] = 0
			pos++
		}
	}
	return pos
}

// pad ends a restart interval: the last byte is padded with one bits.
func (w *bitWriter) pad() {
	w.put(0x7F, 7)
	w.acc, w.n = 0, 0
}

// marker writes the RSTn marker that starts restart interval i.
func (w *bitWriter) marker(i int) {
	w.room(2)
	w.buf[w.pos], w.buf[w.pos+1] = 0xFF, 0xD0+byte((i-1)%8)
	w.pos += 2
}

// copyBits appends bits [from, to) of src, unstuffed entropy-coded data
// followed by at least 8 bytes of padding.
func (w *bitWriter) copyBits(src []byte, from, to uint64) {
	if to-from >= 64 && uint64(w.n) == from&7 {
		// Once the source's partial first byte is written, its bytes
		// fall on the output's: copy them whole, stuffing as needed.
		if head := (8 - from&7) & 7; head > 0 {
			w.put(uint64(src[from>>3])&(1<<head-1), uint(head))
			from += head
		}
		p := src[from>>3 : to>>3]
		for len(p) > 0 {
			i := bytes.IndexByte(p, 0xFF)
			c := p
			if i >= 0 {
				c = p[:i+1]
			}
			w.room(len(c) + 1)
			w.pos += copy(w.buf[w.pos:], c)
			if i >= 0 {
				w.buf[w.pos] = 0
				w.pos++
			}
			p = p[len(c):]
		}
		from = to &^ 7
	} else {
		// Otherwise shift 56 bits at a time into place behind the n
		// pending bits and write 7 bytes, keeping n bits pending.
		for to-from >= 56 {
			// A few kilobytes at a time, with room for them all
			// stuffed.
			end := min(to, from+56*1024)
			w.room(int(end-from)/4 + 16)
			buf, pos, n := w.buf, w.pos, w.n
			acc := w.acc & (1<<n - 1)
			for end-from >= 56 {
				v := binary.BigEndian.Uint64(src[from>>3:]) << (from & 7) >> 8
				o := (acc<<56 | v) << (8 - n)
				binary.BigEndian.PutUint64(buf[pos:pos+8], o)
				if hasFF(o >> 8) {
					pos = stuff(buf, pos, o, 7)
				} else {
					pos += 7
				}
				acc = v & (1<<n - 1)
				from += 56
			}
			w.pos, w.acc = pos, acc
		}
	}
	if r := to - from; r > 0 {
		w.put(binary.BigEndian.Uint64(src[from>>3:])<<(from&7)>>(64-r), uint(r))
	}
}

// block entropy-codes one block predicted from DC value prev; it returns
// its DC value and whether every code it needed was in the tables (a
// missing code is written as nothing, as it always was here). The writer's
// state is kept in local variables, in registers, and every symbol is
// written the same branch-free way: the branches of a simpler coder
// (coefficient signs, whether a byte is full) are taken at random and
// mispredicted half the time.
func (w *bitWriter) block(b *coefs, dc, ac *huffLUT, prev int32) (int32, bool) {
	// A block takes at most 64 codes of 32 bits, twice that with every
	// byte stuffed.
	w.room(600)
	buf, pos, acc, n := w.buf, w.pos, w.acc, w.n
	d := int32(b[0])
	s := magnitude(d - prev)
	x := dc[s]
	bad := (x - 1) >> 31 // 1 if x, a length and code, is 0: no code
	v, l := symbol(x, d-prev, s)
	nz := nonZero(b) &^ 1 // the AC coefficients to code
	last := 0
	for {
		// flush, by hand: the compiler does not inline it.
		acc = acc<<l | v
		n += l
		o := acc << (64 - n)
		binary.BigEndian.PutUint64(buf[pos:pos+8], o)
		if k := n >> 3; hasFF(o >> (64 - 8*k)) {
			pos = stuff(buf, pos, o, k)
		} else {
			pos += int(k)
		}
		n &= 7
		if nz == 0 {
			break
		}
		k := bits.TrailingZeros64(nz)
		nz &= nz - 1
		run := k - last - 1
		last = k
		if run > 15 {
			// At most three runs of 16 zeros, 48 bits, before a
			// coefficient.
			z := ac[0xF0]
			bad |= (z - 1) >> 31
			for ; run > 15; run -= 16 {
				acc = acc<<(z>>24) | uint64(z&(1<<24-1))
				n += uint(z >> 24)
			}
			pos, n = flush(buf, pos, acc, n)
		}
		c := int32(b[k])
		s := magnitude(c)
		x := ac[run<<4|s]
		bad |= (x - 1) >> 31
		v, l = symbol(x, c, s)
	}
	if last != blockSize-1 {
		z := ac[0x00]
		bad |= (z - 1) >> 31
		acc = acc<<(z>>24) | uint64(z&(1<<24-1))
		pos, n = flush(buf, pos, acc, n+uint(z>>24))
	}
	w.pos, w.acc, w.n = pos, acc, n
	return d, bad == 0
}

// nonZero returns a mask with bit k set when coefficient k is not zero:
// the coder visits those, not the zeros between them. It tests four
// coefficients at once: adding 0x7FFF to a 16-bit lane's low 15 bits
// carries into its top bit unless they are all zero, and the top bit
// itself is or-ed in; a multiplication then gathers the four top bits.
func nonZero(b *coefs) uint64 {
	var nz uint64
	for i := 0; i < blockSize; i += 4 {
		c := b[i : i+4 : i+4]
		x := uint64(uint16(c[0])) | uint64(uint16(c[1]))<<16 | uint64(uint16(c[2]))<<32 | uint64(uint16(c[3]))<<48
		y := (x&0x7FFF7FFF7FFF7FFF + 0x7FFF7FFF7FFF7FFF | x) & 0x8000800080008000
		nz |= (y >> 15) * (1<<48 | 1<<33 | 1<<18 | 1<<3) >> 48 << i
	}
	return nz
}

// magnitude is the number of bits v's size category says follow its code.
func magnitude(v int32) int {
	sign := v >> 31
	return bits.Len32(uint32((v ^ sign) - sign))
}

// symbol is the code x followed by the s magnitude bits of v: v itself
// if positive, v-1 if negative.
func symbol(x uint32, v int32, s int) (uint64, uint) {
	v += v >> 31
	return uint64(x&(1<<24-1))<<s | uint64(uint32(v))&(1<<s-1), uint(x>>24) + uint(s)
}
