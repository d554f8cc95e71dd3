package perception

import (
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
	"partly-covered", "hidden", "disabled", "dense", "padded", "scaled", "inert", "canvas", "datetime", "multiselect", "modal", "crowd",
	"actions-select", "actions-select-next",
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
			if got := ElementList(p.Viewport.Position, r.Text, r.Notes, r.Elements, r.Unlisted, rec.Origins...); got != string(want) {
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

// TestRecordedSameProcessFrameBehindModal replays modal.html as Chromium's
// headless shell gave it, its cross-site frame in the page's process, in
// the two ways its accessibility tree told of the frame's nodes (ignored
// as an inert subtree; not ignored at all): either way, the element list
// is modal.golden's, the one the full browser gives with the frame in
// another process (the frame's controls left out).
func TestRecordedSameProcessFrameBehindModal(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("testdata", "golden", "modal.golden"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"modal-sameprocess", "modal-sameprocess-plain"} {
		t.Run(name, func(t *testing.T) {
			rec, err := ReadRecording(filepath.Join("testdata", "recorded", name+".json.gz"))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Capture.Frames) != 0 || len(rec.Capture.Main.Documents) < 2 {
				t.Fatalf("the recording has %d out-of-process frames and %d documents; want the frame in the page's process", len(rec.Capture.Frames), len(rec.Capture.Main.Documents))
			}
			p, r, err := rec.Replay()
			if err != nil {
				t.Fatal(err)
			}
			if got := ElementList(p.Viewport.Position, r.Text, r.Notes, r.Elements, r.Unlisted, rec.Origins...); got != string(want) {
				t.Errorf("elements differ from modal.golden\n--- got\n%s\n--- want\n%s", got, want)
			}
		})
	}
}
