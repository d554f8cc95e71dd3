package websurfer

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

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
