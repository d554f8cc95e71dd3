package websurfer

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// A fresh surfer's blank tab is observed at the viewport's size, every
// time: a new page's initial document would paint at the window's
// (1280x633) on an idle machine and sometimes at the viewport's on a busy
// one, and a replayed run would depart from its recording. With
// SkipBlank the tab keeps that document until it is observed, and gets a
// blank one of its own then.
func TestBlankTabHasViewportSize(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 4 {
		sess := browsertest.Session(t, sandbox.SessionConfig{})
		skip := i%2 == 1
		s, err := New(ctx, Config{Session: sess, SkipBlank: skip})
		if err != nil {
			t.Fatal(err)
		}
		obs, err := s.Observe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		vp := sess.Info().Viewport
		if obs.ImageWidth != vp.Width || obs.ImageHeight != vp.Height {
			t.Errorf("SkipBlank %v: the blank tab's image is %dx%d, the viewport %dx%d", skip, obs.ImageWidth, obs.ImageHeight, vp.Width, vp.Height)
		}
		if obs.URL != "about:blank" {
			t.Errorf("SkipBlank %v: the new tab shows %q, want about:blank", skip, obs.URL)
		}
		s.Close()
	}
}

// TestSkipBlankVisitsFirst: with SkipBlank, a surfer whose first act is a
// visit opens no blank page, and the visit's page is observed as usual,
// with no history to go back to.
func TestSkipBlankVisitsFirst(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := newFixture(t, Config{SkipBlank: true}, sandbox.SessionConfig{})
	if !f.s.tabs[0].initial.Load() {
		t.Fatal("the new tab was given a blank page despite SkipBlank")
	}
	var blanks atomic.Int32
	f.s.Page().OnFrameNavigated(func(fr playwright.Frame) {
		if fr.URL() == "about:blank" {
			blanks.Add(1)
		}
	})
	res, err := f.s.VisitURL(ctx, f.sites.A+"/")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Observation.URL, f.sites.A) {
		t.Fatalf("the visit observed %q, want a page of %s", res.Observation.URL, f.sites.A)
	}
	vp := f.s.Session().Info().Viewport
	if res.Observation.ImageWidth != vp.Width || res.Observation.ImageHeight != vp.Height {
		t.Errorf("the page's image is %dx%d, the viewport %dx%d", res.Observation.ImageWidth, res.Observation.ImageHeight, vp.Width, vp.Height)
	}
	if n := blanks.Load(); n != 0 {
		t.Errorf("the tab opened a blank page %d times before its first visit", n)
	}
	if _, err := f.s.HistoryBack(ctx); err == nil {
		t.Error("history_back went somewhere from the first page")
	}
}
