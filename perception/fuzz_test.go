package perception

import (
	"path/filepath"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/domsnapshot"
	"github.com/chromedp/cdproto/page"
)

// FuzzParseSnapshot feeds DOMSnapshot payloads, seeded with the recorded
// fixtures', through the whole pure pipeline: a malformed payload (indexes
// out of range, cycles, missing tables) must not panic. The seeds are
// large: fuzz with a short -fuzzminimizetime (e.g. 2s), or minimizing new
// inputs takes most of the time.
func FuzzParseSnapshot(f *testing.F) {
	for _, name := range []string{"native", "frames", "modal", "scroll"} {
		rec, err := ReadRecording(filepath.Join("testdata", "recorded", name+".json.gz"))
		if err != nil {
			f.Fatal(err)
		}
		b, err := jsonv2.Marshal(rec.Capture.Main)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"documents":[{"nodes":{"parentIndex":[5,-1,0],"nodeType":[1,1,3],"nodeName":[9,9,9],"backendNodeId":[1,2,3],"contentDocumentIndex":{"index":[0,7],"value":[0,-3]}},"layout":{"nodeIndex":[0,1,2,99],"bounds":[[0,0,10],[1,1,1,1]],"text":[-1],"styles":[[100,-2]],"stackingContexts":{"index":[]}},"textBoxes":{"layoutIndex":[7,-1,0],"bounds":[[0,0,1,1]],"start":[],"length":[]}}],"strings":["a"]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var snap domsnapshot.CaptureSnapshotResult
		if jsonv2.Unmarshal(b, &snap) != nil {
			return
		}
		c := &Capture{
			Metrics: &page.GetLayoutMetricsResult{
				CSSLayoutViewport: &page.LayoutViewport{ClientWidth: 800, ClientHeight: 600},
				CSSContentSize:    &dom.Rect{Width: 800, Height: 2000},
			},
			Main:   &snap,
			Frames: []FrameCapture{{URL: "http://frame.test/", Parent: -1, Owner: 2, Snapshot: &snap}},
		}
		p, err := Perceive(c)
		if err != nil {
			t.Fatal(err) // a capture with a snapshot and metrics is always perceived
		}
		r := Render(Number(p, 1), RenderInput{})
		if r.Text == "" {
			t.Fatal("no text")
		}
	})
}

// TestPerceiveBadInput checks a capture without a snapshot or viewport is a
// clear error, not a panic.
func TestPerceiveBadInput(t *testing.T) {
	for name, c := range map[string]*Capture{
		"nil":         nil,
		"no snapshot": {Metrics: &page.GetLayoutMetricsResult{CSSLayoutViewport: &page.LayoutViewport{}}},
		"no viewport": {Main: &domsnapshot.CaptureSnapshotResult{}, Metrics: &page.GetLayoutMetricsResult{}},
	} {
		if _, err := Perceive(c); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := ParseRecording([]byte(`{"seq":1}`)); err == nil {
		t.Error("a recording without a capture: no error")
	}
}
