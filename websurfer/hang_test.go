package websurfer

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/tools"
)

// hangPages are pages whose script never yields to the browser (issue 28).
var hangPages = map[string]string{
	"busy":  `while (true) {}`,
	"alert": `for (;;) alert("again")`,
}

// serveHangPages adds /hang/NAME for each of hangPages, and /hang/later,
// which starts a busy loop once its button is clicked.
func serveHangPages(f *fixture) {
	for name, script := range hangPages {
		f.sites.Handle("/hang/"+name, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>Never yields (%s)</title><p>Hello.</p><script>%s</script>`, name, script)
		})
	}
	f.sites.Handle("/hang/later", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Busy later</title><button onclick="while (true) {}">Spin</button>`)
	})
}

// within runs f and fails the test with a goroutine dump if f has not
// returned after a generous bound (a hang guard, not a timing check).
func within[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(3 * time.Minute):
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("%s never returned:\n%s", what, b.String())
		panic("unreachable")
	}
}

// callCtx is fixture.call with a context.
func (f *fixture) callCtx(ctx context.Context, name, args string) (*tools.Result, error) {
	return f.reg.Call(ctx, name, json.RawMessage(args), f.s.Offered()...)
}

// TestPageThatNeverYields visits pages whose script never yields (a busy
// loop, an endless run of alerts) with no deadline on the call: visit_url
// returns a tool error saying the page is not responding, the tab is
// replaced by a blank one, and the session goes on in it with its cookies.
func TestPageThatNeverYields(t *testing.T) {
	for name := range hangPages {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, Config{HangTimeout: 5 * time.Second}, sandbox.SessionConfig{})
			serveHangPages(f)
			f.visit("/actions/article.html")
			res := within(t, "visit_url of a page that never yields", func() *tools.Result {
				return f.call("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/hang/"+name))
			})
			if !res.IsError || !strings.Contains(res.Text, "not responding") || !strings.Contains(res.Text, "/hang/"+name) {
				t.Fatalf("visit_url of a page that never yields: %+v; want a tool error saying the page is not responding", res)
			}
			if n := len(f.s.tabs); n != 1 {
				t.Errorf("%d tabs after the page hung; want its tab replaced", n)
			}
			// The session goes on: the next call works, in the new tab.
			obs := within(t, "the visit after", func() *Observation { return f.visit("/actions/form.html") })
			if !strings.Contains(obs.URL, "/actions/form.html") {
				t.Errorf("the visit after the hung page is at %s", obs.URL)
			}
		})
	}
}

// TestHungPageEndsWithTheCall hangs the page with a click, under a call
// whose context ends long before the action and hang timeouts: the call returns
// soon after its context ends (it does not wait on the page), and the
// next call works.
func TestHungPageEndsWithTheCall(t *testing.T) {
	f := newFixture(t, Config{ActionTimeout: time.Hour, HangTimeout: time.Hour}, sandbox.SessionConfig{})
	serveHangPages(f)
	f.visit("/hang/later")
	id := f.id("button", "Spin")
	type out struct {
		res *tools.Result
		err error
	}
	o := within(t, "a click that hangs the page", func() out {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		res, err := f.callCtx(ctx, "click", fmt.Sprintf(`{"target_id": %d}`, id))
		return out{res, err}
	})
	if o.err != nil || !o.res.IsError || !strings.Contains(o.res.Text, "not responding") {
		t.Errorf("the click that hung the page: %+v, %v; want a tool error saying the page is not responding", o.res, o.err)
	}
	obs := within(t, "the visit after", func() *Observation { return f.visit("/actions/form.html") })
	if !strings.Contains(obs.URL, "/actions/form.html") {
		t.Errorf("the visit after the hung page is at %s", obs.URL)
	}
}

// TestObserveHungPage observes a page that stopped responding: the
// observation is of the blank tab that replaced it, with an event saying
// why.
func TestObserveHungPage(t *testing.T) {
	f := newFixture(t, Config{HangTimeout: 5 * time.Second}, sandbox.SessionConfig{})
	serveHangPages(f)
	f.visit("/actions/article.html")
	// The test's own navigation, past surf: the page hangs behind its back.
	commit := playwright.WaitUntilStateCommit
	if _, err := f.s.Page().Goto(f.sites.A+"/hang/busy", playwright.PageGotoOptions{WaitUntil: commit}); err != nil {
		t.Fatal(err)
	}
	type out struct {
		obs *Observation
		err error
	}
	o := within(t, "observing a hung page", func() out {
		obs, err := f.s.Observe(t.Context())
		return out{obs, err}
	})
	if o.err != nil {
		t.Fatalf("observing a hung page: %v; want an observation of its replacement", o.err)
	}
	found := false
	for _, e := range o.obs.Events {
		found = found || (e.Kind == "hung" && strings.Contains(e.Message, "not responding") && strings.Contains(e.URL, "/hang/busy"))
	}
	if !found {
		t.Errorf("the observation does not report the hung page: %+v\n%s", o.obs.Events, o.obs.Text())
	}
	if o.obs.URL != "about:blank" {
		t.Errorf("the observation is of %s; want the blank tab that replaced the hung one", o.obs.URL)
	}
}

// TestCloseWhileACallHangs closes the surfer while a call waits on a page
// that stopped responding, with no deadline on the call and an action
// and hang timeouts too long to matter: Close ends the call (its page is closed) and
// returns, and the call returns too.
func TestCloseWhileACallHangs(t *testing.T) {
	f := newFixture(t, Config{ActionTimeout: time.Hour, HangTimeout: time.Hour}, sandbox.SessionConfig{})
	serveHangPages(f)
	f.visit("/hang/later")
	id := f.id("button", "Spin")
	called := make(chan *tools.Result, 1)
	go func() {
		res, _ := f.callCtx(context.Background(), "click", fmt.Sprintf(`{"target_id": %d}`, id))
		called <- res
	}()
	// Close once the click holds the surfer.
	for f.s.mu.TryLock() {
		f.s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	within(t, "Close while a call hangs", func() error { return f.s.Close() })
	if res := within(t, "the hung call", func() *tools.Result { return <-called }); res == nil || !res.IsError {
		t.Errorf("the call that hung the page: %+v; want an error", res)
	}
}
