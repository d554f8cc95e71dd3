package websurfer

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/som"
)

// TestSetOfMarkGoldens compares the set-of-mark images of fixture pages,
// a dense one among them, with golden PNGs (within a pixel tolerance;
// -update rewrites them), and checks that no two labels overlap.
func TestSetOfMarkGoldens(t *testing.T) {
	sites := browsertest.ServeSites(t)
	for _, name := range []string{"native", "frames", "overlay", "dense", "crowd", "scaled"} {
		t.Run(name, func(t *testing.T) {
			s := newSurfer(t, Config{})
			gotoPage(t, s, sites.A+"/perception/"+name+".html")
			obs := observe(t, s)
			img, err := jpeg.Decode(bytes.NewReader(obs.Image))
			if err != nil {
				t.Fatal(err)
			}
			// The golden is the JPEG exactly as the model receives it.
			path := filepath.Join("testdata", "som", name+".jpg")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, obs.Image, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readJPEG(t, path)
			if diff, share := pixelDiff(img, want); share > 0.01 {
				got := filepath.Join(t.TempDir(), name+".png")
				writePNG(t, got, img)
				t.Errorf("%s: %.2f%% of pixels differ by more than the tolerance (%d pixels); the image is in %s", path, 100*share, diff, got)
			}

			// The labels as drawn: no two overlap.
			var ids []int
			for id, r := range obs.refs {
				if (r.el.Where == InViewport || r.el.Where == Covered) && id <= obs.marked {
					ids = append(ids, id)
				}
			}
			sort.Ints(ids)
			var marks []som.Mark
			for _, id := range ids {
				v := obs.refs[id].vis
				marks = append(marks, som.Mark{ID: id, Box: som.Rect{X: v.X, Y: v.Y, W: v.W, H: v.H}, Covered: obs.refs[id].el.Where == Covered})
			}
			labels := som.Layout(img.Bounds(), marks, som.Options{Text: obs.texts, MaxDetach: maxDetach(som.Options{})})
			if len(labels) != len(marks) {
				t.Errorf("%d labels for %d marks", len(labels), len(marks))
			}
			for i := range labels {
				for j := i + 1; j < len(labels); j++ {
					if labels[i].Rect.Overlaps(labels[j].Rect) {
						t.Errorf("labels of %d and %d overlap: %v %v", labels[i].ID, labels[j].ID, labels[i].Rect, labels[j].Rect)
					}
				}
			}
			if m := som.Measure(img.Bounds(), labels); m.Overlapping != 0 || m.Dropped != 0 {
				t.Errorf("layout metrics: %+v", m)
			}
		})
	}
}

// pixelDiff counts pixels whose channels differ by more than a tolerance
// (JPEG noise and anti-aliasing), and their share.
func pixelDiff(a, b image.Image) (int, float64) {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy(), 1
	}
	const tol = 48 << 8
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if absDiff32(r1, r2) > tol || absDiff32(g1, g2) > tol || absDiff32(b1, b2) > tol {
				n++
			}
		}
	}
	return n, float64(n) / float64(r.Dx()*r.Dy())
}

func absDiff32(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

func readJPEG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	img, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
