package websurfer

import (
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
