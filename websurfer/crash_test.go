package websurfer

import (
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/sandbox"
)

// crashRenderer crashes the active tab's renderer (CDP Page.crash, as an
// out-of-memory page would) and waits until surf has seen the crash.
func crashRenderer(t *testing.T, s *Surfer) {
	t.Helper()
	cs, err := s.Session().Context().NewCDPSession(s.Page())
	if err != nil {
		t.Fatal(err)
	}
	// The command gets no answer from a crashed renderer: its error is
	// expected and says nothing.
	go cs.Send("Page.crash", nil)
	deadline := time.Now().Add(30 * time.Second)
	for !activeCrashed(s) {
		if time.Now().After(deadline) {
			t.Fatal("the page did not crash")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func activeCrashed(s *Surfer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.tabs[s.active].state
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.crashed
}

// TestCrashedTabIsReplaced crashes a tab's renderer: the next action in the
// session (visit_url, as in issue 19) works in a fresh tab of the same
// context, with the session's cookies, and the crash is reported as an
// event.
func TestCrashedTabIsReplaced(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/cookie/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "surfcrash", Value: "kept", Path: "/"})
		fmt.Fprint(w, `<!doctype html><title>Cookie set</title><p>The cookie is set.</p>`)
	})
	f.sites.Handle("/cookie/show", func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Cookie("surfcrash")
		v := "none"
		if c != nil {
			v = c.Value
		}
		fmt.Fprintf(w, `<!doctype html><title>Cookie shown</title><p>surfcrash cookie: %s</p>`, htmlEscape(v))
	})
	f.visit("/cookie/set")
	crashRenderer(t, f.s)

	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/cookie/show"))
	obs := f.s.last
	if !strings.Contains(obs.VisibleText, "surfcrash cookie: kept") {
		t.Errorf("the cookie set before the crash is not sent after it:\n%s", res.Text)
	}
	var crash *Event
	for i, e := range obs.Events {
		if e.Kind == "crash" {
			crash = &obs.Events[i]
		}
	}
	if crash == nil {
		t.Fatalf("no crash event in the observation after the crash: %+v", obs.Events)
	}
	if !strings.Contains(crash.URL, "/cookie/set") || !strings.Contains(crash.Message, "replaced") {
		t.Errorf("the crash event does not say which page crashed and what surf did: %+v", *crash)
	}
	if n := len(f.s.tabs); n != 1 {
		t.Errorf("%d tabs after the crash; the crashed one should have been replaced, not added to", n)
	}
	// The new tab is gated like any other: a denied URL stays denied.
	f.fail("visit_url", `{"url": "http://denied.invalid/"}`, "")
	// And the crash is reported once.
	obs, err := f.s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range obs.Events {
		if e.Kind == "crash" {
			t.Errorf("the crash is reported again: %+v", e)
		}
	}
}

// TestCrashedTabIsObservable crashes the active tab and observes: the
// observation is of the replacement tab, with the crash event, and the
// tab's history is kept, so history_back leaves it.
func TestCrashedTabIsObservable(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/article.html")
	f.visit("/actions/form.html")
	crashRenderer(t, f.s)
	obs, err := f.s.Observe(t.Context())
	if err != nil {
		t.Fatalf("observing after a crash: %v", err)
	}
	found := false
	for _, e := range obs.Events {
		found = found || e.Kind == "crash"
	}
	if !found {
		t.Errorf("no crash event: %+v", obs.Events)
	}
	f.ok("history_back", `{}`)
	if !strings.Contains(f.s.Page().URL(), "/actions/article.html") {
		t.Errorf("history_back after the crash went to %s; want the page before the crashed one", f.s.Page().URL())
	}
}

// TestCloseAfterCrash closes a surfer whose page just crashed, before any
// action replaced it: the driver never answers the detach of the crashed
// page's session, and Close must not wait for it forever. The test's
// watchdog fails it with a goroutine dump if Close never returns; the time
// it took is logged.
func TestCloseAfterCrash(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/article.html")
	crashRenderer(t, f.s)
	done := make(chan time.Duration, 1)
	go func() {
		t0 := time.Now()
		f.s.Close()
		done <- time.Since(t0)
	}()
	select {
	case d := <-done:
		t.Logf("Close took %v after the crash", d)
	case <-time.After(3 * time.Minute):
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("Close never returned after the page crashed:\n%s", b.String())
	}
}
