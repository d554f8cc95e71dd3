package websurfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/sandbox"
)

// stuckPages adds two pages that never finish: /stuck/head never answers
// (the navigation never commits), /stuck/body sends its head and the start
// of its body and then nothing more (it commits, but never loads). Each
// reports on arrived: /stuck/head its request, /stuck/body that it is
// loading (its script's request to /stuck/loading). They stay stuck until
// the test ends.
func stuckPages(t *testing.T, f *fixture) (arrived chan string) {
	t.Helper()
	arrived = make(chan string, 16)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // before the sites close: they wait for handlers
	f.sites.Handle("/stuck/head", func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		<-release
	})
	f.sites.Handle("/stuck/body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Half</title><p>the first half<script>fetch("/stuck/loading")</script>`)
		w.(http.Flusher).Flush()
		<-release
	})
	f.sites.Handle("/stuck/loading", func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		w.WriteHeader(http.StatusNoContent)
	})
	return arrived
}

// TestCancelInterruptsNavigation cancels actions whose page never finishes
// loading, with a navigation timeout far longer than the test: only the
// cancellation can end them. Each cancelled action returns the context's
// error, and the next action on the same surfer works and shows its page,
// while the stuck server is still stuck.
func TestCancelInterruptsNavigation(t *testing.T) {
	f := newFixture(t, Config{ActionTimeout: time.Hour}, sandbox.SessionConfig{})
	arrived := stuckPages(t, f)
	// The path visited, and the one whose request says it is stuck.
	for _, path := range [][2]string{{"/stuck/head", "/stuck/head"}, {"/stuck/body", "/stuck/loading"}, {"/stuck/head", "/stuck/head"}} {
		path, signal := path[0], path[1]
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := f.s.VisitURL(ctx, f.sites.A+path)
				done <- err
			}()
			select {
			case got := <-arrived:
				if got != signal {
					t.Fatalf("the server got %s, want %s", got, signal)
				}
				// A moment more, for the visit to be waiting for the
				// page (to commit, or to load).
				time.Sleep(500 * time.Millisecond)
			case err := <-done:
				t.Fatalf("the visit of %s ended before its request arrived: %v", path, err)
			case <-time.After(time.Minute):
				t.Fatalf("the request for %s never arrived", path)
			}
			t0 := time.Now()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("the cancelled visit returned %v, want context.Canceled", err)
				}
				t.Logf("the cancelled visit returned %s after the cancel", time.Since(t0).Round(time.Millisecond))
			case <-time.After(time.Minute):
				// The navigation timeout is an hour: only the cancel could
				// have ended it.
				t.Fatalf("the cancelled visit of %s did not return", path)
			}
			res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/form.html"))
			if !strings.Contains(res.Text, `"Search form"`) {
				t.Fatalf("the visit after the cancelled one did not show its page:\n%s", res.Text)
			}
		})
	}
}

// TestCancelInterruptsReload cancels a reload of a page that loaded the
// first time and never finishes the second; the surfer stays usable.
func TestCancelInterruptsReload(t *testing.T) {
	f := newFixture(t, Config{ActionTimeout: time.Hour}, sandbox.SessionConfig{})
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	var n atomic.Int32
	f.sites.Handle("/once", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			fmt.Fprint(w, "<!doctype html><title>Once</title><p>loaded once")
			return
		}
		arrived <- struct{}{}
		<-release
	})
	f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/once"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.s.RefreshPage(ctx)
		done <- err
	}()
	select {
	case <-arrived:
	case err := <-done:
		t.Fatalf("the reload ended before its request arrived: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the reload's request never arrived")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled reload returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the cancelled reload did not return")
	}
	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/form.html"))
	if !strings.Contains(res.Text, `"Search form"`) {
		t.Fatalf("the visit after the cancelled reload did not show its page:\n%s", res.Text)
	}
}
