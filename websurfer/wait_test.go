package websurfer

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/sandbox"
)

// TestSettleWaitsForScripts visits a page whose script fetches its content
// while the page loads, next to frames in other processes (another site,
// a denied host): the visit's observation shows the fetched content, and
// no request stays counted as in flight, so the next wait is not held up
// by one that the renderer never reports finished.
func TestSettleWaitsForScripts(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/wait/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Fetched</title><p id=n>waiting</p>
<iframe src="%s/wait/frame"></iframe><iframe src="http://127.0.0.3:1/denied"></iframe>
<script>fetch("/wait/data").then(r => r.text()).then(s => document.getElementById("n").textContent = s)</script>`, f.sites.B)
	})
	f.sites.Handle("/wait/frame", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><p>other site</p><img src="/wait/pixel">`)
	})
	f.sites.Handle("/wait/data", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "count 42")
	})
	// Alternating sites: the tab's main frame changes process too.
	for i, origin := range []string{f.sites.A, f.sites.B, f.sites.A, f.sites.A} {
		res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, origin+"/wait/page"))
		if !strings.Contains(res.Text, "count 42") {
			t.Fatalf("round %d: the fetched text is not in the observation:\n%s", i, res.Text)
		}
		f.s.mu.Lock()
		st := &f.s.tabs[f.s.active].state
		f.s.mu.Unlock()
		st.mu.Lock()
		stuck := len(st.rendered)
		st.mu.Unlock()
		if stuck != 0 {
			t.Fatalf("round %d: %d requests still counted in flight after the visit", i, stuck)
		}
	}
}

// TestSettleSeesWhatAReactionStarts acts on a page that reacts in itself
// (a DOM change, a scroll) and starts a slow request as it does, at once
// or from a timer: the step waits for the request, and its observation
// shows what the response brought. Surf learns that the page reacted from
// a script's result and of the request from the renderer's events, both
// in order on one session, so no pause for the event to come is needed.
func TestSettleSeesWhatAReactionStarts(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/react/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Reacts</title>
<p id=a>idle</p><button onclick="go(0)">Now</button><button onclick="go(1)">Later</button>
<p id=b style="position:fixed;bottom:0">bottom</p><div style="height:4000px"></div>
<script>
let n = 0;
function load(id, label) {
  fetch('/react/slow?n=' + (++n)).then(r => r.text()).then(s => document.getElementById(id).textContent = label + ' ' + s);
}
function go(later) {
  document.getElementById('a').textContent = 'loading';
  if (later) setTimeout(() => load('a', 'later'), 0); else load('a', 'now');
}
addEventListener('scroll', () => { if (!window.scrolled) { window.scrolled = true; load('b', 'scrolled'); } });
</script>`)
	})
	f.sites.Handle("/react/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(300 * time.Millisecond)
		fmt.Fprint(w, "fetched "+r.URL.Query().Get("n"))
	})
	for round := range 3 {
		f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/react/page"))
		if res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Now"))); !strings.Contains(res.Text, "now fetched 1") {
			t.Fatalf("round %d: the click's observation lacks what its request brought:\n%s", round, res.Text)
		}
		if res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Later"))); !strings.Contains(res.Text, "later fetched 2") {
			t.Fatalf("round %d: the click's observation lacks what its timer's request brought:\n%s", round, res.Text)
		}
		if res := f.ok("page_down", `{}`); !strings.Contains(f.s.last.Text(), "scrolled fetched 3") {
			t.Fatalf("round %d: the scroll's observation lacks what its request brought:\n%s", round, res.Text)
		}
	}
}
