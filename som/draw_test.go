package som

import (
	"bytes"
	"image"
	"image/color"
	"math"
	"sync"
	"testing"
)

func TestDrawDoesNotMutate(t *testing.T) {
	s := linkList()
	src := page(s.w, s.h, 1)
	before := bytes.Clone(src.Pix)
	out := Draw(src, s.marks, Options{Grayscale: true})
	if !bytes.Equal(src.Pix, before) {
		t.Fatal("Draw modified its input")
	}
	if out.(*image.RGBA) == src {
		t.Fatal("Draw returned its input")
	}
	yc := toYCbCr(t, src, image.YCbCrSubsampleRatio420)
	y0, cb0 := bytes.Clone(yc.Y), bytes.Clone(yc.Cb)
	Draw(yc, s.marks, Options{Grayscale: true})
	if !bytes.Equal(yc.Y, y0) || !bytes.Equal(yc.Cb, cb0) {
		t.Fatal("Draw modified its YCbCr input")
	}
}

// TestDrawPixels checks what lands where for one mark on a white image.
func TestDrawPixels(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 100, 80))
	(&rgbaCanvas{src}).fill(src.Rect, white)
	marks := []Mark{{ID: 42, Box: Rect{20, 40, 40, 20}}}
	labels := Layout(src.Rect, marks, Options{})
	if len(labels) != 1 {
		t.Fatalf("%d labels", len(labels))
	}
	l := labels[0]
	if l.Place != Outside {
		t.Errorf("placement %v, want outside (the image is empty around the box)", l.Place)
	}
	out := Draw(src, marks, Options{}).(*image.RGBA)
	at := func(x, y int) color.RGBA { return out.RGBAAt(x, y) }
	// The outline: DefaultStroke pixels inside the box edge.
	for _, p := range []image.Point{{20, 50}, {21, 50}, {59, 50}, {58, 50}, {40, 59}, {40, 58}} {
		if at(p.X, p.Y) != l.Color && !p.In(l.Rect) {
			t.Errorf("outline pixel %v is %v, want %v", p, at(p.X, p.Y), l.Color)
		}
	}
	if got := at(22+DefaultStroke, 50); got != white {
		t.Errorf("pixel inside the box is %v, want untouched white", got)
	}
	if got := at(19, 50); got != white {
		t.Errorf("pixel outside the box is %v, want untouched white", got)
	}
	// The tag: filled with the colour, with digits in the text colour.
	if got := at(l.Rect.Min.X, l.Rect.Min.Y); got != l.Color {
		t.Errorf("tag corner is %v, want %v", got, l.Color)
	}
	ink := 0
	for y := l.Rect.Min.Y; y < l.Rect.Max.Y; y++ {
		for x := l.Rect.Min.X; x < l.Rect.Max.X; x++ {
			if at(x, y) == l.Text {
				ink++
			}
		}
	}
	if ink < 20 {
		t.Errorf("tag has %d pixels of digit colour, want the digits 42 drawn", ink)
	}
	// A covered mark is dashed: some outline pixels are left alone.
	marks[0].Covered = true
	out = Draw(src, marks, Options{}).(*image.RGBA)
	gaps := 0
	for x := 20; x < 60; x++ {
		if p := image.Pt(x, 59); !p.In(l.Rect) && at(x, 59) == white {
			gaps++
		}
	}
	if gaps == 0 {
		t.Error("covered mark's outline is not dashed")
	}
	// Stroke < 0 draws no outline.
	out = Draw(src, []Mark{{ID: 42, Box: Rect{20, 40, 40, 20}}}, Options{Stroke: -1}).(*image.RGBA)
	if got := at(40, 59); got != white {
		t.Errorf("with no stroke, box edge is %v, want white", got)
	}
}

// TestDrawInputTypes draws on every common image type and checks that the
// result matches drawing on the same pixels as *image.RGBA.
func TestDrawInputTypes(t *testing.T) {
	s := sparse()
	base := page(s.w, s.h, 3)
	want := Draw(base, s.marks, Options{})

	nrgba := image.NewNRGBA(base.Rect)
	copy(nrgba.Pix, base.Pix) // opaque: premultiplied equals straight
	gray := image.NewGray(base.Rect)
	for y := 0; y < s.h; y++ {
		for x := 0; x < s.w; x++ {
			gray.Set(x, y, base.At(x, y))
		}
	}
	grayRGBA := image.NewRGBA(base.Rect)
	for y := 0; y < s.h; y++ {
		for x := 0; x < s.w; x++ {
			grayRGBA.Set(x, y, gray.At(x, y))
		}
	}
	// A sub-image: bounds off the origin and a stride wider than a row.
	big := image.NewRGBA(image.Rect(-10, -10, s.w+30, s.h+20))
	sub := big.SubImage(base.Rect).(*image.RGBA)
	for y := 0; y < s.h; y++ {
		copy(sub.Pix[sub.PixOffset(0, y):][:4*s.w], base.Pix[base.PixOffset(0, y):][:4*s.w])
	}
	for _, tc := range []struct {
		name string
		img  image.Image
		want image.Image
	}{
		{"rgba", base, want},
		{"nrgba", nrgba, want},
		{"subimage", sub, want},
		{"generic", generic{base}, want},
		{"gray", gray, Draw(grayRGBA, s.marks, Options{})},
	} {
		got := Draw(tc.img, s.marks, Options{})
		if _, ok := got.(*image.RGBA); !ok {
			t.Errorf("%s: result is %T, want *image.RGBA", tc.name, got)
		}
		if got.Bounds() != tc.img.Bounds() {
			t.Errorf("%s: bounds %v, want %v", tc.name, got.Bounds(), tc.img.Bounds())
			continue
		}
		if n, d := imageDiff(got, tc.want, 0); n != 0 {
			t.Errorf("%s: %d pixels differ from the RGBA result (by up to %d)", tc.name, n, d)
		}
	}
}

// generic hides the concrete type of an image.
type generic struct{ image.Image }

func TestDrawOddInputs(t *testing.T) {
	marks := []Mark{{ID: 1, Box: Rect{1, 1, 10, 10}}, {ID: -99999, Box: Rect{-5, -5, 1e9, 3}}, {ID: math.MaxInt, Box: Rect{0, 0, 1, 1}}}
	for _, tc := range []struct {
		name string
		img  image.Image
	}{
		{"nil", nil},
		{"empty", image.NewRGBA(image.Rectangle{})},
		{"1x1", image.NewRGBA(image.Rect(0, 0, 1, 1))},
		{"short pix", &image.RGBA{Pix: make([]uint8, 10), Stride: 400, Rect: image.Rect(0, 0, 100, 100)}},
		{"short nrgba", &image.NRGBA{Pix: make([]uint8, 10), Stride: 400, Rect: image.Rect(0, 0, 100, 100)}},
		{"short ycbcr", &image.YCbCr{Y: make([]uint8, 10), Cb: make([]uint8, 2), Cr: make([]uint8, 2), YStride: 100, CStride: 50, SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, 100, 100)}},
		{"ycbcr negative origin", image.NewYCbCr(image.Rect(-7, -3, 60, 40), image.YCbCrSubsampleRatio420)},
		{"ycbcr odd ratio", &image.YCbCr{Y: make([]uint8, 100), Cb: make([]uint8, 100), Cr: make([]uint8, 100), YStride: 10, CStride: 10, SubsampleRatio: 99, Rect: image.Rect(0, 0, 10, 10)}},
		{"ycbcr odd size", image.NewYCbCr(image.Rect(3, 5, 64, 38), image.YCbCrSubsampleRatio410)},
		{"paletted", image.NewPaletted(image.Rect(0, 0, 50, 50), color.Palette{color.Black, color.White})},
	} {
		for _, opts := range []Options{{}, {Grayscale: true, Stroke: 100, FontSize: 64}} {
			out := Draw(tc.img, marks, opts)
			if out == nil {
				t.Fatalf("%s: nil result", tc.name)
			}
			if tc.img != nil && out.Bounds() != tc.img.Bounds() {
				t.Errorf("%s: bounds %v, want %v", tc.name, out.Bounds(), tc.img.Bounds())
			}
		}
	}
	// Render with labels that did not come from Layout.
	img := image.NewRGBA(image.Rect(0, 0, 50, 50))
	Render(img, []Label{
		{ID: 5, Rect: image.Rect(-10, -10, 100, 100), Box: image.Rect(40, 40, 90, 90), Place: Detached, FontSize: -1},
		{ID: 6, Rect: image.Rect(10, 10, 12, 12), Box: image.Rect(-1e6, -1e6, 1e6, 1e6), Place: Detached, FontSize: 1e9, Covered: true},
		{ID: 7, Rect: image.Rect(20, 20, 30, 30), Box: image.Rect(-1<<62, -1<<62, 1<<62, 1<<62), Place: Detached, FontSize: math.NaN(), Covered: true},
	}, Options{})
	Render(nil, nil, Options{})
}

func TestGrayscale(t *testing.T) {
	s := sparse()
	out := Draw(page(s.w, s.h, 1), nil, Options{Grayscale: true}).(*image.RGBA)
	for i := 0; i < len(out.Pix); i += 4 {
		if out.Pix[i] != out.Pix[i+1] || out.Pix[i+1] != out.Pix[i+2] {
			t.Fatalf("pixel %d is not grey: %v", i/4, out.Pix[i:i+4])
		}
	}
	// Marks keep their colour on the grey page.
	labels := Layout(out.Rect, s.marks, Options{})
	out = Draw(page(s.w, s.h, 1), s.marks, Options{Grayscale: true}).(*image.RGBA)
	if got := out.RGBAAt(labels[0].Rect.Min.X, labels[0].Rect.Min.Y); got != labels[0].Color {
		t.Errorf("tag on grey page is %v, want %v", got, labels[0].Color)
	}
}

// toYCbCr converts m to a Y'CbCr image with the given subsampling the way
// a JPEG encoder does (chroma averaged over each block).
func toYCbCr(t testing.TB, m image.Image, ratio image.YCbCrSubsampleRatio) *image.YCbCr {
	t.Helper()
	b := m.Bounds()
	out := image.NewYCbCr(b, ratio)
	sumB, sumR, n := make([]int, len(out.Cb)), make([]int, len(out.Cb)), make([]int, len(out.Cb))
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := m.At(x, y).RGBA()
			yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(bl>>8))
			out.Y[out.YOffset(x, y)] = yy
			o := out.COffset(x, y)
			sumB[o] += int(cb)
			sumR[o] += int(cr)
			n[o]++
		}
	}
	for o := range n {
		if n[o] > 0 {
			out.Cb[o] = uint8((sumB[o] + n[o]/2) / n[o])
			out.Cr[o] = uint8((sumR[o] + n[o]/2) / n[o])
		}
	}
	return out
}

// TestYCbCrMatchesRGBA checks the YCbCr fast path against the RGBA path,
// for every subsampling.
// Converting a subsampled image to RGB and back is itself lossy (colours
// at chroma edges clip), so rather than comparing whole images it checks
// what the fast path promises: pixels the RGBA path leaves alone keep
// their luma exactly; drawn pixels get the luma of the RGBA result; each
// chroma sample becomes the average, over its block, of the drawn
// colours and the old chroma where nothing was drawn, as a JPEG encoder
// would compute from the RGBA result.
func TestYCbCrMatchesRGBA(t *testing.T) {
	s := linkList()
	base := page(s.w, s.h, 1)
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio420, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio444,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		src := toYCbCr(t, base, ratio)
		before := cloneRGBA(src)
		viaRGBA := Draw(before, s.marks, Options{}).(*image.RGBA)
		got, ok := Draw(src, s.marks, Options{}).(*image.YCbCr)
		if !ok || got.SubsampleRatio != ratio {
			t.Fatalf("%v: result is %T, want *image.YCbCr with the same subsampling", ratio, got)
		}
		sumB, sumR, cnt := make([]int, len(src.Cb)), make([]int, len(src.Cb)), make([]int, len(src.Cb))
		var lumaOff, untouchedOff, drawn int
		b := src.Rect
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				yo, co := src.YOffset(x, y), src.COffset(x, y)
				cnt[co]++
				p := viaRGBA.RGBAAt(x, y)
				if p == before.RGBAAt(x, y) {
					if got.Y[yo] != src.Y[yo] {
						untouchedOff++
					}
					sumB[co] += int(src.Cb[co])
					sumR[co] += int(src.Cr[co])
					continue
				}
				drawn++
				wy, wcb, wcr := color.RGBToYCbCr(p.R, p.G, p.B)
				if d := int(got.Y[yo]) - int(wy); d < -2 || d > 2 {
					lumaOff++
				}
				sumB[co] += int(wcb)
				sumR[co] += int(wcr)
			}
		}
		if drawn < 1000 {
			t.Fatalf("%v: only %d pixels drawn", ratio, drawn)
		}
		if untouchedOff != 0 || lumaOff != 0 {
			t.Errorf("%v: %d untouched pixels changed luma; %d of %d drawn pixels off the RGBA luma by more than 2", ratio, untouchedOff, lumaOff, drawn)
		}
		// Chroma: the block average, up to rounding.
		var chromaOff, largest int
		samples := 0
		for co, n := range cnt {
			if n == 0 {
				continue
			}
			samples += 2
			for _, pair := range [2][2]int{{int(got.Cb[co]), sumB[co]}, {int(got.Cr[co]), sumR[co]}} {
				want := (pair[1] + n/2) / n
				d := pair[0] - want
				if d < 0 {
					d = -d
				}
				largest = max(largest, d)
				if d > 1 {
					chromaOff++
				}
			}
		}
		if chromaOff != 0 {
			t.Errorf("%v: %d of %d chroma samples off by more than 1 (largest %d)", ratio, chromaOff, samples, largest)
		}
	}
}

// TestDrawConcurrent draws from several goroutines at once (run with -race):
// the glyph cache and the YCbCr scratch pool are shared.
func TestDrawConcurrent(t *testing.T) {
	s := checkboxTable()
	rgba := page(s.w, s.h, 2)
	yc := toYCbCr(t, rgba, image.YCbCrSubsampleRatio420)
	wantR := Draw(rgba, s.marks, Options{})
	wantY := Draw(yc, s.marks, Options{}).(*image.YCbCr)
	var wg sync.WaitGroup
	errs := make(chan string, 16)
	for g := range 4 {
		wg.Go(func() {
			for range 3 {
				if g%2 == 0 {
					if n, _ := imageDiff(Draw(rgba, s.marks, Options{}), wantR, 0); n != 0 {
						errs <- "rgba result differs"
					}
				} else {
					got := Draw(yc, s.marks, Options{}).(*image.YCbCr)
					if !bytes.Equal(got.Y, wantY.Y) || !bytes.Equal(got.Cb, wantY.Cb) || !bytes.Equal(got.Cr, wantY.Cr) {
						errs <- "ycbcr result differs"
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// RenderInPlace draws what Render draws, into its input, and changes only
// pixels inside the footprint; it refuses images off the Y'CbCr path.
func TestRenderInPlace(t *testing.T) {
	s := linkList()
	src := toYCbCr(t, page(s.w, s.h, 1), image.YCbCrSubsampleRatio420)
	for _, opts := range []Options{{}, {Stroke: 3, FontSize: 18}} {
		labels := Layout(src.Bounds(), s.marks, opts)
		want := Render(src, labels, opts).(*image.YCbCr)
		got := toYCbCr(t, page(s.w, s.h, 1), image.YCbCrSubsampleRatio420)
		if !RenderInPlace(got, labels, opts) {
			t.Fatal("RenderInPlace refused a plain 4:2:0 image")
		}
		if !bytes.Equal(got.Y, want.Y) || !bytes.Equal(got.Cb, want.Cb) || !bytes.Equal(got.Cr, want.Cr) {
			t.Fatal("RenderInPlace drew otherwise than Render")
		}
		if bytes.Equal(got.Y, src.Y) {
			t.Fatal("RenderInPlace drew nothing")
		}
		// Luma changes inside the footprint only, chroma in the samples
		// of its pixels only.
		fp := Footprint(src.Bounds(), labels, opts)
		chroma := make([]bool, len(src.Cb))
		for y := 0; y < s.h; y++ {
			for x := 0; x < s.w; x++ {
				in := false
				for _, r := range fp {
					in = in || image.Pt(x, y).In(r)
				}
				if in {
					chroma[src.COffset(x, y)] = true
				} else if o := src.YOffset(x, y); got.Y[o] != src.Y[o] {
					t.Fatalf("pixel (%d,%d) outside the footprint changed", x, y)
				}
			}
		}
		for o, ok := range chroma {
			if !ok && (got.Cb[o] != src.Cb[o] || got.Cr[o] != src.Cr[o]) {
				t.Fatalf("chroma sample %d, of no pixel in the footprint, changed", o)
			}
		}
	}
	for name, img := range map[string]*image.YCbCr{
		"nil":             nil,
		"negative origin": image.NewYCbCr(image.Rect(-7, -3, 60, 40), image.YCbCrSubsampleRatio420),
		"short planes":    {Y: make([]uint8, 10), Cb: make([]uint8, 2), Cr: make([]uint8, 2), YStride: 100, CStride: 50, SubsampleRatio: image.YCbCrSubsampleRatio420, Rect: image.Rect(0, 0, 100, 100)},
	} {
		if RenderInPlace(img, []Label{{ID: 1, Box: image.Rect(0, 0, 10, 10)}}, Options{}) {
			t.Errorf("%s: RenderInPlace took it", name)
		}
	}
}
