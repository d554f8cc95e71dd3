package websurfer

import (
	"fmt"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

// TestScaledFrameForms fills and submits the forms inside frames in
// containers a CSS transform scales (by half, by 1.6 and moved, and a
// cross-origin frame nesting two more at 0.7) through the model's tools:
// the fields are found and the clicks land on the Send buttons only if the
// frames' boxes follow the transform.
func TestScaledFrameForms(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/perception/scaled.html")
	f.submitFrameForms("who=same", "who=cross", "who=big", "who=nested-same", "who=nested-cross")
}

// TestInertOverlayLetsClicksThrough checks that an inert overlay, which
// the browser's hit test passes through, covers nothing: the button under
// it is listed on screen and its click reaches the page, and so do the
// fields of a cross-origin frame under another; an overlay that is not
// inert still covers its button.
func TestInertOverlayLetsClicksThrough(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/perception/inert.html")
	for _, e := range obs.Elements {
		if e.Name == "Refresh prices" {
			t.Errorf("the inert overlay's own button is listed: %s", e.Line())
		}
	}
	pay := f.id("button", "Pay now")
	if w := f.where("Pay now"); w != InViewport {
		t.Fatalf("the button under the inert overlay is %s, want %s:\n%s", w, InViewport, obs.Text())
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, pay))
	if got := f.js(`document.getElementById('result').textContent`); got != "paid" {
		t.Errorf("the click did not reach the button under the inert overlay: result %q", got)
	}
	f.submitFrameForms("who=under-veil")
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Blocked button")), "covered")
}

// TestTransparentHitRegionOverCanvas checks that a transparent (opacity:
// 0) button over a canvas that draws it, and a transparent hit region over
// an SVG, are listed and their clicks reach the page, while a transparent
// text field (a honeypot) and a transparent link over plain text are not
// listed.
func TestTransparentHitRegionOverCanvas(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/perception/canvas.html")
	for _, e := range obs.Elements {
		if e.Name == "Website" || e.Name == "terms" {
			t.Errorf("a hidden transparent element is listed: %s", e.Line())
		}
	}
	for _, c := range []struct{ name, want string }{{"Play", "playing"}, {"Next slide", "next"}} {
		id := f.id("button", c.name)
		if w := f.where(c.name); w != InViewport {
			t.Fatalf("%s is %s, want %s", c.name, w, InViewport)
		}
		f.ok("click", fmt.Sprintf(`{"target_id": %d}`, id))
		if got := f.js(`document.getElementById('result').textContent`); got != c.want {
			t.Errorf("clicking %s: result %q, want %q", c.name, got, c.want)
		}
	}
}
