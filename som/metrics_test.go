package som

import (
	"fmt"
	"image"
	"math"
	"strings"
	"testing"
)

// TestPlacementVersusNaive measures Layout against AutoGen's placement on
// dense synthetic pages and requires it to beat it where it matters: no
// tag hides another, none leaves the image, and tags cover less of the
// other elements.
func TestPlacementVersusNaive(t *testing.T) {
	var table strings.Builder
	fmt.Fprintf(&table, "%-8s %-6s %5s %5s %5s %6s %5s %6s %6s %6s %5s %5s %6s %6s\n",
		"scene", "layout", "tags", "drop", "ovl", "hidden", "off", "any", "other", "own", "det", "mis", "mean", "max")
	row := func(name, kind string, m Metrics) {
		fmt.Fprintf(&table, "%-8s %-6s %5d %5d %5d %5.1f%% %5d %5.1f%% %5.1f%% %5.1f%% %5d %5d %6.2f %6.1f\n",
			name, kind, m.Tags, m.Dropped, m.Overlapping, 100*m.HiddenShare, m.OffImage,
			100*m.CoverAny, 100*m.CoverOther, 100*m.CoverOwn, m.Detached, m.Misleading, m.MeanDist, m.MaxDist)
	}
	for _, s := range append(denseScenes(), sparse(), edges()) {
		b := imageRect(s.w, s.h)
		ours := Measure(b, Layout(b, s.marks, Options{}))
		naive := Measure(b, naiveLayout(b, s.marks, Options{}))
		row(s.name, "som", ours)
		row(s.name, "naive", naive)
		if ours.Overlapping != 0 || ours.Obscured != 0 || ours.OffImage != 0 {
			t.Errorf("%s: %d overlapping, %d obscured, %d off-image tags, want none", s.name, ours.Overlapping, ours.Obscured, ours.OffImage)
		}
		if ours.Dropped != 0 {
			t.Errorf("%s: %d tags dropped, want none", s.name, ours.Dropped)
		}
		if ours.Misleading > naive.Misleading {
			t.Errorf("%s: %d misleading tags, naive placement %d", s.name, ours.Misleading, naive.Misleading)
		}
		if ours.CoverOther > naive.CoverOther {
			t.Errorf("%s: tags cover %.1f%% of other elements, naive placement %.1f%%", s.name, 100*ours.CoverOther, 100*naive.CoverOther)
		}
	}
	t.Logf("placement metrics (ovl: tags overlapping a tag; hidden: tag area under later tags; off: tags off the image;\n"+
		"any/other/own: tag area on any/another/its own box; det: tags not touching their box;\n"+
		"mis: tags lying more on, or nearer to, another box than their own; mean/max: px from tag to box)\n%s", table.String())
}

// TestMeasure checks Measure on a hand-worked example.
func TestMeasure(t *testing.T) {
	a, b := image.Rect(10, 10, 50, 30), image.Rect(10, 30, 50, 50)
	labels := []Label{
		{ID: 1, Box: a, Rect: image.Rect(10, 0, 30, 10)},                             // touches A from above
		{ID: 2, Box: b, Rect: image.Rect(20, 20, 40, 40)},                            // half on A, half on B
		{ID: 3, Box: a, Rect: image.Rect(25, 5, 35, 15)},                             // over tag 1's corner
		{ID: 4, Box: image.Rect(60, 10, 70, 20)},                                     // dropped
		{ID: 5, Box: image.Rect(60, 60, 70, 70), Rect: image.Rect(90, 90, 110, 110)}, // away, half off the image
		{ID: 6, Box: image.Rect(70, 95, 85, 100)},                                    // dropped, next to tag 5
	}
	got := Measure(image.Rect(0, 0, 100, 100), labels)
	want := Metrics{
		Tags: 4, Dropped: 2, Overlapping: 2, Obscured: 1,
		HiddenShare: 25.0 / 800, OffImage: 1,
		// Tag 3 lies 50 px on A, its own box and also tag 1's: other too.
		CoverAny: 450.0 / 800, CoverOther: 250.0 / 800, CoverOwn: 250.0 / 800,
		Detached: 1, Misleading: 1,
		MeanDist: math.Hypot(20, 20) / 4, MaxDist: math.Hypot(20, 20),
	}
	if got != want {
		t.Errorf("Measure:\n got %+v\nwant %+v", got, want)
	}
}
