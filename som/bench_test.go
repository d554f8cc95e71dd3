package som

import (
	"bytes"
	"image"
	"image/jpeg"
	"slices"
	"testing"
)

// The benchmarks use a 1280x720 page with 150 marks (the dense link list)
// unless their name says otherwise.

func BenchmarkLayout(b *testing.B) {
	for _, s := range []scene{linkList(), buttonGrid(), checkboxTable(), icons()} {
		bounds := imageRect(s.w, s.h)
		b.Run(s.name, func(b *testing.B) {
			for b.Loop() {
				Layout(bounds, s.marks, Options{})
			}
		})
	}
}

func BenchmarkDraw(b *testing.B) {
	s := linkList()
	rgba := page(s.w, s.h, 1)
	nrgba := &image.NRGBA{Pix: rgba.Pix, Stride: rgba.Stride, Rect: rgba.Rect}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, rgba, &jpeg.Options{Quality: 80}); err != nil {
		b.Fatal(err)
	}
	dec, err := jpeg.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	ycbcr := dec.(*image.YCbCr)
	jpg := buf.Bytes()
	for _, c := range []struct {
		name string
		img  image.Image
		opts Options
	}{
		{"rgba", rgba, Options{}},
		{"nrgba", nrgba, Options{}},
		{"ycbcr", ycbcr, Options{}},
		{"rgba-gray", rgba, Options{Grayscale: true}},
		{"ycbcr-gray", ycbcr, Options{Grayscale: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Draw(c.img, s.marks, c.opts)
			}
		})
	}
	// What Draw costs beyond the copy it must make anyway.
	b.Run("copy-only-rgba", func(b *testing.B) {
		for b.Loop() {
			cloneRGBA(rgba)
		}
	})
	b.Run("copy-only-ycbcr", func(b *testing.B) {
		for b.Loop() {
			cloneYCbCr(ycbcr)
		}
	})
	// For scale: the JPEG work a caller does around Draw.
	b.Run("jpeg-decode", func(b *testing.B) {
		for b.Loop() {
			if _, err := jpeg.Decode(bytes.NewReader(jpg)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jpeg-encode-ycbcr", func(b *testing.B) {
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			if err := jpeg.Encode(&out, ycbcr, &jpeg.Options{Quality: 80}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jpeg-encode-rgba", func(b *testing.B) {
		var out bytes.Buffer
		for b.Loop() {
			out.Reset()
			if err := jpeg.Encode(&out, rgba, &jpeg.Options{Quality: 80}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkNaiveLayout(b *testing.B) {
	s := linkList()
	bounds := imageRect(s.w, s.h)
	for b.Loop() {
		naiveLayout(bounds, s.marks, Options{})
	}
}

// BenchmarkGrayscaleSalience measures what Options.Grayscale buys: how far
// (CIE76 delta E) each tag's colour is from the page pixels just around it,
// with the page in colour and in grey. Digit legibility does not depend on
// it (tags are opaque, digits have a fixed contrast with the tag); the
// tag's outline against the page does. It reports the mean over tags and
// the 5th percentile (the tags that stand out least).
func BenchmarkGrayscaleSalience(b *testing.B) {
	for _, gray := range []bool{false, true} {
		name := "colour"
		if gray {
			name = "gray"
		}
		b.Run(name, func(b *testing.B) {
			var mean, p5 float64
			for b.Loop() {
				var per []float64
				for _, s := range denseScenes() {
					bg := page(s.w, s.h, 1)
					if gray {
						(&rgbaCanvas{bg}).gray()
					}
					for _, l := range Layout(bg.Rect, s.marks, Options{}) {
						ring := l.Rect.Inset(-2).Intersect(bg.Rect)
						sum, n := 0.0, 0
						for y := ring.Min.Y; y < ring.Max.Y; y++ {
							for x := ring.Min.X; x < ring.Max.X; x++ {
								if image.Pt(x, y).In(l.Rect) {
									continue
								}
								sum += deltaE(l.Color, bg.RGBAAt(x, y))
								n++
							}
						}
						if n > 0 {
							per = append(per, sum/float64(n))
						}
					}
				}
				slices.Sort(per)
				mean = 0
				for _, v := range per {
					mean += v
				}
				mean /= float64(len(per))
				p5 = per[len(per)/20]
			}
			b.ReportMetric(mean, "meanΔE")
			b.ReportMetric(p5, "p5ΔE")
		})
	}
}
