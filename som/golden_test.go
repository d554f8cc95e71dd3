package som

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Golden images are compared with a tolerance, so that a change in font
// rasterisation rounding does not fail the test but a moved tag does.
const (
	goldenChannelTol = 24    // per-channel difference that counts as equal
	goldenMaxDiff    = 0.002 // share of pixels allowed to differ
)

func TestGolden(t *testing.T) {
	dense := linkList()
	dense.name = "dense"
	// The packed icon grid, moved into a small image.
	crowded := scene{name: "crowded", w: 400, h: 280}
	for _, m := range icons().marks {
		m.Box.X -= 450
		m.Box.Y -= 260
		crowded.marks = append(crowded.marks, m)
	}
	for _, s := range []scene{sparse(), dense, edges(), crowded} {
		t.Run(s.name, func(t *testing.T) {
			got := Draw(page(s.w, s.h, 1), s.marks, Options{})
			checkGolden(t, filepath.Join("testdata", s.name+".png"), got)
		})
	}
}

func checkGolden(t *testing.T, path string, got image.Image) {
	t.Helper()
	if *update {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		if err := enc.Encode(&buf, got); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run go test ./som -update to create it)", err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatalf("decoding %s: %v", path, err)
	}
	if got.Bounds() != want.Bounds() {
		t.Fatalf("bounds %v, golden %v", got.Bounds(), want.Bounds())
	}
	diff, maxd := imageDiff(got, want, goldenChannelTol)
	n := got.Bounds().Dx() * got.Bounds().Dy()
	if float64(diff) > goldenMaxDiff*float64(n) {
		dir, err := os.MkdirTemp("", "som-golden-")
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, filepath.Base(path))
		writePNG(t, out, got)
		t.Errorf("%d of %d pixels differ from %s by more than %d (largest difference %d); got image: %s",
			diff, n, path, goldenChannelTol, maxd, out)
	}
}

// imageDiff counts the pixels of a and b (same bounds) whose channels differ
// by more than tol, and returns the largest channel difference.
func imageDiff(a, b image.Image, tol int) (n, largest int) {
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			d := max(absDiff(r1, r2), absDiff(g1, g2), absDiff(b1, b2)) >> 8
			largest = max(largest, int(d))
			if int(d) > tol {
				n++
			}
		}
	}
	return n, largest
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func writePNG(t *testing.T, path string, m image.Image) {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
