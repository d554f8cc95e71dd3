package websurfer

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// askSite is a loopback server on its own address that records the paths
// it was asked for.
type askSite struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func serveAskSite(t *testing.T, ip string, h func(s *askSite, w http.ResponseWriter, r *http.Request)) *askSite {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := &askSite{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		h(s, w, r)
	}))
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *askSite) requested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

func (s *askSite) saw(path string) bool {
	for _, p := range s.requested() {
		if p == path {
			return true
		}
	}
	return false
}

// askPolicy allows 127.0.0.1 and asks for 127.0.0.2 and 127.0.0.3.
func askPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	var cfg policy.Config
	for _, r := range []struct {
		list *[]policy.HostRule
		pat  string
	}{{&cfg.Allow, "127.0.0.1"}, {&cfg.Ask, "127.0.0.2"}, {&cfg.Ask, "127.0.0.3"}} {
		hr, err := policy.ParseHostRule(r.pat)
		if err != nil {
			t.Fatal(err)
		}
		*r.list = append(*r.list, hr)
	}
	p, err := policy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// approvalSites serves the ask host 127.0.0.2 (a page with an image, a
// fetch and an image from the other ask host) and the other ask host
// 127.0.0.3, the canary.
func approvalSites(t *testing.T) (approved, other *askSite) {
	other = serveAskSite(t, "127.0.0.3", func(_ *askSite, w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Other ask host</title><p>the other host's page</p>`)
	})
	approved = serveAskSite(t, "127.0.0.2", func(_ *askSite, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/pixel.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		case "/api":
			fmt.Fprint(w, "42")
		case "/next":
			fmt.Fprint(w, `<title>Harbour ledger, page 2</title><p>the second page of the ledger</p>`)
		default:
			fmt.Fprintf(w, `<title>Harbour ledger</title><h1>Harbour ledger</h1><p>berth 7 is free on Tuesday</p>
<img src="/pixel.png" alt="pixel" width="8" height="8">
<img src="%s/beacon.png" alt="beacon" width="8" height="8">
<p id="api">api: waiting</p>
<script>fetch('/api').then(r => r.text()).then(t => { document.getElementById('api').textContent = 'api answered ' + t })</script>`, other.URL)
		}
	})
	return approved, other
}

// onePixelPNG is a 1x1 transparent PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// TestApprovedAskHostOpens: approving a navigation to an ask host opens
// that host for the session at every layer: the page (not surf's block
// page) loads, its subresources pass the request gate and the egress
// proxy, and later visits are not asked again. Another ask host, not
// approved, stays blocked, for navigations and subresources alike.
func TestApprovedAskHostOpens(t *testing.T) {
	approved, other := approvalSites(t)
	var mu sync.Mutex
	var asked []string
	s := newSurfer(t, Config{
		Session: browsertest.Session(t, sandbox.SessionConfig{Policy: askPolicy(t)}),
		Approver: policy.ApproverFunc(func(_ context.Context, d policy.Decision) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, d.Host)
			return d.Host == "127.0.0.2", nil
		}),
	})
	ctx := context.Background()
	res, err := s.VisitURL(ctx, approved.URL+"/")
	if err != nil {
		t.Fatalf("visiting the approved host: %v", err)
	}
	text := res.Text()
	if strings.Contains(text, "Blocked by surf") || !strings.Contains(text, "berth 7 is free on Tuesday") {
		t.Fatalf("the approved page did not load:\n%s", text)
	}
	for _, p := range []string{"/", "/pixel.png", "/api"} {
		waitUntil(t, "the approved host to be asked for "+p, func() bool { return approved.saw(p) })
	}
	waitUntil(t, "the fetch's answer on the page", func() bool {
		return strings.Contains(observeText(t, s), "api answered 42")
	})

	// Not asked again: the host is open for the session.
	res, err = s.VisitURL(ctx, approved.URL+"/next")
	if err != nil || !strings.Contains(res.Text(), "the second page of the ledger") {
		t.Fatalf("a second visit to the approved host: %v\n%v", err, res)
	}

	// The other ask host: asked, refused, and never reached.
	_, err = s.VisitURL(ctx, other.URL+"/")
	if !tools.IsToolError(err) || !strings.Contains(err.Error(), "denied by the approver") {
		t.Errorf("visiting the other ask host: %v, want a tool error from the approver", err)
	}
	mu.Lock()
	if strings.Join(asked, " ") != "127.0.0.2 127.0.0.3" {
		t.Errorf("the approver was asked about %q, want 127.0.0.2 once, then 127.0.0.3", asked)
	}
	mu.Unlock()
	if p := other.requested(); len(p) != 0 {
		t.Errorf("the ask host that was not approved was reached: %q", p)
	}
	// The page's own navigation to it (not through the action gate) is
	// blocked by the request gate.
	scriptNavigationBlocked(t, s, other)

	// The approval belongs to its session: another session of the same
	// browser still needs one.
	sess2 := browsertest.Session(t, sandbox.SessionConfig{Policy: askPolicy(t)})
	p2, err := sess2.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	before := len(approved.requested())
	if _, err := p2.Goto(approved.URL + "/other-session"); err != nil {
		t.Fatal(err)
	}
	if title, _ := p2.Title(); title != "Blocked by surf" {
		t.Errorf("another session reached the host approved in the first: title %q", title)
	}
	if got := approved.requested()[before:]; len(got) != 0 {
		t.Errorf("another session reached the host approved in the first: %q", got)
	}
}

// scriptNavigationBlocked has the page navigate to site by itself, past
// the action gate: the request gate must answer with its block page, and
// site must see nothing.
func scriptNavigationBlocked(t *testing.T, s *Surfer, site *askSite) {
	t.Helper()
	if _, err := s.Page().Evaluate(fmt.Sprintf("location.href = %q", site.URL+"/by-script")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the script's navigation to be blocked", func() bool {
		return strings.Contains(observeText(t, s), "Blocked by surf")
	})
	if p := site.requested(); len(p) != 0 {
		t.Errorf("the host was reached without approval: %q", p)
	}
}

// TestDeniedApprovalStaysBlocked: an approver that says no leaves the
// host closed, and asking again asks the approver again.
func TestDeniedApprovalStaysBlocked(t *testing.T) {
	approved, _ := approvalSites(t)
	n := 0
	s := newSurfer(t, Config{
		Session: browsertest.Session(t, sandbox.SessionConfig{Policy: askPolicy(t)}),
		Approver: policy.ApproverFunc(func(context.Context, policy.Decision) (bool, error) {
			n++
			return false, nil
		}),
	})
	for i := range 2 {
		_, err := s.VisitURL(context.Background(), approved.URL+"/")
		if !tools.IsToolError(err) || !strings.Contains(err.Error(), "denied by the approver") {
			t.Errorf("visit %d: %v, want a tool error from the approver", i+1, err)
		}
	}
	if n != 2 {
		t.Errorf("the approver was asked %d times, want 2", n)
	}
	if p := approved.requested(); len(p) != 0 {
		t.Errorf("the host was reached without approval: %q", p)
	}
	// The page cannot get there by itself either.
	scriptNavigationBlocked(t, s, approved)
}

func observeText(t *testing.T, s *Surfer) string {
	t.Helper()
	obs, err := s.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return obs.Text()
}

// waitUntil polls cond until it holds, failing the test after a generous
// bound (a hang, not a speed check).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
