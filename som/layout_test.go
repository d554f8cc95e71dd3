package som

import (
	"encoding/binary"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// checkLayout verifies the invariants every layout must hold.
func checkLayout(t testing.TB, bounds image.Rectangle, marks []Mark, labels []Label, opts Options) {
	t.Helper()
	prev := -1
	for k, l := range labels {
		if l.Mark <= prev || l.Mark >= len(marks) {
			t.Fatalf("label %d: mark index %d out of order or range (previous %d, %d marks)", k, l.Mark, prev, len(marks))
		}
		prev = l.Mark
		if l.ID != marks[l.Mark].ID {
			t.Fatalf("label %d: ID %d, mark has %d", k, l.ID, marks[l.Mark].ID)
		}
		if l.Box.Empty() || !l.Box.In(bounds) {
			t.Fatalf("label %d: box %v empty or outside bounds %v", k, l.Box, bounds)
		}
		if c := contrastRatio(l.Color, l.Text); c < wcagMinContrast {
			t.Fatalf("label %d: text contrast %.2f", k, c)
		}
		if l.Place == Dropped {
			if !l.Rect.Empty() {
				t.Fatalf("label %d: dropped but has tag %v", k, l.Rect)
			}
			continue
		}
		if l.Rect.Empty() || !l.Rect.In(bounds) {
			t.Fatalf("label %d (id %d): tag %v empty or outside bounds %v", k, l.ID, l.Rect, bounds)
		}
		if got := classify(l.Rect, l.Box); got != l.Place {
			t.Fatalf("label %d: placement %v, geometry says %v", k, l.Place, got)
		}
		for j, o := range labels[:k] {
			if !o.Rect.Empty() && l.Rect.Inset(-TagGap).Overlaps(o.Rect) {
				t.Fatalf("tags of labels %d %v and %d %v are closer than %d px", j, o.Rect, k, l.Rect, TagGap)
			}
		}
	}
	// Every mark with a visible box has a label.
	n := 0
	for _, m := range marks {
		if _, ok := pixelBox(m.Box, opts.config().scale, saneBounds(bounds)); ok {
			n++
		}
	}
	if n != len(labels) {
		t.Fatalf("%d marks are visible, %d labels", n, len(labels))
	}
}

// roomy reports whether bounds is large enough that every tag must find a
// place: room for four times the tags of the given marks, each padded by a
// search step.
func roomy(bounds image.Rectangle, marks []Mark) bool {
	f := newTagFont(DefaultFontSize)
	need := 0
	for _, m := range marks {
		w, h := f.dims(len(strconv.Itoa(m.ID)))
		if w+8 > bounds.Dx() || h+8 > bounds.Dy() {
			return false
		}
		need += 4 * (w + h/2 + 2*TagGap) * (h + h/2 + 2*TagGap)
	}
	return need <= bounds.Dx()*bounds.Dy()
}

func randomMarks(rng *rand.Rand, bounds image.Rectangle, n int) []Mark {
	marks := make([]Mark, n)
	cx, cy := rng.IntN(bounds.Dx()+1), rng.IntN(bounds.Dy()+1)
	spread := 1 + rng.IntN(max(1, bounds.Dx()))
	for i := range marks {
		w, h := 1+rng.ExpFloat64()*30, 1+rng.ExpFloat64()*15
		x := float64(cx) + rng.NormFloat64()*float64(spread) - w/2
		y := float64(cy) + rng.NormFloat64()*float64(spread) - h/2
		id := i + 1
		switch rng.IntN(20) {
		case 0:
			id = rng.IntN(100000)
		case 1:
			id = 3 // duplicate
		}
		marks[i] = Mark{ID: id, Box: Rect{x, y, w, h}, Covered: rng.IntN(5) == 0}
	}
	return marks
}

// TestLayoutProperties checks the invariants on many random mark sets,
// from sparse to piled on one spot, in images from tiny to full size.
func TestLayoutProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(42, 42))
	roomyRuns := 0
	for iter := range 400 {
		bounds := image.Rect(0, 0, 1+rng.IntN(1400), 1+rng.IntN(800))
		if iter%4 == 0 {
			bounds = bounds.Add(image.Pt(rng.IntN(200)-100, rng.IntN(200)-100))
		}
		marks := randomMarks(rng, bounds, rng.IntN(200))
		labels := Layout(bounds, marks, Options{})
		checkLayout(t, bounds, marks, labels, Options{})
		if roomy(bounds, marks) {
			roomyRuns++
			for _, l := range labels {
				if l.Place == Dropped {
					t.Fatalf("iteration %d: bounds %v with room for all tags, but tag of mark %d dropped", iter, bounds, l.Mark)
				}
			}
		}
	}
	if roomyRuns < 100 {
		t.Fatalf("only %d of the random cases were roomy: the test is not testing the no-drop rule", roomyRuns)
	}
}

// TestLayoutPileUp puts many marks on one spot: tags spread out around it,
// none dropped while the image has room, and the layout stays fast.
func TestLayoutPileUp(t *testing.T) {
	bounds := image.Rect(0, 0, 1280, 720)
	marks := make([]Mark, 300)
	for i := range marks {
		marks[i] = Mark{ID: i + 1, Box: Rect{600, 300, 20, 20}}
	}
	labels := Layout(bounds, marks, Options{})
	checkLayout(t, bounds, marks, labels, Options{})
	for _, l := range labels {
		if l.Place == Dropped {
			t.Fatalf("tag %d dropped", l.ID)
		}
	}
	// A full image: tags must be dropped rather than overlap.
	small := image.Rect(550, 280, 670, 340)
	labels = Layout(small, marks, Options{})
	checkLayout(t, small, marks, labels, Options{})
	dropped := 0
	for _, l := range labels {
		if l.Place == Dropped {
			dropped++
		}
	}
	if dropped == 0 {
		t.Fatalf("300 tags fit in a 120x60 image?")
	}
}

func TestLayoutOddInput(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	marks := []Mark{
		{ID: 1, Box: Rect{10, 10, 0, 10}},                // zero width
		{ID: 2, Box: Rect{10, 10, -5, 10}},               // negative width
		{ID: 3, Box: Rect{nan, 10, 10, 10}},              // NaN
		{ID: 4, Box: Rect{10, 10, inf, 10}},              // infinite
		{ID: 5, Box: Rect{-1e300, -1e300, 2e300, 2e300}}, // huge, covers all
		{ID: math.MaxInt, Box: Rect{50, 50, 10, 10}},
		{ID: math.MinInt, Box: Rect{70, 50, 10, 10}},
		{ID: -7, Box: Rect{90, 50, 10, 10}},
		{ID: 8, Box: Rect{5000, 5000, 10, 10}}, // outside
		{ID: 8, Box: Rect{30, 30, 10, 10}},     // duplicate ID
	}
	for _, opts := range []Options{
		{},
		{FontSize: -3, Stroke: -1, Scale: -2},
		{FontSize: nan, Scale: nan},
		{FontSize: 1e9, Stroke: 1e9, Scale: inf},
		{Scale: 1e-300},
		{Palette: []color.RGBA{{0, 0, 0, 0}}},
	} {
		for _, b := range []image.Rectangle{{}, image.Rect(0, 0, 1, 1), image.Rect(0, 0, 300, 200), image.Rect(-50, -50, 250, 150), image.Rect(10, 10, 5, 5)} {
			labels := Layout(b, marks, opts)
			checkLayout(t, b.Canon(), marks, labels, opts)
		}
	}
	if got := Layout(image.Rect(0, 0, 100, 100), nil, Options{}); len(got) != 0 {
		t.Errorf("no marks: %d labels", len(got))
	}
}

// FuzzLayout decodes random bytes into an image size and marks and checks
// the layout invariants, and that drawing does not panic.
func FuzzLayout(f *testing.F) {
	f.Add([]byte{0, 200, 0, 120, 1, 10, 10, 30, 12, 2, 12, 10, 30, 12})
	f.Add([]byte{1, 0, 1, 0, 255, 0, 0, 255, 255, 255, 128, 128, 1, 1})
	f.Add(make([]byte, 200))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 4 {
			return
		}
		w := int(binary.BigEndian.Uint16(data[0:])) % 700
		h := int(binary.BigEndian.Uint16(data[2:])) % 500
		bounds := image.Rect(0, 0, w, h)
		var marks []Mark
		for p := data[4:]; len(p) >= 9 && len(marks) < 300; p = p[9:] {
			marks = append(marks, Mark{
				ID:      int(int16(binary.BigEndian.Uint16(p[0:]))),
				Box:     Rect{float64(int16(binary.BigEndian.Uint16(p[2:]))) / 4, float64(int16(binary.BigEndian.Uint16(p[4:]))) / 4, float64(p[6]) - 8, float64(p[7]) - 8},
				Covered: p[8]&1 == 1,
			})
		}
		labels := Layout(bounds, marks, Options{})
		checkLayout(t, bounds, marks, labels, Options{})
		if roomy(bounds, marks) {
			for _, l := range labels {
				if l.Place == Dropped {
					t.Fatalf("bounds %v has room, but tag of mark %d dropped", bounds, l.Mark)
				}
			}
		}
		if w*h <= 200*200 {
			img := image.NewRGBA(bounds)
			Draw(img, marks, Options{})
		}
	})
}

// TestLayoutAvoidsText: a checkbox with its label text to the right; with
// the text given, the tag no longer covers it.
func TestLayoutAvoidsText(t *testing.T) {
	bounds := image.Rect(0, 0, 200, 100)
	box := Mark{ID: 12, Box: Rect{X: 20, Y: 40, W: 13, H: 13}}
	text := Rect{X: 36, Y: 38, W: 60, H: 17}
	textPx := image.Rect(36, 38, 96, 55)
	without := Layout(bounds, []Mark{box}, Options{})
	with := Layout(bounds, []Mark{box}, Options{Text: []Rect{text}})
	if !with[0].Rect.Intersect(textPx).Empty() {
		t.Errorf("tag %v covers the label text %v", with[0].Rect, textPx)
	}
	if with[0].Place == Dropped {
		t.Error("the tag was dropped")
	}
	t.Logf("without text: %v; with: %v", without[0].Rect, with[0].Rect)
}

// TestLayoutMaxDetach piles marks on one spot with a bound on how far a tag
// may sit from its box: tags beyond it are dropped, never drawn far away,
// and the layout's other invariants hold.
func TestLayoutMaxDetach(t *testing.T) {
	bounds := image.Rect(0, 0, 1280, 720)
	marks := make([]Mark, 300)
	for i := range marks {
		marks[i] = Mark{ID: i + 1, Box: Rect{600, 300, 20, 20}}
	}
	opts := Options{MaxDetach: 40}
	labels := Layout(bounds, marks, opts)
	checkLayout(t, bounds, marks, labels, opts)
	placed, dropped := 0, 0
	for _, l := range labels {
		if l.Place == Dropped {
			if !l.Rect.Empty() {
				t.Errorf("dropped tag %d has a rectangle %v", l.ID, l.Rect)
			}
			dropped++
			continue
		}
		placed++
		if d := rectDist(l.Rect, l.Box); d > 40 {
			t.Errorf("tag %d is %.0f px from its box, over the bound of 40", l.ID, d)
		}
	}
	if dropped == 0 || placed < 20 {
		t.Errorf("%d tags placed near the pile and %d dropped; want many of each", placed, dropped)
	}
	if m := Measure(bounds, labels); m.MaxDist > 40 || m.Overlapping != 0 {
		t.Errorf("metrics: %+v", m)
	}
	// Where there is room near every box, the bound changes nothing.
	s := sparse()
	b := imageRect(s.w, s.h)
	if a, c := Layout(b, s.marks, Options{}), Layout(b, s.marks, Options{MaxDetach: 40}); !slices.Equal(a, c) {
		t.Errorf("the bound changed a roomy layout:\n%v\n%v", a, c)
	}
}
