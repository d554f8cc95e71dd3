package sandbox_test

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/template"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"golang.org/x/net/websocket"
)

// The adversarial suite: fixture pages under testdata/adversarial, served
// from allowed loopback origins, try to reach a canary on 127.0.0.2 that
// the session's policy does not allow. Every attack gets its own canary
// (a TCP listener counting connections and HTTP requests, and a UDP
// listener counting packets) and its own session, so what reached the
// canary and which layer reported denials is known per attack.

// canary counts everything that reaches it.
type canary struct {
	ip       string
	port     int
	udpPort  int
	accepts  atomic.Int64
	requests atomic.Int64
	packets  atomic.Int64
	mu       sync.Mutex
	paths    []string
	srv      *http.Server
	udp      net.PacketConn
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// newCanary listens on 127.0.0.2 (TCP and UDP) until the test ends.
func newCanary(t testing.TB) *canary {
	t.Helper()
	c := &canary{ip: "127.0.0.2"}
	ln, err := net.Listen("tcp", c.ip+":0")
	if err != nil {
		t.Fatalf("canary: %v (Linux routes all of 127/8 to lo)", err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.requests.Add(1)
		c.mu.Lock()
		c.paths = append(c.paths, r.Method+" "+r.URL.Path)
		c.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>canary</title><p>the canary was reached`)
	})}
	go c.srv.Serve(countingListener{ln, &c.accepts})
	c.udp, err = net.ListenPacket("udp", c.ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	c.udpPort = c.udp.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, _, err := c.udp.ReadFrom(buf); err != nil {
				return
			}
			c.packets.Add(1)
		}
	}()
	t.Cleanup(func() { c.srv.Close(); c.udp.Close() })
	return c
}

func (c *canary) origin() string { return "http://" + c.ip + ":" + strconv.Itoa(c.port) }

// hits is every connection, request and packet that reached the canary.
func (c *canary) hits() int64 { return c.accepts.Load() + c.requests.Load() + c.packets.Load() }

func (c *canary) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%d connections, %d requests %v, %d udp packets", c.accepts.Load(), c.requests.Load(), c.paths, c.packets.Load())
}

// fixtures serves testdata/adversarial from two allowed sites, 127.0.0.1
// (A) and 127.0.0.3 (B), and logs every request.
type fixtures struct {
	a, b *httptest.Server
	mu   sync.Mutex
	log  map[string]int
}

func listen(t testing.TB, ip string, h http.Handler) *httptest.Server {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func newFixtures(t testing.TB) *fixtures {
	f := &fixtures{log: map[string]int{}}
	f.a = listen(t, "127.0.0.1", f)
	f.b = listen(t, "127.0.0.3", f)
	return f
}

func (f *fixtures) hit(p string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.log[p]
}

func (f *fixtures) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.log[r.URL.Path]++
	f.mu.Unlock()
	q := r.URL.Query()
	switch {
	case strings.HasPrefix(r.URL.Path, "/a/"):
		f.serveFixture(w, r)
	case r.URL.Path == "/hop":
		n, _ := strconv.Atoi(q.Get("n"))
		code, _ := strconv.Atoi(q.Get("code"))
		if code < 300 || code > 399 {
			code = 302
		}
		to := q.Get("to")
		if n > 1 {
			to = fmt.Sprintf("/hop?n=%d&code=%d&to=%s", n-1, code, url.QueryEscape(to))
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		http.Redirect(w, r, to, code)
	case strings.HasPrefix(r.URL.Path, "/ok/"):
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch path.Ext(r.URL.Path) {
		case ".png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		case ".css":
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "p { color: black }")
		case ".js":
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, "void 0;")
		case ".woff":
			w.Header().Set("Content-Type", "font/woff")
			w.Write([]byte("not really a font"))
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "ok")
		}
	case r.URL.Path == "/sse":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: ok\n\n")
	case r.URL.Path == "/ws":
		websocket.Server{Handler: func(ws *websocket.Conn) { io.Copy(ws, ws) }}.ServeHTTP(w, r)
	default:
		http.NotFound(w, r)
	}
}

// onePixelPNG is a 1x1 transparent PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")

// fixtureData is what the fixture templates see; see
// testdata/adversarial/README.md.
type fixtureData struct {
	A, B, C        string
	APort, CPort   int
	CDecimal, CHex string
	UDP            int
	Rebind, Attack string
	Q              string
}

func (f *fixtures) serveFixture(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/a/")
	if name != path.Base(name) {
		http.NotFound(w, r)
		return
	}
	src, err := os.ReadFile(filepath.Join("..", "testdata", "adversarial", name))
	if err != nil {
		http.NotFound(w, r)
		return
	}
	tmpl, err := template.New(name).Funcs(template.FuncMap{"q": url.QueryEscape}).Parse(string(src))
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	q := r.URL.Query()
	cport, _ := strconv.Atoi(q.Get("canary"))
	udp, _ := strconv.Atoi(q.Get("udp"))
	ip := netip.MustParseAddr("127.0.0.2").As4()
	num := uint32(ip[0])<<24 | uint32(ip[1])<<16 | uint32(ip[2])<<8 | uint32(ip[3])
	pass := url.Values{"canary": {q.Get("canary")}, "udp": {q.Get("udp")}, "attack": {q.Get("attack")}}
	data := fixtureData{
		A: f.a.URL, B: f.b.URL, C: "http://127.0.0.2:" + strconv.Itoa(cport),
		APort: f.a.Listener.Addr().(*net.TCPAddr).Port, CPort: cport,
		CDecimal: strconv.FormatUint(uint64(num), 10), CHex: fmt.Sprintf("0x%08x", num),
		UDP: udp, Rebind: "http://rebind.test:" + strconv.Itoa(cport), Attack: q.Get("attack"),
		Q: pass.Encode(),
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if strings.HasSuffix(name, ".js") {
		ct = "text/javascript"
	}
	w.Header().Set("Content-Type", ct)
	if err := tmpl.Execute(w, data); err != nil {
		fmt.Fprintf(w, "<!-- template: %v -->", err)
	}
}

// An outcome is what a configuration does about an attack.
type outcome string

const (
	stopped outcome = "stopped" // the canary saw nothing
	reached outcome = "REACHED" // the canary saw something
	either  outcome = "either"  // not asserted: depends on timing
)

// attack is one adversarial fixture, with what each layer alone does
// about it (measured; the package documentation quotes this table). With
// all layers on, every attack is stopped.
type attack struct {
	name  string
	page  string // fixture under /a/
	query string // extra query parameters
	// gotoURL, if set, is navigated to instead of a page (a URL the model
	// might ask for), built from the fixtures and the canary.
	gotoURL func(f *fixtures, c *canary) string
	// ok are the paths under /ok/<name>/ the page must still reach.
	ok []string
	// none, gate and proxy: the outcome with no layer, with only the
	// request gate, with only the egress proxy (and its Chromium flags).
	none, gate, proxy outcome
	// control: with every layer on and the canary allowed, the attack
	// reaches it (so the attack is real and the canary check can fail).
	// Stopped for attacks stopped whatever the host: service workers
	// (blocked for the context), data: navigations (denied by the
	// policy's scheme rules; a data: frame is replaced right after it
	// commits, so whether its own first requests leave is a race).
	control outcome
	settle  time.Duration
}

// S and R keep the table narrow.
const (
	S = stopped
	R = reached
	E = either
)

var attacks = []attack{
	// name, page, query, gotoURL, ok, none, gate, proxy, control (all
	// layers, canary allowed), settle
	{"nav-redirect-301", "nav-redirect.html", "code=301", nil, []string{"before"}, R, S, S, R, 0},
	{"nav-redirect-302", "nav-redirect.html", "code=302", nil, []string{"before"}, R, S, S, R, 0},
	{"nav-redirect-307", "nav-redirect.html", "code=307", nil, []string{"before"}, R, S, S, R, 0},
	{"nav-redirect-308", "nav-redirect.html", "code=308", nil, []string{"before"}, R, S, S, R, 0},
	{"goto-redirect", "", "", func(f *fixtures, c *canary) string {
		return f.a.URL + "/hop?n=2&code=302&to=" + url.QueryEscape(c.origin()+"/c/goto-redirect/chain")
	}, nil, R, S, S, R, 0},
	{"goto-canary", "", "", func(f *fixtures, c *canary) string { return c.origin() + "/c/goto-canary/direct" },
		nil, R, S, S, R, 0},
	{"meta-refresh", "meta-refresh.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	{"js-location", "js-location.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	{"window-open", "window-open.html", "", nil, []string{"popup-allowed"}, R, S, S, R, 4 * time.Second},
	{"iframe", "iframe.html", "", nil, []string{"frame"}, R, S, S, R, 0},
	// The first subresources of an out-of-process iframe start before
	// surf's interception is on its target: their redirect hops are the
	// proxy's.
	{"oopif", "oopif.html", "", nil, []string{"inner.png", "inner-late"}, R, E, S, R, 4 * time.Second},
	{"subresources", "subresources.html", "", nil, []string{"img.png", "style.css", "script.js", "bg.png", "font.woff"}, R, S, S, R, 0},
	{"fetch-xhr-beacon", "fetch-xhr-beacon.html", "", nil, []string{"fetch", "xhr", "beacon"}, R, S, S, R, 0},
	{"websocket", "websocket.html", "", nil, []string{"echoed"}, R, S, S, R, 0},
	{"eventsource", "eventsource.html", "", nil, []string{"got-ok"}, R, S, S, R, 0},
	{"service-worker", "service-worker.html", "", nil, []string{"refused"}, S, S, S, S, 0},
	{"link-hints", "link-hints.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	{"form-post", "form-post.html", "", nil, []string{"post"}, R, S, S, R, 0},
	{"userinfo", "userinfo.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	{"ip-literals", "ip-literals.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	{"data-url", "data-url.html", "", nil, []string{"img.png"}, R, S, S, E, 0},
	{"goto-data", "", "", func(f *fixtures, c *canary) string {
		return "data:text/html,<title>data</title><img src='" + c.origin() + "/c/goto-data/img.png'>"
	}, nil, E, S, S, S, 0},
	{"blob-url", "blob-url.html", "", nil, []string{"from-blob.png"}, R, S, S, R, 0},
	{"javascript-url", "javascript-url.html", "", nil, []string{"img.png"}, R, S, S, R, 0},
	// A dedicated worker's fetches are the page's (the gate sees them),
	// its WebSockets are not (Playwright's WebSocket route is a page
	// script).
	{"worker", "worker.html", "", nil, []string{"worker-fetch", "worker-said-ok"}, R, R, S, R, 0},
	// Shared workers are targets Playwright does not intercept.
	{"shared-worker", "shared-worker.html", "", nil, []string{"shared-said-ok"}, R, R, S, R, 0},
	// ICE: STUN over UDP, TURN over TCP; neither is a request.
	{"webrtc", "webrtc.html", "", nil, []string{"rtc"}, R, R, S, R, 4 * time.Second},
	// An allowed name that resolves to a private address.
	{"rebind", "rebind.html", "", nil, []string{"img.png"}, R, R, S, R, 0},
}

// attackPolicy allows the two fixture sites and the name rebind.test (which
// resolves to the canary), plus the canary itself when allowCanary.
func attackPolicy(allowCanary bool) *policy.Policy {
	rules := []string{"127.0.0.1", "127.0.0.3", "rebind.test"}
	if allowCanary {
		rules = append(rules, "127.0.0.2")
	}
	var cfg policy.Config
	for _, r := range rules {
		hr, err := policy.ParseHostRule(r)
		if err != nil {
			panic(err)
		}
		cfg.Allow = append(cfg.Allow, hr)
	}
	return policy.MustNew(cfg)
}

// result is what one attack did.
type result struct {
	canary  *canary
	denials []sandbox.Denial
	okMiss  []string // allowed paths the page did not reach
}

func (r result) layers() string {
	seen := map[string]bool{}
	for _, d := range r.denials {
		seen[d.Layer] = true
	}
	var l []string
	for k := range seen {
		l = append(l, k)
	}
	slices.Sort(l)
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ",")
}

var rebindOnce sync.Once

// runAttack runs a in a fresh session of sb.
func runAttack(t *testing.T, sb *sandbox.Sandbox, f *fixtures, a attack, allowCanary bool) result {
	t.Helper()
	c := newCanary(t)
	rebindOnce.Do(func() { browsertest.MapHost("rebind.test", netip.MustParseAddr("127.0.0.2")) })
	var mu sync.Mutex
	var hooked []sandbox.Denial
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{
		Policy:   attackPolicy(allowCanary),
		OnDenial: func(d sandbox.Denial) { mu.Lock(); hooked = append(hooked, d); mu.Unlock() },
		Timeout:  10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var target string
	if a.gotoURL != nil {
		target = a.gotoURL(f, c)
	} else {
		v := url.Values{"canary": {strconv.Itoa(c.port)}, "udp": {strconv.Itoa(c.udpPort)}, "attack": {a.name}}
		target = f.a.URL + "/a/" + a.page + "?" + v.Encode()
		if a.query != "" {
			target += "&" + a.query
		}
	}
	p.Goto(target, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateCommit})
	settle := a.settle
	if settle == 0 {
		settle = 3 * time.Second
	}
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		if title, err := p.Title(); err == nil && (title == "done" || title == "Blocked by surf" || title == "canary") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	var r result
	r.canary = c
	r.denials = sess.TakeDenials()
	mu.Lock()
	if len(hooked) != len(r.denials) {
		t.Errorf("%s: OnDenial saw %d denials, TakeDenials %d", a.name, len(hooked), len(r.denials))
	}
	mu.Unlock()
	for _, ok := range a.ok {
		if f.hit("/ok/"+a.name+"/"+ok) == 0 {
			r.okMiss = append(r.okMiss, ok)
		}
	}
	return r
}

// runAttacks runs every attack as a parallel subtest (so -run can pick
// some) and returns the results of those that ran.
func runAttacks(t *testing.T, sb *sandbox.Sandbox, f *fixtures, allowCanary bool) map[string]result {
	results := map[string]result{}
	var mu sync.Mutex
	t.Run("attack", func(t *testing.T) {
		for _, a := range attacks {
			t.Run(a.name, func(t *testing.T) {
				t.Parallel()
				r := runAttack(t, sb, f, a, allowCanary)
				mu.Lock()
				results[a.name] = r
				mu.Unlock()
			})
		}
	})
	return results
}

// TestAdversarialAllLayers is the acceptance test: with every layer on and
// the canary not allowed, no attack reaches the canary (no connection, no
// request, no packet), every page's allowed requests still succeed, and
// every denial is reported.
func TestAdversarialAllLayers(t *testing.T) {
	sb := browsertest.Sandbox(t)
	checkLayersOn(t, sb.Info())
	f := newFixtures(t)
	results := runAttacks(t, sb, f, false)
	var table strings.Builder
	for _, a := range attacks {
		r, ok := results[a.name]
		if !ok {
			continue
		}
		fmt.Fprintf(&table, "  %-18s canary %-40s denied by %s\n", a.name, r.canary, r.layers())
		if r.canary.hits() != 0 {
			t.Errorf("%s reached the canary: %v", a.name, r.canary)
		}
		if len(r.okMiss) > 0 {
			t.Errorf("%s: the allowed page did not reach %v", a.name, r.okMiss)
		}
		if a.control == reached && len(r.denials) == 0 {
			t.Errorf("%s: nothing was denied, yet the attack is real", a.name)
		}
	}
	t.Logf("all layers:\n%s", table.String())
}

// TestAdversarialControl runs the same attacks with the canary allowed: they
// reach it. This shows that the attacks are real and that the canary check
// of the other tests can fail.
func TestAdversarialControl(t *testing.T) {
	sb := browsertest.Sandbox(t)
	f := newFixtures(t)
	results := runAttacks(t, sb, f, true)
	var total int64
	for _, a := range attacks {
		r, ok := results[a.name]
		if !ok {
			continue
		}
		total += r.canary.hits()
		t.Logf("  %-18s canary %v", a.name, r.canary)
		if a.control == reached && r.canary.hits() == 0 {
			t.Errorf("%s did not reach the allowed canary: the attack does not test anything", a.name)
		}
		if a.control == stopped && r.canary.hits() != 0 {
			t.Errorf("%s reached the canary; the table says it cannot even when allowed: %v", a.name, r.canary)
		}
	}
	if total == 0 {
		t.Fatal("the control run never reached the canary")
	}
}

func checkLayersOn(t *testing.T, info sandbox.Info) {
	t.Helper()
	if info.RequestGate != "on" || !strings.HasPrefix(info.EgressProxy, "on") {
		t.Errorf("layers: request gate %q, egress proxy %q; want both on", info.RequestGate, info.EgressProxy)
	}
}

// layerSandbox starts a private sandbox with only some layers on.
func layerSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	cfg.Env = browsertest.Env()
	cfg.Policy = browsertest.Policy()
	cfg.Resolver = browsertest.Resolver()
	sb, err := sandbox.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Error(err)
		}
	})
	return sb
}

// checkLayerAlone runs the attacks with one layer and compares each with
// the table.
func checkLayerAlone(t *testing.T, sb *sandbox.Sandbox, layer string, want func(attack) outcome) {
	t.Helper()
	f := newFixtures(t)
	results := runAttacks(t, sb, f, false)
	var table strings.Builder
	for _, a := range attacks {
		r, ok := results[a.name]
		if !ok {
			continue
		}
		got := stopped
		if r.canary.hits() > 0 {
			got = reached
		}
		fmt.Fprintf(&table, "  %-18s %-8s (table: %-7s) canary %-40s denied by %s\n", a.name, got, want(a), r.canary, r.layers())
		if w := want(a); w != either && w != got {
			t.Errorf("%s with %s: %s, the table says %s (canary: %v)", a.name, layer, got, w, r.canary)
		}
	}
	t.Logf("%s:\n%s", layer, table.String())
}

// TestAdversarialNoLayers turns every layer off: the attacks reach the
// canary although the policy denies it. This is the other control: what
// stops them in the other tests is the layers.
func TestAdversarialNoLayers(t *testing.T) {
	sb := noLayersSandbox(t)
	checkLayerAlone(t, sb, "no layer", func(a attack) outcome { return a.none })
}

// TestAdversarialRequestGateAlone: only the request gate. Chromium resolves
// rebind.test itself (to the canary, as a rebinding DNS server would) and
// connects directly, so what the gate cannot see shows.
func TestAdversarialRequestGateAlone(t *testing.T) {
	sb := layerSandbox(t, sandbox.Config{
		DisableEgressProxy: true,
		DisableOSSandbox:   true, DisableChromiumSandbox: true,
		Args: []string{"--host-resolver-rules=MAP rebind.test 127.0.0.2"},
	})
	if info := sb.Info(); info.RequestGate != "on" || !strings.HasPrefix(info.EgressProxy, "off: disabled") || !strings.HasPrefix(info.OSSandbox, "off: disabled") {
		t.Fatalf("info = %+v", info)
	}
	checkLayerAlone(t, sb, "the request gate alone", func(a attack) outcome { return a.gate })
}

// TestAdversarialEgressProxyAlone: only the egress proxy (and its Chromium
// flags). It also shows that loopback goes through the proxy: nothing else
// stands between the browser and the canary on 127.0.0.2.
func TestAdversarialEgressProxyAlone(t *testing.T) {
	sb := layerSandbox(t, sandbox.Config{DisableRequestGate: true, DisableOSSandbox: true, DisableChromiumSandbox: true})
	if info := sb.Info(); !strings.HasPrefix(info.RequestGate, "off: disabled") || !strings.HasPrefix(info.EgressProxy, "on") {
		t.Fatalf("info = %+v", info)
	}
	checkLayerAlone(t, sb, "the egress proxy alone", func(a attack) outcome { return a.proxy })
}
