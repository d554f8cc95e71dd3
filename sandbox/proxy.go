package sandbox

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/policy"
	"golang.org/x/net/netutil"
)

// Resolver resolves host names for the egress proxy. net.DefaultResolver
// is one; tests map names to addresses of their choosing.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

var _ Resolver = net.DefaultResolver

// Limits of the egress proxy. Streams (tunnels, response bodies) end when
// idle for proxyIdle; a response must start within proxyResponse.
const (
	proxyMaxConns      = 512
	proxyMaxHeader     = 64 << 10
	proxyHeaderTimeout = 15 * time.Second
	proxyResolve       = 5 * time.Second
	proxyDial          = 10 * time.Second
	proxyResponse      = 60 * time.Second
	proxyIdle          = 5 * time.Minute
)

// proxyConfig configures an egressProxy.
type proxyConfig struct {
	policy   *policy.Policy
	resolver Resolver
	listen   string // IP to listen on
	// user and password are required from clients when user is set.
	user, password string
	log            *slog.Logger
	// onDenial is told about every denial; nil ignores them.
	onDenial func(Denial)
	// idle ends streams idle for longer; zero means proxyIdle.
	idle time.Duration
	// checkToken, when set, makes the proxy answer a request for
	// http://<proxyCheckHost>/<checkToken> itself: the browser's proof that
	// it reaches the proxy.
	checkToken string
	// offline refuses every request and tunnel (but the check): the
	// session replays a recording, and nothing may reach the network.
	// Refusals are reported as LayerReplay denials.
	offline bool
}

// proxyCheckHost is the host of the reachability check; .invalid never
// resolves, so the check can never leave the machine.
const proxyCheckHost = "surf-proxy-check.invalid"

// egressProxy is an HTTP forward proxy (absolute-form requests and
// CONNECT) that resolves names itself, judges every resolved address with
// policy.DecideDial and connects only to an address it judged.
type egressProxy struct {
	cfg       proxyConfig
	auth      string // expected Proxy-Authorization credentials, base64
	ln        net.Listener
	srv       *http.Server
	rp        *httputil.ReverseProxy
	transport *http.Transport

	mu     sync.Mutex
	conns  map[net.Conn]struct{} // hijacked tunnels and dialled conns
	closed bool
}

// startProxy listens on cfg.listen (a random port) and serves until Close.
func startProxy(cfg proxyConfig) (*egressProxy, error) {
	if cfg.policy == nil {
		return nil, errors.New("egress proxy: no policy")
	}
	if cfg.resolver == nil {
		cfg.resolver = net.DefaultResolver
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	if cfg.listen == "" {
		cfg.listen = "127.0.0.1"
	}
	if cfg.idle <= 0 {
		cfg.idle = proxyIdle
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.listen, "0"))
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	p := &egressProxy{cfg: cfg, conns: map[net.Conn]struct{}{}}
	if cfg.user != "" {
		p.auth = base64.StdEncoding.EncodeToString([]byte(cfg.user + ":" + cfg.password))
	}
	p.ln = netutil.LimitListener(ln, proxyMaxConns)
	p.transport = &http.Transport{
		Proxy:                  nil,
		DialContext:            p.dialForTransport,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        60 * time.Second,
		ResponseHeaderTimeout:  proxyResponse,
		ExpectContinueTimeout:  time.Second,
		DisableCompression:     true,
		MaxResponseHeaderBytes: proxyMaxHeader,
	}
	errLog := slog.NewLogLogger(cfg.log.Handler(), slog.LevelDebug)
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// The outgoing request goes to exactly the URL that was
			// judged; the Host header cannot name another site.
			pr.Out.Host = pr.In.URL.Host
		},
		Transport:     p.transport,
		FlushInterval: -1, // stream (event streams, long polls)
		ErrorLog:      errLog,
		ErrorHandler:  p.upstreamError,
	}
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    proxyMaxHeader,
		ErrorLog:          errLog,
	}
	go p.srv.Serve(p.ln)
	return p, nil
}

// Addr is the host:port the proxy listens on.
func (p *egressProxy) Addr() string { return p.ln.Addr().String() }

// Port is the port the proxy listens on.
func (p *egressProxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Close stops the proxy and cuts every connection it holds.
func (p *egressProxy) Close() error {
	p.mu.Lock()
	p.closed = true
	conns := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	err := p.srv.Close()
	for _, c := range conns {
		c.Close()
	}
	p.transport.CloseIdleConnections()
	return err
}

// track registers a connection to cut on Close; false if already closed.
func (p *egressProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *egressProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// randomToken returns n random bytes in hex.
func randomToken(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (p *egressProxy) authorized(r *http.Request) bool {
	if p.auth == "" {
		return true
	}
	scheme, cred, ok := strings.Cut(r.Header.Get("Proxy-Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(p.auth)) == 1
}

func (p *egressProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="surf"`)
		plain(w, http.StatusProxyAuthRequired, "surf egress proxy: proxy authentication required")
		return
	}
	if p.cfg.offline && (r.Method == http.MethodConnect || r.URL.Host != proxyCheckHost) {
		p.refuseOffline(w, r)
		return
	}
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	if r.URL.Host == proxyCheckHost {
		if p.cfg.checkToken != "" && r.URL.Path == "/"+p.cfg.checkToken {
			plain(w, http.StatusOK, "surf proxy ok")
			return
		}
		plain(w, http.StatusNotFound, "surf egress proxy: unknown check")
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" || !strings.HasPrefix(r.RequestURI, "http:") {
		plain(w, http.StatusBadRequest, "surf egress proxy: only absolute http:// requests and CONNECT are proxied")
		return
	}
	d := p.cfg.policy.DecideURL(policy.Request, r.RequestURI, "")
	if d.Allowed() {
		// The request goes where Go's parser says; make sure that is
		// where the policy's parser (Chromium's reading) says too.
		if why := sameTarget(r.RequestURI, r.URL.Hostname(), r.URL.Port()); why != "" {
			d = policy.Decision{Verdict: policy.Deny, Rule: policy.RuleURL, URL: d.URL, Host: d.Host,
				Reason: "denied: " + why + " (rule url)"}
		}
	}
	if !d.Allowed() {
		p.deny(w, d, r.RequestURI, d.Host, true)
		return
	}
	p.rp.ServeHTTP(w, r)
}

// sameTarget checks that the policy's URL parser and Go's agree on the
// host and port of an absolute-form request target.
func sameTarget(raw, goHost, goPort string) string {
	u, err := policy.ParseURL(raw, nil)
	if err != nil {
		return "the request target does not parse"
	}
	if goPort == "" {
		goPort = "80"
	}
	ph := strings.TrimSuffix(strings.TrimPrefix(u.Hostname(), "["), "]")
	if !strings.EqualFold(ph, goHost) || strconv.Itoa(u.EffectivePort()) != goPort {
		return fmt.Sprintf("the proxy reads the target as %s:%s, the policy as %s:%d", goHost, goPort, ph, u.EffectivePort())
	}
	return ""
}

func plain(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Connection", "close")
	w.WriteHeader(code)
	io.WriteString(w, msg+"\n")
}

// deny answers 403 with the reason and records the denial.
func (p *egressProxy) deny(w http.ResponseWriter, d policy.Decision, what, host string, record bool) {
	w.Header().Set("X-Surf-Denied", d.Rule)
	plain(w, http.StatusForbidden, "surf egress proxy: "+p.cfg.policy.Redact(d.Reason))
	if record {
		p.record(d, what, host)
	}
}

func (p *egressProxy) record(d policy.Decision, what, host string) {
	if host == "" {
		host = d.Host
	}
	p.cfg.log.Debug("egress proxy denied", "target", p.cfg.policy.Redact(what), "reason", p.cfg.policy.Redact(d.Reason))
	if p.cfg.onDenial != nil {
		p.cfg.onDenial(Denial{Layer: LayerProxy, Kind: policy.Request, URL: what, Host: host, Decision: d})
	}
}

// refuseOffline answers a request or tunnel of a replaying session: the
// recording did not answer it in the browser, and replay never goes to
// the network. A request the policy denies is reported as such.
func (p *egressProxy) refuseOffline(w http.ResponseWriter, r *http.Request) {
	var d policy.Decision
	if r.Method == http.MethodConnect {
		d.Host, _, _ = net.SplitHostPort(r.RequestURI)
	} else if d = p.cfg.policy.DecideURL(policy.Request, r.RequestURI, ""); !d.Allowed() {
		p.deny(w, d, r.RequestURI, d.Host, true)
		return
	}
	dn := notRecorded(r.RequestURI, policy.Request, false, d)
	w.Header().Set("X-Surf-Denied", dn.Decision.Rule)
	plain(w, http.StatusForbidden, "surf egress proxy: "+p.cfg.policy.Redact(dn.Decision.Reason))
	p.cfg.log.Debug("egress proxy refused a request of a replaying session", "target", p.cfg.policy.Redact(r.RequestURI))
	if p.cfg.onDenial != nil {
		p.cfg.onDenial(dn)
	}
}

// deniedError is a dial the policy refused.
type deniedError struct {
	d      policy.Decision
	target string
	host   string
}

func (e *deniedError) Error() string { return e.d.Reason }

// dialChecked resolves host (unless it is an IP literal), judges every
// address with DecideDial, and connects to the first allowed address that
// answers. A refusal is a *deniedError.
func (p *egressProxy) dialChecked(ctx context.Context, host string, port int) (net.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(port))
	if port < 1 || port > 65535 {
		return nil, &deniedError{d: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleURL,
			Reason: fmt.Sprintf("denied: port %d is not a valid port (rule url)", port)}, target: target, host: host}
	}
	in := host
	if strings.Contains(in, ":") && !strings.HasPrefix(in, "[") {
		in = "[" + in + "]"
	}
	h, err := policy.ParseHost(in)
	if err != nil {
		return nil, &deniedError{d: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleURL,
			Reason: fmt.Sprintf("denied: %q is not a valid host (rule url)", host)}, target: target, host: host}
	}
	var addrs []netip.Addr
	switch h.Kind() {
	case policy.HostIPv4, policy.HostIPv6:
		addrs = []netip.Addr{h.Addr()}
	case policy.HostDomain:
		// Judge the name before resolving it: a denied name is never
		// looked up (DNS would carry it out).
		if d, denied := p.nameDenied(h.String(), port); denied {
			return nil, &deniedError{d: d, target: target, host: h.String()}
		}
		rctx, cancel := context.WithTimeout(ctx, proxyResolve)
		addrs, err = p.cfg.resolver.LookupNetIP(rctx, "ip", strings.TrimSuffix(h.String(), "."))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", h.String(), err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("resolving %s: no addresses", h.String())
		}
	default:
		return nil, &deniedError{d: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleURL,
			Reason: fmt.Sprintf("denied: %q is not a network host (rule url)", host)}, target: target, host: host}
	}
	var firstDenied *policy.Decision
	var lastErr error
	dialer := net.Dialer{Timeout: proxyDial}
	for _, a := range addrs {
		a = a.WithZone("")
		d := p.cfg.policy.DecideDial(h.String(), port, a)
		if !d.Allowed() {
			if firstDenied == nil {
				firstDenied = &d
			}
			continue
		}
		// Connect to exactly the address that was judged.
		c, err := dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err != nil {
			lastErr = err
			continue
		}
		return c, nil
	}
	if lastErr != nil {
		return nil, lastErr
	}
	return nil, &deniedError{d: *firstDenied, target: target, host: h.String()}
}

// Sentinel public addresses for judging a name before it is resolved.
var (
	sentinel4 = netip.MustParseAddr("1.1.1.1")
	sentinel6 = netip.MustParseAddr("2606:4700:4700::1111")
)

// nameDenied reports whether the host rules deny name whatever it
// resolves to. The policy has no address-free host decision, so the name
// is judged as if it resolved to two public addresses (one IPv4, one
// IPv6): denied for both means denied by name (or by rules that deny every
// address anyway).
func (p *egressProxy) nameDenied(name string, port int) (policy.Decision, bool) {
	d4 := p.cfg.policy.DecideDial(name, port, sentinel4)
	if d4.Allowed() {
		return d4, false
	}
	d6 := p.cfg.policy.DecideDial(name, port, sentinel6)
	if d6.Allowed() {
		return d6, false
	}
	return d4, true
}

// dialForTransport is the reverse proxy's dialer: every connection it
// opens is judged.
func (p *egressProxy) dialForTransport(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("bad port in %q", addr)
	}
	c, err := p.dialChecked(ctx, host, port)
	if err != nil {
		return nil, err
	}
	return &idleConn{Conn: c, idle: p.cfg.idle}, nil
}

// upstreamError answers a failed forward: 403 for a refused dial, 502
// otherwise.
func (p *egressProxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var de *deniedError
	if errors.As(err, &de) {
		p.deny(w, de.d, r.RequestURI, de.host, true)
		return
	}
	if r.Context().Err() != nil {
		return // the client went away
	}
	p.cfg.log.Debug("egress proxy upstream", "target", p.cfg.policy.Redact(r.RequestURI), "err", err)
	plain(w, http.StatusBadGateway, "surf egress proxy: "+p.cfg.policy.Redact(err.Error()))
}

// serveConnect opens a tunnel to a judged address.
func (p *egressProxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	host, portStr, err := net.SplitHostPort(r.RequestURI)
	if err != nil {
		plain(w, http.StatusBadRequest, "surf egress proxy: CONNECT needs host:port")
		return
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		plain(w, http.StatusBadRequest, "surf egress proxy: CONNECT needs a numeric port")
		return
	}
	up, err := p.dialChecked(r.Context(), host, port)
	if err != nil {
		var de *deniedError
		if errors.As(err, &de) {
			p.deny(w, de.d, de.target, de.host, true)
			return
		}
		plain(w, http.StatusBadGateway, "surf egress proxy: "+p.cfg.policy.Redact(err.Error()))
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		plain(w, http.StatusInternalServerError, "surf egress proxy: cannot tunnel")
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(client) || !p.track(up) {
		client.Close()
		up.Close()
		return
	}
	defer func() {
		client.Close()
		up.Close()
		p.untrack(client)
		p.untrack(up)
	}()
	client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// Bytes the client sent after the CONNECT head.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(&idleConn{Conn: client, idle: p.cfg.idle}, &idleConn{Conn: up, idle: p.cfg.idle})
}

// splice copies both ways until both directions end (or stall).
func splice(a, b *idleConn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src *idleConn) {
		io.Copy(dst, src)
		if cw, ok := dst.Conn.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// idleConn ends reads and writes that stall for longer than idle.
type idleConn struct {
	net.Conn
	idle time.Duration
}

func (c *idleConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	return c.Conn.Read(b)
}

func (c *idleConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	return c.Conn.Write(b)
}
