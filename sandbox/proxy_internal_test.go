package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/policy"
)

// These tests drive the egress proxy directly with a Go client, against
// real loopback servers: an allowed one on 127.0.0.1 and a canary on
// 127.0.0.2 that counts connections.

func mustPolicy(t testing.TB, allow ...string) *policy.Policy {
	t.Helper()
	var cfg policy.Config
	for _, a := range allow {
		r, err := policy.ParseHostRule(a)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Allow = append(cfg.Allow, r)
	}
	p, err := policy.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type countingLn struct {
	net.Listener
	n *atomic.Int64
}

func (l countingLn) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// serveOn starts an HTTP server on ip that counts accepted connections.
func serveOn(t testing.TB, ip string, h http.Handler) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatal(err)
	}
	n := new(atomic.Int64)
	s := httptest.NewUnstartedServer(h)
	s.Listener = countingLn{ln, n}
	s.Start()
	t.Cleanup(s.Close)
	return s, n
}

func hello(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello from "+r.Host) }

// mapResolver resolves names from a table and counts lookups.
type mapResolver struct {
	mu      sync.Mutex
	m       map[string][][]netip.Addr // successive answers per name
	lookups map[string]int
}

var _ Resolver = (*mapResolver)(nil)

func (r *mapResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := r.lookups[host]
	r.lookups[host]++
	if i >= len(answers) {
		i = len(answers) - 1
	}
	return answers[i], nil
}

func addrs(s ...string) []netip.Addr {
	var out []netip.Addr
	for _, a := range s {
		out = append(out, netip.MustParseAddr(a))
	}
	return out
}

type testProxy struct {
	*egressProxy
	mu      sync.Mutex
	denials []Denial
}

func (p *testProxy) denied() []Denial {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Denial(nil), p.denials...)
}

func newTestProxy(t testing.TB, pol *policy.Policy, res Resolver, user, pass string, opts ...func(*proxyConfig)) *testProxy {
	t.Helper()
	tp := &testProxy{}
	cfg := proxyConfig{policy: pol, resolver: res, user: user, password: pass,
		onDenial: func(d Denial) { tp.mu.Lock(); tp.denials = append(tp.denials, d); tp.mu.Unlock() }}
	for _, o := range opts {
		o(&cfg)
	}
	p, err := startProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tp.egressProxy = p
	t.Cleanup(func() { p.Close() })
	return tp
}

func (p *testProxy) client(user, pass string) *http.Client {
	u := &url.URL{Scheme: "http", Host: p.Addr()}
	if user != "" {
		u.User = url.UserPassword(user, pass)
	}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, u string) (int, string, http.Header) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestProxyAllowsAndDenies(t *testing.T) {
	ok, _ := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	canary, hits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "")
	c := p.client("", "")

	if code, body, _ := get(t, c, ok.URL+"/x"); code != 200 || !strings.HasPrefix(body, "hello") {
		t.Errorf("allowed GET: %d %q", code, body)
	}
	canaryPort := canary.Listener.Addr().(*net.TCPAddr).Port
	for _, u := range []string{
		canary.URL + "/x",
		fmt.Sprintf("http://2130706434:%d/", canaryPort),         // decimal
		fmt.Sprintf("http://[::ffff:127.0.0.2]:%d/", canaryPort), // IPv4-mapped
		fmt.Sprintf("http://localhost:%d/", canaryPort),          // a private name
	} {
		code, body, h := get(t, c, u)
		if code != http.StatusForbidden || h.Get("X-Surf-Denied") == "" || !strings.Contains(body, "denied") {
			t.Errorf("GET %s through the proxy: %d %q; want 403 with a reason", u, code, body)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary saw %d connections", n)
	}
	if d := p.denied(); len(d) != 4 || d[0].Layer != LayerProxy || d[0].Decision.Rule != policy.RulePrivateNetworks {
		t.Errorf("denials = %+v; want 4 proxy denials for private networks", d)
	}
}

func TestProxyConnect(t *testing.T) {
	ok, _ := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	canary, hits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "")

	tunnel := func(target string) (net.Conn, *bufio.Reader, int) {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
		br := bufio.NewReader(conn)
		resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"})
		if err != nil {
			t.Fatalf("CONNECT %s: %v", target, err)
		}
		return conn, br, resp.StatusCode
	}
	conn, br, code := tunnel(ok.Listener.Addr().String())
	if code != 200 {
		t.Fatalf("CONNECT to the allowed server: %d", code)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	conn.Close()
	if !strings.HasPrefix(string(b), "hello") {
		t.Errorf("through the tunnel: %q", b)
	}
	conn, _, code = tunnel(canary.Listener.Addr().String())
	conn.Close()
	if code != http.StatusForbidden {
		t.Errorf("CONNECT to the canary: %d; want 403", code)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary saw %d connections", n)
	}
}

func TestProxyAuth(t *testing.T) {
	ok, hits := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "surf-user", "s3cret")
	for _, c := range []struct {
		user, pass string
		want       int
	}{
		{"", "", http.StatusProxyAuthRequired},
		{"surf-user", "wrong", http.StatusProxyAuthRequired},
		{"other", "s3cret", http.StatusProxyAuthRequired},
		{"surf-user", "s3cret", http.StatusOK},
	} {
		code, _, h := get(t, p.client(c.user, c.pass), ok.URL)
		if code != c.want {
			t.Errorf("credentials %q/%q: %d; want %d", c.user, c.pass, code, c.want)
		}
		if code == http.StatusProxyAuthRequired && !strings.HasPrefix(h.Get("Proxy-Authenticate"), "Basic") {
			t.Errorf("407 without a Basic challenge: %v", h)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the server saw %d connections; want 1 (only the authenticated request)", n)
	}
}

// TestProxyDNSRebinding: an allowed name that resolves to a private
// address is refused, and the proxy connects only to addresses it judged.
func TestProxyDNSRebinding(t *testing.T) {
	ok, okHits := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	canary, hits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	okPort := ok.Listener.Addr().(*net.TCPAddr).Port
	canaryPort := canary.Listener.Addr().(*net.TCPAddr).Port
	res := &mapResolver{lookups: map[string]int{}, m: map[string][][]netip.Addr{
		"rebind.test": {addrs("127.0.0.2")},
		// First answer mixes a private address the policy allows by IP
		// with one it does not; later answers point at the canary.
		"mixed.test":   {addrs("127.0.0.2", "127.0.0.1"), addrs("127.0.0.2")},
		"denied.test":  {addrs("127.0.0.1")},
		"flipper.test": {addrs("127.0.0.1"), addrs("127.0.0.2")},
	}}
	p := newTestProxy(t, mustPolicy(t, "rebind.test", "mixed.test", "flipper.test", "127.0.0.1"), res, "", "")
	c := p.client("", "")

	if code, _, _ := get(t, c, fmt.Sprintf("http://rebind.test:%d/", canaryPort)); code != http.StatusForbidden {
		t.Errorf("rebind.test (resolves to the canary): %d; want 403", code)
	}
	if code, body, _ := get(t, c, fmt.Sprintf("http://mixed.test:%d/", okPort)); code != 200 || !strings.HasPrefix(body, "hello") {
		t.Errorf("mixed.test: %d %q; want the allowed address", code, body)
	}
	// denied.test is not in the allowlist: refused before any lookup.
	if code, _, _ := get(t, c, fmt.Sprintf("http://denied.test:%d/", okPort)); code != http.StatusForbidden {
		t.Errorf("denied.test: %d; want 403", code)
	}
	if n := res.lookups["denied.test"]; n != 0 {
		t.Errorf("the proxy looked up a denied name %d times", n)
	}
	// One request, one lookup: the address dialled is the one judged.
	if code, _, _ := get(t, c, fmt.Sprintf("http://flipper.test:%d/", okPort)); code != 200 {
		t.Errorf("flipper.test: %d", code)
	}
	if n := res.lookups["flipper.test"]; n != 1 {
		t.Errorf("flipper.test was looked up %d times for one request", n)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary saw %d connections", n)
	}
	if okHits.Load() == 0 {
		t.Error("the allowed server saw nothing")
	}
}

// rawExchange writes raw bytes to the proxy and returns what it answers
// within 2s. With halfClose, it then closes its side for writing, as a
// client that has said everything.
func rawExchange(t testing.TB, addr string, raw []byte, halfClose bool) string {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(2 * time.Second))
	conn.Write(raw)
	if halfClose {
		conn.(*net.TCPConn).CloseWrite()
	}
	b, _ := io.ReadAll(io.LimitReader(conn, 1<<16))
	return string(b)
}

// TestProxyBadInput: garbage, non-proxy requests, tricks with hosts.
// Nothing reaches the canary and the proxy keeps working.
func TestProxyBadInput(t *testing.T) {
	ok, _ := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	canary, hits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	okHost := ok.Listener.Addr().String()
	cHost := canary.Listener.Addr().String()
	_, cPort, _ := net.SplitHostPort(cHost)
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "")
	for _, raw := range []string{
		"",
		"\x00\x01\x02garbage\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: " + cHost + "\r\n\r\n", // origin-form: not a proxy request
		"GET http://" + okHost + "@" + cHost + "/ HTTP/1.1\r\nHost: " + cHost + "\r\n\r\n",
		"GET http://0x7f000002:" + cPort + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://127.0.0.1:" + cPort + "\\@127.0.0.2:" + cPort + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://" + okHost + "/ HTTP/1.1\r\nHost: " + cHost + "\r\n\r\n", // Host header disagrees
		"GET ftp://" + cHost + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET https://" + cHost + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT " + cHost + " HTTP/1.1\r\n\r\n",
		"CONNECT 2130706434:" + cPort + " HTTP/1.1\r\n\r\n",
		"CONNECT [::ffff:127.0.0.2]:" + cPort + " HTTP/1.1\r\n\r\n",
		"CONNECT 127.0.0.2 HTTP/1.1\r\n\r\n",
		"CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
		"CONNECT :" + cPort + " HTTP/1.1\r\n\r\n",
		"CONNECT 127.0.0.1:0 HTTP/1.1\r\n\r\n",
		"GET http://" + okHost + "/ HTTP/1.1\r\nX: " + strings.Repeat("a", 200<<10) + "\r\n\r\n",
		"GET http://" + okHost + "/ HTTP/9.9\r\n\r\n",
		"GET http://[::1/ HTTP/1.1\r\n\r\n",
	} {
		out := rawExchange(t, p.Addr(), []byte(raw), false)
		if strings.HasPrefix(out, "HTTP/1.1 200") && !strings.Contains(raw, okHost+"/ HTTP/1.1\r\nHost: "+cHost) {
			t.Errorf("%.80q: %.120q; want a refusal", raw, out)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the canary saw %d connections", n)
	}
	if code, _, _ := get(t, p.client("", ""), ok.URL); code != 200 {
		t.Errorf("after the bad input, an allowed GET gives %d", code)
	}
}

// TestProxyHostHeaderCannotRetarget: the request goes to the URL's host,
// whatever the Host header says.
func TestProxyHostHeaderCannotRetarget(t *testing.T) {
	var gotHost atomic.Value
	ok, _ := serveOn(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost.Store(r.Host)
	}))
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "")
	rawExchange(t, p.Addr(), []byte("GET "+ok.URL+"/ HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"), false)
	if h, _ := gotHost.Load().(string); h != ok.Listener.Addr().String() {
		t.Errorf("upstream saw Host %q; want %q", h, ok.Listener.Addr().String())
	}
}

func TestProxyCloseCutsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo, forever
		}
	}()
	p, err := startProxy(proxyConfig{policy: mustPolicy(t, "127.0.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n\r\n", ln.Addr())
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	p.Close()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("the tunnel survived Close: %v", err)
	}
	if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		t.Error("the proxy still accepts connections after Close")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

func TestProxyIdleTunnelEnds(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c) // never answers
		}
	}()
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "", func(c *proxyConfig) { c.idle = 300 * time.Millisecond })
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\n\r\n", ln.Addr())
	br := bufio.NewReader(conn)
	if resp, err := http.ReadResponse(br, &http.Request{Method: "CONNECT"}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err == nil || isTimeout(err) {
		t.Errorf("an idle tunnel was not ended by the proxy: %v", err)
	}
}

// FuzzProxyRequest sends arbitrary bytes (with the canary's address
// substituted for "CANARY") to the proxy: it must never connect to the
// canary, and must keep serving.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"GET http://CANARY/ HTTP/1.1\r\nHost: CANARY\r\n\r\n",
		"CONNECT CANARY HTTP/1.1\r\n\r\n",
		"GET http://127.0.0.1:1@CANARY/ HTTP/1.1\r\n\r\n",
		"GET http://CANARY\\@127.0.0.1/ HTTP/1.1\r\n\r\n",
		"POST http://CANARY/ HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		"GET http://[::ffff:7f00:2]:1/ HTTP/1.0\r\n\r\n",
		"\r\n\r\nGET / HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	canary, hits := serveOn(f, "127.0.0.2", http.HandlerFunc(hello))
	p := newTestProxy(f, mustPolicy(f, "127.0.0.1", "allowed.test"), &mapResolver{lookups: map[string]int{},
		m: map[string][][]netip.Addr{"allowed.test": {addrs("127.0.0.2")}}}, "", "")
	cAddr := canary.Listener.Addr().String()
	f.Fuzz(func(t *testing.T, raw []byte) {
		raw = []byte(strings.ReplaceAll(string(raw), "CANARY", cAddr))
		rawExchange(t, p.Addr(), raw, true)
		if n := hits.Load(); n != 0 {
			t.Fatalf("%q reached the canary", raw)
		}
	})
}

func TestProxyReachabilityCheck(t *testing.T) {
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "", func(c *proxyConfig) { c.checkToken = "tok" })
	c := p.client("", "")
	if code, body, _ := get(t, c, "http://"+proxyCheckHost+"/tok"); code != 200 || strings.TrimSpace(body) != "surf proxy ok" {
		t.Errorf("check: %d %q", code, body)
	}
	if code, _, _ := get(t, c, "http://"+proxyCheckHost+"/other"); code != 404 {
		t.Errorf("check with a wrong token: %d; want 404", code)
	}
}
