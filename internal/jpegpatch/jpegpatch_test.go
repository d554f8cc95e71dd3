package jpegpatch

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/surfkit/surf/som"
)

// screenshots are JPEGs as Chromium writes them (baseline, 4:2:0,
// optimized Huffman tables).
var screenshots = []string{"testdata/dense.jpg", "testdata/native.jpg"}

func load(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func decodeStd(t testing.TB, b []byte) *image.YCbCr {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	y, ok := img.(*image.YCbCr)
	if !ok {
		t.Fatalf("image/jpeg gave a %T", img)
	}
	return y
}

func samePixels(a, b *image.YCbCr, r image.Rectangle) (int, image.Point) {
	diff := 0
	var first image.Point
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if a.YCbCrAt(x, y) != b.YCbCrAt(x, y) {
				if diff == 0 {
					first = image.Pt(x, y)
				}
				diff++
			}
		}
	}
	return diff, first
}

// TestRoundTripIsLossless: coefficients read and written back unchanged
// decode to exactly the original pixels.
func TestRoundTripIsLossless(t *testing.T) {
	for _, p := range screenshots {
		src := load(t, p)
		m, err := Decode(src)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		a, b := decodeStd(t, src), decodeStd(t, out.Bytes())
		if a.Rect != b.Rect {
			t.Fatalf("%s: size %v became %v", p, a.Rect, b.Rect)
		}
		if n, at := samePixels(a, b, a.Rect); n != 0 {
			t.Errorf("%s: %d pixels differ after a lossless round trip, first at %v", p, n, at)
		}
	}
}

// TestPixelsMatchImageJPEG: the blocks Pixels decodes are what image/jpeg
// decodes.
func TestPixelsMatchImageJPEG(t *testing.T) {
	for _, p := range screenshots {
		src := load(t, p)
		m, err := Decode(src)
		if err != nil {
			t.Fatal(err)
		}
		all := m.Pixels([]image.Rectangle{m.Bounds()})
		if n, at := samePixels(all, decodeStd(t, src), m.Bounds()); n != 0 {
			t.Errorf("%s: %d pixels differ from image/jpeg, first at %v", p, n, at)
		}
	}
}

// TestPatchEqualsFullPipeline draws marks by patching and by decoding,
// drawing and encoding the whole image: inside the footprint the two agree
// within JPEG tolerance; outside it the patched image keeps the original
// pixels exactly. The marks are drawn on a copy of Pixels' image and, as
// surf does, on that image in place.
func TestPatchEqualsFullPipeline(t *testing.T) {
	for _, inPlace := range []bool{false, true} {
		t.Run(map[bool]string{false: "copy", true: "in place"}[inPlace], func(t *testing.T) {
			testPatchEqualsFullPipeline(t, inPlace)
		})
	}
}

func testPatchEqualsFullPipeline(t *testing.T, inPlace bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range screenshots {
		src := load(t, p)
		m, err := Decode(src)
		if err != nil {
			t.Fatal(err)
		}
		bounds := m.Bounds()
		var marks []som.Mark
		for i := 0; i < 120; i++ {
			marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 10 + rng.Float64()*150, H: 10 + rng.Float64()*40}, Covered: i%7 == 0})
		}
		labels := som.Layout(bounds, marks, som.Options{})
		fp := som.Footprint(bounds, labels, som.Options{})
		var drawn *image.YCbCr
		if inPlace {
			drawn = m.Pixels(fp)
			if !som.RenderInPlace(drawn, labels, som.Options{}) {
				t.Fatal("RenderInPlace refused Pixels' image")
			}
		} else {
			drawn = som.Render(m.Pixels(fp), labels, som.Options{}).(*image.YCbCr)
		}
		if err := m.Update(drawn, fp); err != nil {
			t.Fatal(err)
		}
		if inPlace {
			untouchedBlocksKept(t, p, src, m, fp)
		}
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		got := decodeStd(t, out.Bytes())
		orig := decodeStd(t, src)
		want := som.Render(orig, labels, som.Options{}).(*image.YCbCr)

		touched := make([]bool, bounds.Dx()*bounds.Dy())
		for _, k := range m.mcusCovering(fp) {
			r := m.mcuRect(k%m.mcusX, k/m.mcusX).Intersect(bounds)
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					touched[y*bounds.Dx()+x] = true
				}
			}
		}
		var outside, bad int
		for y := 0; y < bounds.Dy(); y++ {
			for x := 0; x < bounds.Dx(); x++ {
				g := got.YCbCrAt(x, y)
				if !touched[y*bounds.Dx()+x] {
					if g != orig.YCbCrAt(x, y) {
						outside++
					}
					continue
				}
				w := want.YCbCrAt(x, y)
				if absDiff(g.Y, w.Y) > 40 || absDiff(g.Cb, w.Cb) > 40 || absDiff(g.Cr, w.Cr) > 40 {
					bad++
				}
			}
		}
		if outside != 0 {
			t.Errorf("%s: %d pixels outside the patched blocks changed", p, outside)
		}
		// Re-quantizing a drawn block loses some precision, like any JPEG
		// encode of the drawing; far-off pixels would mean a wrong block.
		if share := float64(bad) / float64(len(touched)); share > 0.002 {
			t.Errorf("%s: %.3f%% of pixels differ much from the full pipeline", p, 100*share)
		}
	}
}

// untouchedBlocksKept checks that m, patched in place within rects, kept
// the coefficients of every block none of whose pixels a rectangle covers.
func untouchedBlocksKept(t *testing.T, name string, src []byte, m *Image, rects []image.Rectangle) {
	t.Helper()
	orig, err := Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	b := m.Bounds()
	covered := make([]bool, b.Dx()*b.Dy())
	for _, r := range rects {
		r = r.Intersect(b)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				covered[y*b.Dx()+x] = true
			}
		}
	}
	kept, redone := 0, 0
	for ci := range m.comps {
		c := &m.comps[ci]
		// a block of this component spans pw x ph pixels
		pw, ph := 8*m.hmax/c.h, 8*m.vmax/c.v
		for by := 0; by < c.bh; by++ {
			for bx := 0; bx < c.bw; bx++ {
				hit := false
				for y := by * ph; y < min((by+1)*ph, b.Dy()) && !hit; y++ {
					for x := bx * pw; x < min((bx+1)*pw, b.Dx()); x++ {
						if covered[y*b.Dx()+x] {
							hit = true
							break
						}
					}
				}
				k := by*c.bw + bx
				switch {
				case hit:
					if c.blocks[k] != orig.comps[ci].blocks[k] {
						redone++
					}
				case c.blocks[k] != orig.comps[ci].blocks[k]:
					t.Fatalf("%s: component %d block (%d,%d) changed, but no rectangle touches it", name, ci, bx, by)
				default:
					kept++
				}
			}
		}
	}
	if redone == 0 || kept == 0 {
		t.Fatalf("%s: %d blocks redone, %d kept: the drawing should change some and not all", name, redone, kept)
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestGoEncodedJPEGs covers image/jpeg's own output: grey and colour.
func TestGoEncodedJPEGs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, img := range []image.Image{
		func() image.Image {
			g := image.NewGray(image.Rect(0, 0, 37, 23))
			for i := range g.Pix {
				g.Pix[i] = uint8(rng.IntN(256))
			}
			return g
		}(),
		func() image.Image {
			c := image.NewRGBA(image.Rect(0, 0, 53, 41))
			for y := 0; y < 41; y++ {
				for x := 0; x < 53; x++ {
					c.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 6), uint8(rng.IntN(256)), 255})
				}
			}
			return c
		}(),
	} {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
			t.Fatal(err)
		}
		m, err := Decode(buf.Bytes())
		if err != nil {
			t.Fatalf("%T: %v", img, err)
		}
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		a, err1 := jpeg.Decode(bytes.NewReader(buf.Bytes()))
		b, err2 := jpeg.Decode(bytes.NewReader(out.Bytes()))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		for y := 0; y < a.Bounds().Dy(); y++ {
			for x := 0; x < a.Bounds().Dx(); x++ {
				if a.At(x, y) != b.At(x, y) {
					t.Fatalf("%T: pixel (%d,%d) changed in a lossless round trip", img, x, y)
				}
			}
		}
	}
}

func TestUnsupportedAndBroken(t *testing.T) {
	src := load(t, screenshots[1])
	for name, b := range map[string][]byte{
		"empty":     {},
		"not jpeg":  []byte("GIF89a..."),
		"truncated": src[:len(src)/2],
		"no eoi":    src[:len(src)-2],
		// Scan data cut short but properly ended: not padded with zeros.
		"short scan": append(append([]byte(nil), src[:len(src)/2]...), 0xFF, 0xD9),
	} {
		if _, err := Decode(b); err == nil {
			t.Errorf("%s: Decode succeeded", name)
		}
	}
	prog := append([]byte(nil), src...)
	for i := 2; i+1 < len(prog); i++ {
		if prog[i] == 0xFF && prog[i+1] == 0xC0 {
			prog[i+1] = 0xC2
			break
		}
	}
	if _, err := Decode(prog); !errors.Is(err, ErrUnsupported) {
		t.Errorf("progressive: %v; want ErrUnsupported", err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, p := range screenshots {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4000)])
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 9, 9)), nil)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Decode(b)
		if err != nil {
			return
		}
		// Whatever decodes must also give pixels and encode.
		m.Pixels([]image.Rectangle{m.Bounds()})
		var out bytes.Buffer
		if err := m.Encode(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(out.Bytes())
		if err != nil {
			t.Fatalf("re-decoding our own output: %v", err)
		}
		// Encode copies what it can of the scan: the copy holds the
		// same coefficients.
		if m.src.ok && !sameCoefs(back, m) {
			t.Fatal("our own output decodes to other coefficients")
		}
	})
}

func BenchmarkPatchVersusFullPipeline(b *testing.B) {
	src := load(b, screenshots[0])
	rng := rand.New(rand.NewPCG(5, 6))
	var marks []som.Mark
	for i := 0; i < 150; i++ {
		marks = append(marks, som.Mark{ID: i + 1, Box: som.Rect{X: rng.Float64() * 1200, Y: rng.Float64() * 680, W: 20 + rng.Float64()*100, H: 12 + rng.Float64()*20}})
	}
	b.Run("patch", func(b *testing.B) {
		for b.Loop() {
			m, err := Decode(src)
			if err != nil {
				b.Fatal(err)
			}
			labels := som.Layout(m.Bounds(), marks, som.Options{})
			fp := som.Footprint(m.Bounds(), labels, som.Options{})
			drawn := som.Render(m.Pixels(fp), labels, som.Options{}).(*image.YCbCr)
			m.Update(drawn, fp)
			var out bytes.Buffer
			m.Encode(&out)
		}
	})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			img, _ := jpeg.Decode(bytes.NewReader(src))
			drawn := som.Draw(img, marks, som.Options{})
			var out bytes.Buffer
			jpeg.Encode(&out, drawn, &jpeg.Options{Quality: 80})
		}
	})
}
