package perception

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/tokens"
)

// recordedFixtures are the perception fixtures of websurfer's
// TestObserveFixtures, by golden name; each has a recording of its CDP
// payloads (go test ./websurfer -run TestObserveFixtures -record).
var recordedFixtures = []string{
	"native", "aria", "clickable", "frames", "shadow", "overlay", "scroll", "hscroll", "clip-path",
	"partly-covered", "hidden", "disabled", "dense", "padded", "multiselect", "modal", "crowd",
	"actions-select", "actions-select-next",
}

// goldenList renders a page's elements for a golden file as websurfer's
// TestObserveFixtures does: role, name, states and location, with the
// fixture origins replaced.
func goldenList(p *Page, r *Rendered, origins []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "viewport: %s\n", p.Viewport.Position)
	for _, l := range strings.Split(r.Text, "\n") {
		if strings.HasPrefix(l, "frames: ") {
			b.WriteString(l + "\n")
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, e := range r.Elements {
		fmt.Fprintf(&b, "%s @%s\n", e.Line(), e.Where)
	}
	for _, loc := range []Location{InViewport, Above, Below, Clipped} {
		if n := r.Unlisted[loc]; n > 0 {
			fmt.Fprintf(&b, "unlisted %s: %d\n", loc, n)
		}
	}
	out := b.String()
	for i, o := range origins {
		out = strings.ReplaceAll(out, o, "{"+string(rune('A'+i))+"}")
	}
	return out
}

// TestRecordedFixtures perceives each recorded fixture with no browser and
// compares its element list with the golden the browser test checks too.
func TestRecordedFixtures(t *testing.T) {
	for _, name := range recordedFixtures {
		t.Run(name, func(t *testing.T) {
			rec, err := ReadRecording(filepath.Join("testdata", "recorded", name+".json.gz"))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Origins) != 2 {
				t.Fatalf("recording has %d origins, want 2", len(rec.Origins))
			}
			p, r, err := rec.Replay()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "golden", name+".golden")
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := goldenList(p, r, rec.Origins); got != string(want) {
				t.Errorf("elements differ from %s\n--- got\n%s\n--- want\n%s", path, got, want)
			}
			if len(r.Elements) == 0 {
				t.Error("no elements")
			}
			if n := tokens.Count(r.Text); n != r.Tokens || n > DefaultTokenBudget {
				t.Errorf("Tokens = %d, text counts %d, budget %d", r.Tokens, n, DefaultTokenBudget)
			}
		})
	}
}

// TestRecordedFixturesCovered checks every golden has a recording, so no
// fixture is left to the browser test alone.
func TestRecordedFixturesCovered(t *testing.T) {
	goldens, err := filepath.Glob(filepath.Join("testdata", "golden", "*.golden"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, n := range recordedFixtures {
		listed[n] = true
	}
	for _, g := range goldens {
		if n := strings.TrimSuffix(filepath.Base(g), ".golden"); !listed[n] {
			t.Errorf("golden %s has no recorded fixture", g)
		}
	}
	if len(goldens) != len(recordedFixtures) {
		t.Errorf("%d goldens, %d recorded fixtures", len(goldens), len(recordedFixtures))
	}
}
