package sandbox_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

var update = flag.Bool("update", false, "re-record testdata/site.har from testdata/harsite")

// harSite is a small site on one loopback address that counts every
// connection and request it gets.
type harSite struct {
	srv      *httptest.Server
	URL      string
	accepts  atomic.Int64
	requests atomic.Int64
	mu       sync.Mutex
	paths    []string
}

func newHARSite(t *testing.T, ip string) *harSite {
	t.Helper()
	s := &harSite{}
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s.srv = httptest.NewUnstartedServer(s)
	s.srv.Listener = countingListener{ln, &s.accepts}
	s.srv.Start()
	t.Cleanup(s.srv.Close)
	s.URL = s.srv.URL
	return s
}

// hits is every connection and request the site got.
func (s *harSite) hits() int64 { return s.accepts.Load() + s.requests.Load() }

func (s *harSite) reset() {
	s.accepts.Store(0)
	s.requests.Store(0)
	s.mu.Lock()
	s.paths = nil
	s.mu.Unlock()
}

func (s *harSite) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("%d connections, %d requests %v", s.accepts.Load(), s.requests.Load(), s.paths)
}

func (s *harSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	s.mu.Lock()
	s.paths = append(s.paths, r.URL.RequestURI())
	s.mu.Unlock()
	w.Header().Set("Access-Control-Allow-Origin", "*")
	q := r.URL.Query()
	switch r.URL.Path {
	case "/":
		fmt.Fprint(w, `<!doctype html><title>Home</title><link rel=stylesheet href="/style.css">
<h1>Recorded home</h1><img id=img src="/img.png"><p id=api>waiting</p>
<script>fetch("/api?x=1").then(r => r.text()).then(t => document.getElementById("api").textContent = t)</script>`)
	case "/style.css":
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, `h1 { color: rgb(1, 2, 3) }`)
	case "/img.png":
		w.Header().Set("Content-Type", "image/png")
		w.Write(onePixelPNG)
	case "/api":
		fmt.Fprint(w, "api-ok")
	case "/r":
		http.Redirect(w, r, "/final", http.StatusFound)
	case "/final":
		fmt.Fprint(w, `<!doctype html><title>Final</title><p>redirected</p><a id=pop href="/popup" target=_blank>open</a>`)
	case "/popup":
		fmt.Fprint(w, `<!doctype html><title>Popup</title><p>a new tab`)
	case "/hop":
		http.Redirect(w, r, q.Get("to"), http.StatusFound)
	case "/mixed":
		// An image from another site, and a fetch that this site
		// redirects to another site.
		fmt.Fprintf(w, `<!doctype html><title>Mixed</title><img id=img src="%s/img.png">
<p id=api>waiting</p>
<script>fetch("/hop?to=%s/api").then(r => r.text(), e => "failed").then(t => document.getElementById("api").textContent = t)</script>`,
			q.Get("other"), q.Get("other"))
	case "/echo":
		fmt.Fprintf(w, `<!doctype html><title>Echo</title><p id=v>%s</p>`, q.Get("v"))
	default:
		http.NotFound(w, r)
	}
}

func goTo(t *testing.T, p playwright.Page, url string) {
	t.Helper()
	if _, err := p.Goto(url); err != nil {
		t.Fatalf("visiting %s: %v", url, err)
	}
}

func waitText(t *testing.T, p playwright.Page, sel, want string) {
	t.Helper()
	if err := p.Locator(sel).WaitFor(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var got string
	for time.Now().Before(deadline) {
		got, _ = p.Locator(sel).TextContent()
		if got == want {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s on %s reads %q; want %q", sel, p.URL(), got, want)
}

// record runs visit in a session that records to a new HAR file and
// returns the file once the session is closed.
func record(t *testing.T, cfg sandbox.SessionConfig, visit func(p playwright.Page)) string {
	t.Helper()
	cfg.RecordHAR = filepath.Join(t.TempDir(), "site.har")
	sess, err := browsertest.Sandbox(t).NewSession(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sess.NewPage(context.Background())
	if err != nil {
		sess.Close()
		t.Fatal(err)
	}
	visit(p)
	if err := sess.Close(); err != nil {
		t.Fatalf("closing the recording session: %v", err)
	}
	return cfg.RecordHAR
}

// settle waits until the denials of sess stop coming, and returns them.
func settle(sess *sandbox.Session, want int) []sandbox.Denial {
	var ds []sandbox.Denial
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && len(ds) < want {
		ds = append(ds, sess.TakeDenials()...)
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	return append(ds, sess.TakeDenials()...)
}

func checkHomeReplayed(t *testing.T, p playwright.Page, site string) {
	t.Helper()
	goTo(t, p, site+"/")
	waitText(t, p, "#api", "api-ok")
	w, err := p.Locator("#img").Evaluate("img => img.complete && img.naturalWidth", nil)
	if err != nil || w != 1 {
		t.Errorf("the recorded image: naturalWidth %v, %v; want 1", w, err)
	}
	color, err := p.Locator("h1").Evaluate("h => getComputedStyle(h).color", nil)
	if err != nil || color != "rgb(1, 2, 3)" {
		t.Errorf("the recorded style sheet: h1 color %v, %v", color, err)
	}
	goTo(t, p, site+"/r")
	if title, _ := p.Title(); title != "Final" || p.URL() != site+"/final" {
		t.Errorf("the recorded redirect ends at %s (%q); want %s/final", p.URL(), title, site)
	}
	if pop := openPopup(t, p); pop != nil {
		if title, _ := pop.Title(); title != "Popup" {
			t.Errorf("the recorded popup shows %q", title)
		}
	}
}

// openPopup clicks #pop and returns the tab it opens, loaded.
func openPopup(t *testing.T, p playwright.Page) playwright.Page {
	t.Helper()
	pop, err := p.ExpectPopup(func() error { return p.Locator("#pop").Click() })
	if err != nil {
		t.Errorf("opening the popup: %v", err)
		return nil
	}
	if err := pop.WaitForLoadState(); err != nil {
		t.Errorf("loading the popup: %v", err)
	}
	return pop
}

// TestRecordThenReplayOffline records a site, stops it, and replays the
// recording: everything the site served comes from the file; what it
// does not hold is refused and reported as not in recording.
func TestRecordThenReplayOffline(t *testing.T) {
	site := newHARSite(t, "127.0.0.1")
	har := record(t, sandbox.SessionConfig{}, func(p playwright.Page) {
		goTo(t, p, site.URL+"/")
		waitText(t, p, "#api", "api-ok")
		goTo(t, p, site.URL+"/r")
		openPopup(t, p)
	})
	info, err := sandbox.InspectHAR(har)
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 7 || !slices.Equal(info.Origins, []string{site.URL}) || info.Comment != "" {
		t.Errorf("recording: %+v; want the 7 responses of %s (/, style, image, api, redirect, final, popup)", info, site.URL)
	}
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(bytes.ToLower(raw), []byte("proxy-authorization")) {
		t.Error("the recording holds the session proxy's credentials")
	}
	site.srv.Close()

	sess := browsertest.Session(t, sandbox.SessionConfig{ReplayHAR: har})
	if got := sess.Info().ReplayHAR; got != har {
		t.Errorf("Info().ReplayHAR = %q; want %q", got, har)
	}
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkHomeReplayed(t, p, site.URL)
	if ds := sess.TakeDenials(); len(ds) != 0 {
		t.Errorf("replaying what was recorded was refused: %+v", ds)
	}

	// Not in the recording: a navigation and a subresource.
	resp, err := p.Goto(site.URL + "/missing")
	if err != nil || resp.Status() != 404 {
		t.Errorf("a navigation that is not in the recording: %v; want a 404", err)
	}
	if title, _ := p.Title(); title != "Not in recording" {
		t.Errorf("a navigation that is not in the recording shows %q", title)
	}
	if body, _ := p.Locator("body").TextContent(); !strings.Contains(body, site.URL+"/missing") {
		t.Errorf("the not-in-recording page does not name the URL: %q", body)
	}
	goTo(t, p, site.URL+"/")
	res, err := p.Evaluate(`u => fetch(u).then(() => "fetched", () => "refused")`, site.URL+"/nope?q=1")
	if err != nil || res != "refused" {
		t.Errorf("fetch of a URL not in the recording: %v, %v; want refused", res, err)
	}
	ds := settle(sess, 2)
	if len(ds) != 2 {
		t.Fatalf("denials = %+v; want the navigation and the fetch", ds)
	}
	for i, want := range []struct {
		url string
		nav bool
	}{{site.URL + "/missing", true}, {site.URL + "/nope?q=1", false}} {
		d := ds[i]
		if d.Layer != sandbox.LayerReplay || d.URL != want.url || d.Navigation != want.nav || d.Host != "127.0.0.1" ||
			d.Decision.Verdict != policy.Deny || d.Decision.Rule != sandbox.RuleReplay ||
			d.Decision.Reason != "not in recording: "+want.url {
			t.Errorf("denial %d = %+v; want %s not in recording (navigation %v)", i, d, want.url, want.nav)
		}
	}
}

// TestReplayOpensNoConnection: with the recorded site still up, replay
// never reaches it, neither for what the recording holds nor for what it
// does not.
func TestReplayOpensNoConnection(t *testing.T) {
	site := newHARSite(t, "127.0.0.1")
	har := record(t, sandbox.SessionConfig{}, func(p playwright.Page) {
		goTo(t, p, site.URL+"/")
		waitText(t, p, "#api", "api-ok")
		goTo(t, p, site.URL+"/r")
		openPopup(t, p)
	})
	if site.hits() == 0 {
		t.Fatal("the site saw nothing while recording")
	}
	site.reset()
	sess := browsertest.Session(t, sandbox.SessionConfig{ReplayHAR: har})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	checkHomeReplayed(t, p, site.URL)
	goTo(t, p, site.URL+"/missing")
	goTo(t, p, site.URL+"/")
	p.Evaluate(`u => Promise.allSettled([fetch(u + "/nope"), new Promise((ok, fail) => {
		const ws = new WebSocket(u.replace("http", "ws") + "/ws"); ws.onclose = ok; ws.onerror = ok })])`, site.URL)
	ds := settle(sess, 3)
	if site.hits() != 0 {
		t.Errorf("replay reached the recorded site: %v", site)
	}
	for _, d := range ds {
		if d.Layer != sandbox.LayerReplay {
			t.Errorf("denial %+v; want only replay denials", d)
		}
	}
	if len(ds) != 3 {
		t.Errorf("denials = %+v; want /missing, /nope and the websocket", ds)
	}
}

// TestReplayKeepsThePolicy: what the recording holds from a site the
// replaying session's policy denies stays denied: requests, navigations
// and redirect hops inside the recording.
func TestReplayKeepsThePolicy(t *testing.T) {
	a := newHARSite(t, "127.0.0.1")
	b := newHARSite(t, "127.0.0.3")
	har := record(t, sandbox.SessionConfig{}, func(p playwright.Page) {
		goTo(t, p, a.URL+"/mixed?other="+b.URL)
		waitText(t, p, "#api", "api-ok")
		goTo(t, p, b.URL+"/final")
		goTo(t, p, a.URL+"/hop?to="+b.URL+"/final")
	})
	info, err := sandbox.InspectHAR(har)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(info.Origins, []string{a.URL, b.URL}) {
		t.Fatalf("recorded origins %v; want both sites", info.Origins)
	}
	a.reset()
	b.reset()

	onlyA := policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}})
	sess := browsertest.Session(t, sandbox.SessionConfig{ReplayHAR: har, Policy: onlyA})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	goTo(t, p, a.URL+"/mixed?other="+b.URL)
	waitText(t, p, "#api", "failed")
	if w, _ := p.Locator("#img").Evaluate("img => img.naturalWidth", nil); w != 0 {
		t.Errorf("the denied site's recorded image loaded (naturalWidth %v)", w)
	}
	goTo(t, p, b.URL+"/final")
	if title, _ := p.Title(); title != "Blocked by surf" {
		t.Errorf("navigating to the denied site shows %q; want the block page", title)
	}
	goTo(t, p, a.URL+"/hop?to="+b.URL+"/final")
	if title, _ := p.Title(); title != "Blocked by surf" {
		t.Errorf("a recorded redirect to the denied site shows %q; want the block page", title)
	}
	ds := settle(sess, 4)
	type key struct {
		layer, url string
		nav        bool
	}
	var got []key
	for _, d := range ds {
		if d.Decision.Verdict != policy.Deny || d.Host != "127.0.0.3" {
			t.Errorf("denial %+v; want the policy's, of 127.0.0.3", d)
		}
		got = append(got, key{d.Layer, d.URL, d.Navigation})
	}
	want := []key{
		{sandbox.LayerRequest, b.URL + "/img.png", false},
		{sandbox.LayerRedirect, b.URL + "/api", false},
		{sandbox.LayerRequest, b.URL + "/final", true},
		{sandbox.LayerRedirect, b.URL + "/final", true},
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("no denial %+v among %+v", w, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("denials %+v; want %+v", got, want)
	}
	if a.hits()+b.hits() != 0 {
		t.Errorf("replay reached the sites: %v; %v", a, b)
	}
}

// TestReplayPolicyWithoutRequestGate: with the request gate off, the
// replay's own route still applies the policy to what it answers.
func TestReplayPolicyWithoutRequestGate(t *testing.T) {
	a := newHARSite(t, "127.0.0.1")
	b := newHARSite(t, "127.0.0.3")
	har := record(t, sandbox.SessionConfig{}, func(p playwright.Page) {
		goTo(t, p, a.URL+"/")
		waitText(t, p, "#api", "api-ok")
		goTo(t, p, b.URL+"/final")
		goTo(t, p, a.URL+"/hop?to="+b.URL+"/final")
	})
	a.reset()
	b.reset()
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(),
		Resolver: browsertest.Resolver(), DisableRequestGate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	onlyA := policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}})
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{ReplayHAR: har, Policy: onlyA})
	if err != nil {
		t.Fatal(err)
	}
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	goTo(t, p, a.URL+"/")
	waitText(t, p, "#api", "api-ok")
	p.Evaluate(`u => new Promise(done => { const ws = new WebSocket(u); ws.onclose = done; ws.onerror = done })`,
		strings.Replace(a.URL, "http", "ws", 1)+"/ws")
	for _, u := range []string{b.URL + "/final", a.URL + "/hop?to=" + b.URL + "/final"} {
		goTo(t, p, u)
		if title, _ := p.Title(); title != "Blocked by surf" {
			t.Errorf("%s shows %q; want the block page", u, title)
		}
	}
	ds := settle(sess, 3)
	if len(ds) != 3 || ds[0].Layer != sandbox.LayerReplay || ds[1].Layer != sandbox.LayerRequest || ds[2].Layer != sandbox.LayerRedirect {
		t.Errorf("denials = %+v; want the websocket (not in recording), the request and the redirect hop", ds)
	}
	if a.hits()+b.hits() != 0 {
		t.Errorf("replay reached the sites: %v; %v", a, b)
	}
}

// TestRecordingRedactsSecrets: the policy's secrets never reach the file.
func TestRecordingRedactsSecrets(t *testing.T) {
	site := newHARSite(t, "127.0.0.1")
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{{Host: "127.0.0.1"}},
		Secrets: []policy.Secret{{Name: "token", Value: "hunter2-very-secret", Hosts: []policy.HostRule{{Host: "127.0.0.1"}}}},
	})
	har := record(t, sandbox.SessionConfig{Policy: pol}, func(p playwright.Page) {
		goTo(t, p, site.URL+"/echo?v=hunter2-very-secret")
		waitText(t, p, "#v", "hunter2-very-secret")
	})
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Error("the recording holds a secret")
	}
	if !bytes.Contains(raw, []byte(policy.Placeholder("token"))) {
		t.Error("the recording lacks the secret's placeholder")
	}
	if _, err := sandbox.InspectHAR(har); err != nil {
		t.Errorf("the redacted recording does not read back: %v", err)
	}
}

func TestHARSessionConfigErrors(t *testing.T) {
	sb := browsertest.Sandbox(t)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	f, _ := zw.Create("har.har")
	f.Write([]byte(`{"log":{"entries":[]}}`))
	zw.Close()
	good := write("good.har", `{"log":{"entries":[]}}`)
	for name, c := range map[string]struct {
		cfg  sandbox.SessionConfig
		want string
	}{
		"both":           {sandbox.SessionConfig{RecordHAR: filepath.Join(dir, "x.har"), ReplayHAR: good}, "not both"},
		"no dir":         {sandbox.SessionConfig{RecordHAR: filepath.Join(dir, "missing", "x.har")}, "does not exist"},
		"record dir":     {sandbox.SessionConfig{RecordHAR: dir}, "is a directory"},
		"missing":        {sandbox.SessionConfig{ReplayHAR: filepath.Join(dir, "missing.har")}, "no such file"},
		"not json":       {sandbox.SessionConfig{ReplayHAR: write("bad.har", "<html>")}, "not a HAR file"},
		"no entries":     {sandbox.SessionConfig{ReplayHAR: write("empty.har", `{"log":{}}`)}, "not a HAR file"},
		"zip":            {sandbox.SessionConfig{ReplayHAR: write("z.har", zipped.String())}, "zip archive"},
		"attached files": {sandbox.SessionConfig{ReplayHAR: write("attach.har", `{"log":{"entries":[{"request":{"method":"GET","url":"http://127.0.0.1/"},"response":{"status":200,"headers":[],"content":{"_file":"../../etc/passwd"}}}]}}`)}, "embedded content"},
	} {
		sess, err := sb.NewSession(context.Background(), c.cfg)
		if err == nil {
			sess.Close()
			t.Errorf("%s: NewSession succeeded; want an error", name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q; want it to say %q", name, err, c.want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.har.*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestHARFixture replays testdata/site.har, the recording of
// testdata/harsite, offline. Re-record it with
//
//	go test ./sandbox -run TestHARFixture -update
func TestHARFixture(t *testing.T) {
	fixture := filepath.Join("testdata", "site.har")
	if *update {
		srv := httptest.NewServer(http.FileServer(http.Dir(filepath.Join("testdata", "harsite"))))
		tmp := record(t, sandbox.SessionConfig{}, func(p playwright.Page) {
			goTo(t, p, srv.URL+"/")
			waitText(t, p, "#status", "loaded 3 books")
			goTo(t, p, srv.URL+"/about.html")
		})
		srv.Close()
		b, err := os.ReadFile(tmp)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(fixture, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	info, err := sandbox.InspectHAR(fixture)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Origins) != 1 {
		t.Fatalf("the fixture's origins %v; want one", info.Origins)
	}
	origin := info.Origins[0]
	sess := browsertest.Session(t, sandbox.SessionConfig{ReplayHAR: fixture})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	goTo(t, p, origin+"/")
	waitText(t, p, "#status", "loaded 3 books")
	if n, _ := p.Locator("#books li").Count(); n != 3 {
		t.Errorf("%d books listed; want 3", n)
	}
	if w, _ := p.Locator("img").Evaluate("img => img.naturalWidth", nil); w != 64 {
		t.Errorf("the logo's naturalWidth is %v; want 64", w)
	}
	if err := p.Locator("text=About").Click(); err != nil {
		t.Fatal(err)
	}
	if err := p.WaitForURL(origin + "/about.html"); err != nil {
		t.Fatal(err)
	}
	if h, _ := p.Locator("h1").TextContent(); h != "About the fixture" {
		t.Errorf("about page heading %q", h)
	}
	if ds := sess.TakeDenials(); len(ds) != 0 {
		t.Errorf("replaying the fixture was refused: %+v", ds)
	}
	// The file is what surf writes: indented JSON, parseable as a whole.
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Errorf("the fixture is not JSON: %v", err)
	}
}

// A session records what it loads into a HAR file; a later session
// replays the file offline (the recorded server is gone) and reports what
// the recording does not hold.
func ExampleSessionConfig_recordAndReplay() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>recorded page</title>`)
	}))
	dir, err := os.MkdirTemp("", "surf-har-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	har := filepath.Join(dir, "site.har")

	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Config{
		Env:    sandbox.EnvFrom(os.Getenv),
		Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close()

	rec, err := sb.NewSession(ctx, sandbox.SessionConfig{RecordHAR: har})
	if err != nil {
		log.Fatal(err)
	}
	page, err := rec.NewPage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := page.Goto(srv.URL + "/"); err != nil {
		log.Fatal(err)
	}
	if err := rec.Close(); err != nil { // writes the recording
		log.Fatal(err)
	}
	srv.Close()
	info, err := sandbox.InspectHAR(har)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Entries, "response recorded")

	replay, err := sb.NewSession(ctx, sandbox.SessionConfig{ReplayHAR: har})
	if err != nil {
		log.Fatal(err)
	}
	defer replay.Close()
	page, err = replay.NewPage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	for _, path := range []string{"/", "/elsewhere"} {
		if _, err := page.Goto(srv.URL + path); err != nil {
			log.Fatal(err)
		}
		title, _ := page.Title()
		fmt.Println(path, title)
	}
	for _, d := range replay.TakeDenials() {
		fmt.Println(d.Layer, strings.TrimPrefix(d.Decision.Reason, "not in recording: "+srv.URL))
	}
	// Output:
	// 1 response recorded
	// / recorded page
	// /elsewhere Not in recording
	// replay /elsewhere
}
