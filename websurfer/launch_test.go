package websurfer_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// TestLaunchRelaunchClose checks the browser Launch opens: its surfer
// visits a page, Relaunch puts a session on a new browser (the old one is
// closed), and Close closes the new one and waits for the old.
func TestLaunchRelaunchClose(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sites := browsertest.ServeSites(t)
	b, err := websurfer.Launch(ctx, websurfer.LaunchConfig{
		Sandbox: sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver()},
	})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			b.Close()
		}
	}()
	if _, err := b.Surfer().VisitURL(ctx, sites.A+"/library"); err != nil {
		t.Fatal(err)
	}
	old, oldSess := b.Sandbox(), b.Session()
	sess, err := b.Relaunch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sess != b.Session() || sess == oldSess || b.Sandbox() == old {
		t.Fatal("Session and Sandbox are not the relaunch's")
	}
	page, err := sess.NewPage(ctx)
	if err != nil {
		t.Fatalf("the new session: %v", err)
	}
	if _, err := page.Goto(sites.A + "/library"); err != nil {
		t.Fatalf("the new session: %v", err)
	}
	cur := b.Sandbox()
	closed = true
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	for _, sb := range []*sandbox.Sandbox{old, cur} {
		if sb.Browser().IsConnected() {
			t.Error("a browser is still connected after Close")
		}
	}
}

// TestRelaunchRecordingStops checks that a session recording a HAR is not
// relaunched (the recording would miss the dead browser's pages), and
// that Close still writes the recording.
func TestRelaunchRecordingStops(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sites := browsertest.ServeSites(t)
	har := filepath.Join(t.TempDir(), "rec.har")
	b, err := websurfer.Launch(ctx, websurfer.LaunchConfig{
		Sandbox: sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver()},
		Session: sandbox.SessionConfig{RecordHAR: har},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Surfer().VisitURL(ctx, sites.A+"/library"); err != nil {
		b.Close()
		t.Fatal(err)
	}
	if _, err := b.Relaunch(ctx); !errors.Is(err, websurfer.ErrRelaunchRecording) {
		t.Errorf("Relaunch while recording: %v, want ErrRelaunchRecording", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(har); err != nil || fi.Size() == 0 {
		t.Fatalf("the recording: %v", err)
	}
}

// TestLaunchBadSearchURL checks that a search URL that is not an http(s)
// URL with one %s is refused, by CheckSearchURL and by Launch (which then
// leaves no browser behind: the leak check of TestMain).
func TestLaunchBadSearchURL(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, u := range []string{"ftp://search.test/?q=%s", "https://search.test/?q=%s&r=%s", "https:///?q=%s", "https://search.test/", "%s"} {
		if websurfer.CheckSearchURL(u) == nil {
			t.Errorf("CheckSearchURL(%q) = nil", u)
		}
	}
	if err := websurfer.CheckSearchURL("https://duckduckgo.com/html/?q=%s"); err != nil {
		t.Error(err)
	}
	b, err := websurfer.Launch(ctx, websurfer.LaunchConfig{
		Sandbox: sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver()},
		Surfer:  websurfer.Config{SearchURL: "ftp://search.test/?q=%s"},
	})
	if err == nil {
		b.Close()
		t.Error("Launch with an ftp search URL succeeded")
	}
}
