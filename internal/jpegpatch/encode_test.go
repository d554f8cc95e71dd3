package jpegpatch

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/surfkit/surf/som"
)

// namedJPEG is a source image for the encoder tests.
type namedJPEG struct {
	name string
	data []byte
	// std tells that the source uses the standard Huffman tables, the
	// ones the full encoding writes.
	std bool
}

// encodeSources are JPEGs of every kind Encode copies from: Chromium's
// (optimized tables), image/jpeg's at several qualities and sizes (4:2:0
// and grey, no restart markers), and this package's own output for other
// samplings and restart intervals.
func encodeSources(t testing.TB, short bool) []namedJPEG {
	var out []namedJPEG
	for _, p := range screenshots {
		out = append(out, namedJPEG{name: p, data: load(t, p)})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, q := range []int{30, 75, 95} {
		sizes := []image.Point{{61, 37}}
		if q == 75 {
			sizes = append(sizes, image.Point{203, 77}, image.Point{16, 16}, image.Point{1, 1})
		}
		if short {
			sizes = sizes[:1]
		}
		for _, sz := range sizes {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, pageLike(rng, sz.X, sz.Y), &jpeg.Options{Quality: q}); err != nil {
				t.Fatal(err)
			}
			out = append(out, namedJPEG{name: fmt.Sprintf("go q%d %dx%d", q, sz.X, sz.Y), data: buf.Bytes(), std: true})
		}
	}
	g := image.NewGray(image.Rect(0, 0, 45, 29))
	for i := range g.Pix {
		g.Pix[i] = uint8(i*7 + rng.IntN(40))
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, g, &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	out = append(out, namedJPEG{name: "go grey", data: buf.Bytes(), std: true})
	for _, s := range []struct {
		w, h, hs, vs, nc, ri, dcStep int
		own                          bool
	}{
		{40, 24, 1, 1, 3, 0, 200, false},  // 4:4:4
		{40, 24, 1, 1, 3, 7, 200, false},  // restart interval not a whole row
		{53, 35, 2, 1, 3, 1, 200, false},  // 4:2:2, an interval per MCU
		{53, 35, 1, 2, 3, 4, 200, false},  // 4:4:0, intervals of a whole row
		{70, 18, 4, 1, 3, 3, 200, false},  // 4:1:1
		{33, 33, 2, 2, 3, 5, 200, false},  // 4:2:0
		{30, 50, 1, 1, 1, 6, 200, false},  // grey
		{100, 60, 2, 2, 3, 0, 200, false}, // larger
		// DC values all 0: MCUs at the source's restart boundaries are
		// predicted alike in an output without them, and copied in runs
		// across them.
		{37, 29, 1, 1, 3, 5, 0, false},
		{37, 29, 2, 2, 3, 3, 0, false},
		// Tables that hold only the symbols the image uses, like
		// Chromium's.
		{40, 24, 2, 2, 3, 0, 200, true},
		{29, 41, 1, 1, 3, 4, 50, true},
		{30, 50, 1, 1, 1, 0, 100, true},
	} {
		out = append(out, namedJPEG{
			name: fmt.Sprintf("synth %dx%d %dx%d nc%d ri%d dc%d own %v", s.w, s.h, s.hs, s.vs, s.nc, s.ri, s.dcStep, s.own),
			data: synth(t, s.w, s.h, s.hs, s.vs, s.nc, s.ri, s.dcStep, s.own, rng), std: !s.own,
		})
	}
	// A screenshot as the full encoding writes it: standard tables and
	// four restart segments.
	m, err := Decode(load(t, screenshots[1]))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, namedJPEG{name: "native re-encoded", data: m.encodeFull(4), std: true})
	return out
}

// pageLike draws something like a web page: flat areas, gradients, and
// sharp-edged specks like text.
func pageLike(rng *rand.Rand, w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := color.RGBA{240, 240, 245, 255}
			if y > h/3 {
				c = color.RGBA{uint8(x * 3), uint8(y * 2), 180, 255}
			}
			if rng.IntN(9) == 0 {
				c = color.RGBA{20, 20, uint8(rng.IntN(255)), 255}
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// synth writes a JPEG of the given size and sampling, with random
// coefficients (long zero runs, large values) and restart interval ri.
// DC values move by up to dcStep from block to block. It has the standard
// tables, or with ownTables tables of the symbols it uses only.
func synth(t testing.TB, w, h, hs, vs, nc, ri, dcStep int, ownTables bool, rng *rand.Rand) []byte {
	m := &Image{}
	sof := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(nc)}
	for i := 0; i < nc; i++ {
		hv, tq := byte(0x11), byte(min(i, 1))
		if i == 0 {
			hv = byte(hs<<4 | vs)
		}
		sof = append(sof, byte(i+1), hv, tq)
	}
	if err := m.frame(sof); err != nil {
		t.Fatal(err)
	}
	for i := range blockSize {
		m.quant[0][i] = uint16(1 + i/4)
		m.quant[1][i] = uint16(2 + i/3)
	}
	m.qSet = [4]bool{true, true}
	for ci := range m.comps {
		c := &m.comps[ci]
		c.blocks = make([]coefs, c.bw*c.bh)
		dc := int16(0)
		for bi := range c.blocks {
			dc = min(max(dc+int16(rng.IntN(2*dcStep+1)-dcStep), -1000), 1000)
			randomBlock(rng, &c.blocks[bi])
			c.blocks[bi][0] = dc
		}
	}
	m.mod = make([]bool, m.mcusX*m.mcusY)
	if !ownTables {
		out, _ := m.encode(ri, 1, false)
		return out
	}
	// Tables of the symbols the image uses and no others, like an
	// optimizing encoder's: written by coding every MCU with them as
	// the source's tables.
	used := usedSymbols(m, ri)
	var specs [2][2]huffmanSpec
	for ti := range specs {
		for class := range specs[ti] {
			sp := &specs[ti][class]
			for v := range 256 {
				if used[ti][class][v] {
					sp.value = append(sp.value, byte(v))
				}
			}
			// One length for all, long enough to leave the all-ones
			// code out.
			if n := len(sp.value); n > 0 {
				sp.count[bits.Len(uint(n))-1] = byte(n)
			}
		}
	}
	for ci := range m.comps {
		t := min(ci, 1)
		m.src.tabs[ci] = [2]*huffmanSpec{&specs[t][0], &specs[t][1]}
	}
	m.src.ok = true
	for k := range m.mod {
		m.mod[k] = true
	}
	out, ok := m.encode(ri, 1, true)
	if !ok {
		t.Fatal("coding with the image's own tables failed")
	}
	return out
}

// usedSymbols lists the DC and AC symbols that coding m with restart
// interval ri takes, for the first component's tables and the others'.
func usedSymbols(m *Image, ri int) (used [2][2][256]bool) {
	var pred [3]int32
	for k := 0; k < m.mcusX*m.mcusY; k++ {
		if ri > 0 && k%ri == 0 {
			pred = [3]int32{}
		}
		mx, my := k%m.mcusX, k/m.mcusX
		for ci := range m.comps {
			c, t := &m.comps[ci], min(ci, 1)
			for j := 0; j < c.v; j++ {
				for i := 0; i < c.h; i++ {
					b := &c.blocks[(my*c.v+j)*c.bw+mx*c.h+i]
					used[t][0][magnitude(int32(b[0])-pred[ci])] = true
					pred[ci] = int32(b[0])
					last := 0
					for z := 1; z < blockSize; z++ {
						if b[z] == 0 {
							continue
						}
						run := z - last - 1
						for ; run > 15; run -= 16 {
							used[t][1][0xF0] = true
						}
						used[t][1][run<<4|magnitude(int32(b[z]))] = true
						last = z
					}
					if last != blockSize-1 {
						used[t][1][0x00] = true
					}
				}
			}
		}
	}
	return used
}

// randomBlock fills b's AC coefficients with a random mix of zeros, small
// values, and now and then a large one.
func randomBlock(rng *rand.Rand, b *coefs) {
	density := []int{0, 2, 10, 40, 100}[rng.IntN(5)]
	for k := 1; k < blockSize; k++ {
		b[k] = 0
		if rng.IntN(100) < density {
			v := int16(1 + rng.IntN(3))
			if rng.IntN(20) == 0 {
				v = int16(1 + rng.IntN(1023))
			}
			if rng.IntN(2) == 0 {
				v = -v
			}
			b[k] = v
		}
	}
}

// The ways a test changes an MCU.
const (
	modShuffle = iota // AC coefficients of another block, DC kept: the codes are in the tables
	modRandom         // random AC coefficients, DC kept
	modDC             // DC moved a little
	modSame           // marked changed but left alone
	modKinds
)

// modify changes MCU k as Update would, and marks it.
func modify(m *Image, k, kind int, rng *rand.Rand) {
	mx, my := k%m.mcusX, k/m.mcusX
	for ci := range m.comps {
		c := &m.comps[ci]
		for j := 0; j < c.v; j++ {
			for i := 0; i < c.h; i++ {
				b := &c.blocks[(my*c.v+j)*c.bw+mx*c.h+i]
				switch kind {
				case modShuffle:
					o := &c.blocks[rng.IntN(len(c.blocks))]
					copy(b[1:], o[1:])
				case modRandom:
					randomBlock(rng, b)
				case modDC:
					b[0] = min(max(b[0]+int16(rng.IntN(7)-3), -1000), 1000)
				}
			}
		}
	}
	m.mod[k] = true
}

// pattern is a set of MCUs to change.
type pattern struct {
	name string
	ks   []int
}

// patterns are sets of MCUs to change, in an image of total MCUs whose
// interesting boundaries (restart intervals, rows) are at bounds.
func patterns(rng *rand.Rand, total int, bounds []int) []pattern {
	all := make([]int, total)
	for k := range all {
		all[k] = k
	}
	var sparse, dense, runs, edges []int
	for k := 0; k < total; k++ {
		if rng.IntN(50) == 0 {
			sparse = append(sparse, k)
		}
		if rng.IntN(3) == 0 {
			dense = append(dense, k)
		}
	}
	for range 4 {
		a := rng.IntN(total)
		for k := a; k < min(a+1+rng.IntN(10), total); k++ {
			runs = append(runs, k)
		}
	}
	for _, b := range bounds {
		for _, k := range []int{b - 1, b} {
			if k >= 0 && k < total {
				edges = append(edges, k)
			}
		}
	}
	return []pattern{
		{"none", nil}, {"all", all}, {"first", []int{0}}, {"last", []int{total - 1}},
		{"sparse", sparse}, {"dense", dense}, {"runs", runs}, {"edges", edges},
	}
}

// boundaries are the MCUs where restart intervals start, in the source or
// in the output of the full encoding, and where rows start.
func boundaries(m *Image) []int {
	var b []int
	total := m.mcusX * m.mcusY
	for _, ri := range []int{m.src.ri, m.fullRI(2), m.fullRI(3), m.fullRI(4), m.mcusX} {
		for k := ri; ri > 0 && k < total; k += ri {
			b = append(b, k)
		}
	}
	return b
}

func sameCoefs(a, b *Image) bool {
	if len(a.comps) != len(b.comps) || a.Bounds() != b.Bounds() {
		return false
	}
	for ci := range a.comps {
		x, y := a.comps[ci].blocks, b.comps[ci].blocks
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
	}
	return true
}

// samePix compares what image/jpeg decodes from a and b.
func samePix(t *testing.T, a, b []byte) bool {
	t.Helper()
	x, err := jpeg.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatalf("image/jpeg: %v", err)
	}
	y, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("image/jpeg: %v", err)
	}
	switch x := x.(type) {
	case *image.YCbCr:
		y, ok := y.(*image.YCbCr)
		return ok && x.Rect == y.Rect && bytes.Equal(x.Y, y.Y) && bytes.Equal(x.Cb, y.Cb) && bytes.Equal(x.Cr, y.Cr)
	case *image.Gray:
		y, ok := y.(*image.Gray)
		return ok && x.Rect == y.Rect && bytes.Equal(x.Pix, y.Pix)
	}
	t.Fatalf("image/jpeg gave a %T", x)
	return false
}

// recodeAll is encode with reuse but every MCU entropy-coded: what the
// copying must reproduce bit for bit.
func recodeAll(m *Image, ri, procs int) ([]byte, bool) {
	saved := m.mod
	m.mod = make([]bool, len(saved))
	for k := range m.mod {
		m.mod[k] = true
	}
	defer func() { m.mod = saved }()
	return m.encode(ri, procs, true)
}

// checkEncode checks, for several numbers of procs, that the full
// encoding is the original one byte for byte, and that the copying one,
// when it works, decodes to the same coefficients (and with pixels, to the
// same pixels with image/jpeg) and is byte for byte what coding every MCU
// would write. mustCopy says the copying encoding has to work with the
// source's restart interval.
func checkEncode(t *testing.T, name string, m *Image, std, mustCopy, pixels bool, procsList []int) {
	t.Helper()
	for _, procs := range procsList {
		full := m.encodeFull(procs)
		if ref := refEncode(m, procs); !bytes.Equal(full, ref) {
			t.Fatalf("%s procs %d: the full encoding differs from the original encoder's", name, procs)
		}
		back, err := Decode(full)
		if err != nil {
			t.Fatalf("%s procs %d: decoding the full encoding: %v", name, procs, err)
		}
		if !sameCoefs(back, m) {
			t.Fatalf("%s procs %d: the full encoding does not hold the coefficients", name, procs)
		}
		for _, ri := range []int{m.src.ri, m.fullRI(procs)} {
			fast, ok := m.encode(ri, procs, true)
			if !ok {
				if (mustCopy && ri == m.src.ri) || std {
					t.Fatalf("%s procs %d ri %d: no copying encoding", name, procs, ri)
				}
				continue
			}
			got, err := Decode(fast)
			if err != nil {
				t.Fatalf("%s procs %d ri %d: decoding the copying encoding: %v", name, procs, ri, err)
			}
			if !sameCoefs(got, m) {
				t.Fatalf("%s procs %d ri %d: the copying encoding decodes to other coefficients", name, procs, ri)
			}
			// image/jpeg reads the copying encoding as it reads the
			// full one (checked once at most: decoding with it is slow).
			if pixels && procs == procsList[0] && !samePix(t, fast, full) {
				t.Fatalf("%s procs %d ri %d: image/jpeg decodes other pixels from the copying encoding", name, procs, ri)
			}
			// The MCUs copied have the source's DC predictions, so
			// coding them takes codes the source's tables have.
			all, ok := recodeAll(m, ri, procs)
			if !ok {
				t.Fatalf("%s procs %d ri %d: coding every MCU with the source's tables failed", name, procs, ri)
			}
			if !bytes.Equal(fast, all) {
				t.Fatalf("%s procs %d ri %d: copying wrote other bits than coding", name, procs, ri)
			}
			if std && ri == m.fullRI(procs) && !bytes.Equal(fast, full) {
				t.Fatalf("%s procs %d: the copying encoding differs from the full one", name, procs)
			}
		}
	}
	var out bytes.Buffer
	if err := m.Encode(&out); err != nil {
		t.Fatal(err)
	}
	if got, err := Decode(out.Bytes()); err != nil || !sameCoefs(got, m) {
		t.Fatalf("%s: Encode's output decodes to other coefficients (%v)", name, err)
	}
}

// TestEncodeCopiesExactly changes sets of MCUs in every kind of source
// and checks Encode's copying against coding every block.
func TestEncodeCopiesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, src := range encodeSources(t, testing.Short()) {
		m0, err := Decode(src.data)
		if err != nil {
			t.Fatalf("%s: %v", src.name, err)
		}
		if !m0.src.ok {
			t.Fatalf("%s: Decode found the source cannot be copied from", src.name)
		}
		big := m0.mcusX*m0.mcusY > 1000
		// The full encoding in one segment and in three; with 4 procs,
		// in four (checkEncode also tries the source's intervals).
		procsList := []int{1, 3}
		if big {
			procsList = []int{4}
		}
		for _, pat := range patterns(rng, m0.mcusX*m0.mcusY, boundaries(m0)) {
			pname, ks := pat.name, pat.ks
			for kind := 0; kind < modKinds; kind++ {
				// Large images are slow to check: a few patterns with
				// one kind of change, and a random change in a few
				// places.
				if big && (kind != modShuffle && !(kind == modRandom && pname == "sparse") ||
					pname == "dense" || pname == "first" || pname == "last") {
					continue
				}
				m, _ := Decode(src.data)
				for _, k := range ks {
					modify(m, k, kind, rng)
				}
				// Kept DC values and codes the source has: copying
				// always works.
				mustCopy := kind == modShuffle || kind == modSame || len(ks) == 0
				pixels := !big || pname == "sparse"
				checkEncode(t, fmt.Sprintf("%s, %s, kind %d", src.name, pname, kind), m, src.std, mustCopy, pixels, procsList)
			}
		}
	}
}

// TestEncodeUnchangedCopiesScan: with nothing drawn, the output's
// entropy-coded data is the source's, byte for byte.
func TestEncodeUnchangedCopiesScan(t *testing.T) {
	for _, p := range screenshots {
		src := load(t, p)
		m, err := Decode(src)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		a, b := scanData(t, src), scanData(t, out.Bytes())
		if !bytes.Equal(a, b) {
			t.Errorf("%s: the scan data changed (%d bytes, was %d)", p, len(b), len(a))
		}
	}
}

// scanData is the entropy-coded data of a single-scan JPEG.
func scanData(t *testing.T, b []byte) []byte {
	t.Helper()
	for pos := 2; pos+4 <= len(b); {
		n := int(binary.BigEndian.Uint16(b[pos+2:]))
		if b[pos+1] == 0xDA {
			return b[pos+2+n : len(b)-2]
		}
		pos += 2 + n
	}
	t.Fatal("no SOS")
	return nil
}

// TestUpdateMarksChanges: Update marks the MCUs whose coefficients it
// changed, and only those, and what Encode then writes holds them all.
func TestUpdateMarksChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, src := range encodeSources(t, true) {
		m, err := Decode(src.data)
		if err != nil {
			t.Fatal(err)
		}
		orig, _ := Decode(src.data)
		b := m.Bounds()
		var rects []image.Rectangle
		for range 12 {
			x, y := rng.IntN(b.Dx()), rng.IntN(b.Dy())
			rects = append(rects, image.Rect(x, y, x+1+rng.IntN(40), y+1+rng.IntN(20)))
		}
		// Update compares with Pixels' image: draw on a copy, as
		// som.Render does.
		dec := m.Pixels(rects)
		px := &image.YCbCr{
			Y: bytes.Clone(dec.Y), Cb: bytes.Clone(dec.Cb), Cr: bytes.Clone(dec.Cr),
			YStride: dec.YStride, CStride: dec.CStride, SubsampleRatio: dec.SubsampleRatio, Rect: dec.Rect,
		}
		// Draw on some rectangles only: the others are decoded and
		// re-encoded unchanged.
		for i, r := range rects {
			if i%3 == 0 {
				continue
			}
			r = r.Intersect(b)
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					px.Y[px.YOffset(x, y)] = uint8(rng.IntN(256))
					px.Cr[px.COffset(x, y)] = 200
				}
			}
		}
		if err := m.Update(px, rects); err != nil {
			t.Fatal(err)
		}
		changed := 0
		for k := range m.mod {
			mx, my := k%m.mcusX, k/m.mcusX
			diff := false
			for ci := range m.comps {
				c := &m.comps[ci]
				for j := 0; j < c.v; j++ {
					for i := 0; i < c.h; i++ {
						bi := (my*c.v+j)*c.bw + mx*c.h + i
						diff = diff || c.blocks[bi] != orig.comps[ci].blocks[bi]
					}
				}
			}
			if diff != m.mod[k] {
				t.Fatalf("%s: MCU %d changed %v, marked %v", src.name, k, diff, m.mod[k])
			}
			if diff {
				changed++
			}
		}
		if changed == 0 {
			t.Fatalf("%s: the drawing changed nothing", src.name)
		}
		checkEncode(t, src.name+" drawn", m, src.std, false, true, []int{1, 2})
	}
}

// TestEncodeAfterMarks draws set-of-mark labels on the screenshots and
// checks Encode's output against the full encoding.
func TestEncodeAfterMarks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, p := range screenshots {
		for _, std := range []bool{false, true} {
			src := load(t, p)
			if std {
				// The same screenshot with the standard tables: the
				// copying encoding works after drawing.
				img := decodeStd(t, src)
				var buf bytes.Buffer
				if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
					t.Fatal(err)
				}
				src = buf.Bytes()
			}
			m, err := Decode(src)
			if err != nil {
				t.Fatal(err)
			}
			var marks []som.Mark
			for i := range 40 {
				marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 20 + rng.Float64()*100, H: 12 + rng.Float64()*20}})
			}
			labels := som.Layout(m.Bounds(), marks, som.Options{})
			fp := som.Footprint(m.Bounds(), labels, som.Options{})
			drawn := som.Render(m.Pixels(fp), labels, som.Options{}).(*image.YCbCr)
			if err := m.Update(drawn, fp); err != nil {
				t.Fatal(err)
			}
			checkEncode(t, fmt.Sprintf("%s std %v", p, std), m, std, std, true, []int{1, 4})
		}
	}
}

// TestCopyBits checks copying bits at every alignment, with 0xFF bytes to
// stuff, against writing them one at a time.
func TestCopyBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for i := 0; i < 3000; i++ {
		src := make([]byte, 1+rng.IntN(40))
		for j := range src {
			src[j] = byte(rng.IntN(256))
			if rng.IntN(3) == 0 {
				src[j] = 0xFF
			}
		}
		padded := append(append([]byte(nil), src...), make([]byte, 8)...)
		from := uint64(rng.IntN(8 * len(src)))
		to := from + uint64(rng.IntN(8*len(src)-int(from)+1))
		lead := uint(rng.IntN(40))
		leadBits := rng.Uint64() & (1<<lead - 1)

		got, want := newBitWriter(nil, 0), newBitWriter(nil, 0)
		for _, w := range []*bitWriter{got, want} {
			w.put(leadBits>>(lead/2), lead-lead/2)
			w.put(leadBits&(1<<(lead/2)-1), lead/2)
		}
		got.copyBits(padded, from, to)
		for p := from; p < to; p++ {
			want.put(uint64(src[p/8]>>(7-p%8)&1), 1)
		}
		got.pad()
		want.pad()
		if !bytes.Equal(got.bytes(), want.bytes()) {
			t.Fatalf("copying bits [%d, %d) after %d bits: got % x, want % x", from, to, lead, got.bytes(), want.bytes())
		}
	}
}

// TestBlockCoderMatchesOriginal codes random blocks, and blocks with
// codes missing from the tables, with the block coder and the original
// one.
func TestBlockCoderMatchesOriginal(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	luts := stdLUTs()
	// Tables with codes missing: the coder writes no code for them, as
	// the original did.
	m, err := Decode(load(t, screenshots[0]))
	if err != nil {
		t.Fatal(err)
	}
	own := [2]huffLUT{buildLUT(m.src.tabs[0][0]), buildLUT(m.src.tabs[0][1])}
	for i := 0; i < 20000; i++ {
		var b coefs
		randomBlock(rng, &b)
		switch rng.IntN(6) {
		case 0:
			b = coefs{}
		case 1:
			b[blockSize-1] = int16(rng.IntN(5) - 2)
		case 2:
			for k := range b {
				b[k] = int16(rng.IntN(4095) - 2047)
			}
		}
		b[0] = int16(rng.IntN(4095) - 2047)
		prev := int32(rng.IntN(4095) - 2047)
		dc, ac := &luts[0], &luts[1]
		if i%2 == 1 {
			dc, ac = &own[0], &own[1]
		}
		w := newBitWriter(nil, 0)
		d, ok := w.block(&b, dc, ac, prev)
		w.pad()
		r := &refEncoder{}
		rd := r.block(&b, dc, ac, prev)
		r.emit(0x7F, 7)
		if !bytes.Equal(w.bytes(), r.out) || d != rd {
			t.Fatalf("block %v from %d: got % x, want % x", b, prev, w.bytes(), r.out)
		}
		if dc == &luts[0] && ok != (magnitude(int32(b[0])-prev) <= 11 && maxAbsAC(&b) <= 1023) {
			t.Fatalf("block %v from %d: all codes present %v", b, prev, ok)
		}
	}
}

func maxAbsAC(b *coefs) int {
	v := 0
	for _, c := range b[1:] {
		v = max(v, abs(int(c)))
	}
	return v
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// TestOddCodingIsNotCopied: a scan coded in a way the encoder never codes
// (a ZRL with nothing after it) decodes, is not copied from, and Encode
// writes it so that it decodes to the same coefficients.
func TestOddCodingIsNotCopied(t *testing.T) {
	luts := stdLUTs()
	code := func(w *bitWriter, l *huffLUT, v byte) {
		x := l[v]
		w.put(uint64(x&(1<<24-1)), uint(x>>24))
	}
	for name, ac := range map[string][]byte{
		"ZRL then EOB":    {0xF0, 0x00},
		"ZRLs to the end": {0xF0, 0xF0, 0xF0, 0xF0},
		"plain":           {0x01, 0x00},
	} {
		m := &Image{}
		if err := m.frame([]byte{8, 0, 8, 0, 8, 1, 1, 0x11, 0}); err != nil {
			t.Fatal(err)
		}
		for i := range m.quant[0] {
			m.quant[0][i] = 1
		}
		var tb tables
		tb.standard(1)
		w := newBitWriter(m.header(nil, &tb, 0), 0)
		code(w, &luts[0], 0) // DC difference 0
		for _, v := range ac {
			code(w, &luts[1], v)
			if v&15 != 0 {
				w.put(1, 1)
			}
		}
		w.pad()
		src := append(w.bytes(), 0xFF, 0xD9)
		got, err := Decode(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if odd := name != "plain"; got.src.ok == odd {
			t.Fatalf("%s: copying allowed: %v", name, got.src.ok)
		}
		var out bytes.Buffer
		if err := got.Encode(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(out.Bytes())
		if err != nil || !sameCoefs(back, got) {
			t.Fatalf("%s: Encode's output decodes to other coefficients (%v)", name, err)
		}
		if _, err := jpeg.Decode(bytes.NewReader(out.Bytes())); err != nil {
			t.Fatalf("%s: image/jpeg: %v", name, err)
		}
	}
}

// TestWritableTables: only tables whose codes mean the same to every
// decoder are written back.
func TestWritableTables(t *testing.T) {
	for i, s := range stdHuffman {
		var h huffDec
		if err := h.build(s.count, s.value); err != nil {
			t.Fatal(err)
		}
		if !h.writable(i%2 == 1) {
			t.Errorf("standard table %d not writable", i)
		}
	}
	for name, c := range map[string]struct {
		ac     bool
		counts [16]byte
		vals   []byte
	}{
		"twice":      {false, [16]byte{0, 3}, []byte{1, 2, 1}},
		"all ones":   {false, [16]byte{2}, []byte{0, 1}},
		"DC 12":      {false, [16]byte{0, 2}, []byte{0, 12}},
		"AC size 11": {true, [16]byte{0, 2}, []byte{0x00, 0x0B}},
		"AC 3/0":     {true, [16]byte{0, 2}, []byte{0x00, 0x30}},
	} {
		var h huffDec
		if err := h.build(c.counts, c.vals); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.writable(c.ac) {
			t.Errorf("%s: writable", name)
		}
	}
}

// FuzzEncodeCopy changes the MCUs the fuzzer picks, in the way it picks,
// in one of a few sources, and checks Encode's copying.
func FuzzEncodeCopy(f *testing.F) {
	rng := rand.New(rand.NewPCG(19, 20))
	type source struct {
		data []byte
		std  bool
	}
	sources := []source{
		{synth(f, 40, 24, 1, 1, 3, 7, 200, false, rng), true},
		{synth(f, 53, 35, 2, 2, 3, 0, 200, false, rng), true},
		{synth(f, 30, 50, 1, 1, 1, 6, 200, false, rng), true},
		{synth(f, 37, 29, 1, 1, 3, 5, 0, false, rng), true},
		{synth(f, 44, 36, 2, 2, 3, 0, 100, true, rng), false},
		{synth(f, 29, 41, 1, 1, 3, 4, 50, true, rng), false},
		{load(f, screenshots[1]), false}, // slow to check: picked by 255 only
	}
	f.Add(uint8(0), uint64(1), []byte{0, 1, 2, 3})
	f.Add(uint8(4), uint64(2), []byte{6, 6, 6, 0, 0, 0})
	f.Add(uint8(5), uint64(3), []byte{200, 1, 255, 7})
	f.Add(uint8(255), uint64(4), []byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, which uint8, seed uint64, picks []byte) {
		src := sources[int(which)%(len(sources)-1)]
		if which == 255 {
			src = sources[len(sources)-1]
		}
		m, err := Decode(src.data)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		total := m.mcusX * m.mcusY
		// Each byte steps forward (its low 5 bits, times a stride that
		// spreads the picks over the image) and picks a kind of change.
		stride := max(1, total/(16*max(len(picks), 1)))
		k := 0
		for _, p := range picks {
			k += int(p&31) * stride
			if k >= total {
				break
			}
			modify(m, k, int(p>>5)%modKinds, rng)
		}
		checkEncode(t, "fuzz", m, src.std, false, true, []int{1, 3})
	})
}

// BenchmarkEncode times Encode after a typical set-of-mark drawing (40
// marks) and with nothing drawn, on a Chromium screenshot (optimized
// tables) and on the same image written by image/jpeg (standard tables).
func BenchmarkEncode(b *testing.B) {
	chromium := load(b, screenshots[0])
	img, err := jpeg.Decode(bytes.NewReader(chromium))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
		b.Fatal(err)
	}
	for _, src := range []struct {
		name string
		data []byte
	}{{"chromium", chromium}, {"std", buf.Bytes()}} {
		for _, n := range []int{0, 40} {
			m, err := Decode(src.data)
			if err != nil {
				b.Fatal(err)
			}
			if n > 0 {
				rng := rand.New(rand.NewPCG(5, 6))
				var marks []som.Mark
				for i := range n {
					marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 20 + rng.Float64()*100, H: 12 + rng.Float64()*20}})
				}
				labels := som.Layout(m.Bounds(), marks, som.Options{})
				fp := som.Footprint(m.Bounds(), labels, som.Options{})
				drawn := som.Render(m.Pixels(fp), labels, som.Options{}).(*image.YCbCr)
				if err := m.Update(drawn, fp); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(fmt.Sprintf("%s/marks=%d", src.name, n), func(b *testing.B) {
				var out bytes.Buffer
				for b.Loop() {
					out.Reset()
					if err := m.Encode(&out); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(out.Len()))
			})
		}
	}
}

// BenchmarkDecode times Decode of a Chromium screenshot.
func BenchmarkDecode(b *testing.B) {
	src := load(b, screenshots[0])
	for b.Loop() {
		if _, err := Decode(src); err != nil {
			b.Fatal(err)
		}
	}
}
