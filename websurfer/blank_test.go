package websurfer

import (
	"context"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// A fresh surfer's blank tab is observed at the viewport's size, every
// time: a new page's initial document would paint at the window's
// (1280x633) on an idle machine and sometimes at the viewport's on a busy
// one, and a replayed run would depart from its recording.
func TestBlankTabHasViewportSize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 3 {
		sess := browsertest.Session(t, sandbox.SessionConfig{})
		s, err := New(ctx, Config{Session: sess})
		if err != nil {
			t.Fatal(err)
		}
		obs, err := s.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vp := sess.Info().Viewport
		if obs.ImageWidth != vp.Width || obs.ImageHeight != vp.Height {
			t.Errorf("the blank tab's image is %dx%d, the viewport %dx%d", obs.ImageWidth, obs.ImageHeight, vp.Width, vp.Height)
		}
		s.Close()
	}
}
