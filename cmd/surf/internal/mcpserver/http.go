package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultHTTPAddr is where "surf serve --http" listens unless told.
const DefaultHTTPAddr = "127.0.0.1:8931"

// HTTPPath is the streamable HTTP endpoint.
const HTTPPath = "/mcp"

// MinTokenLength is the shortest bearer token accepted.
const MinTokenLength = 16

// HTTPOptions secures the streamable HTTP transport. The zero value is
// refused: every server needs a Token, on loopback too, since every user
// of the machine can reach a loopback port (GenerateToken makes one).
type HTTPOptions struct {
	// AllowRemote permits listening on an address that is not loopback.
	// It requires Token.
	AllowRemote bool
	// Token must come with every request as "Authorization: Bearer
	// TOKEN" (at least MinTokenLength bytes).
	Token string
	// NoToken serves a loopback address without a token: then every
	// local user (and every process of theirs) can drive the browser.
	// Only for a machine with a single user. It excludes Token and
	// AllowRemote.
	NoToken bool
	// PublicHost is the host name (or IP address) remote clients use to
	// reach the server. Requests whose Host header, and browser requests
	// whose Origin, name another host than it or a loopback host are
	// refused: that is what stops DNS rebinding. A remote server that
	// listens on a specific address accepts that address too.
	PublicHost string
	// UI, when set, is served at every path but HTTPPath (the live view's
	// web pages), behind the same Host, Origin and token checks; a
	// browser, which cannot send the bearer header, logs in once by
	// opening /?token=TOKEN (see Guard).
	UI http.Handler
}

// ErrRemoteBind is the error of a non-loopback listen address without
// AllowRemote.
var ErrRemoteBind = errors.New("refusing to listen on a non-loopback address")

// ErrNoToken is the error of a server without a token (and without
// NoToken).
var ErrNoToken = errors.New("refusing to serve without a token")

// CheckBind checks a listen address against the options: every address
// needs a Token (a loopback one may do without if NoToken says so); one
// that is not loopback also needs AllowRemote, and an unspecified address
// (0.0.0.0, [::]) also a PublicHost.
func CheckBind(addr string, o HTTPOptions) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if o.Token != "" && len(o.Token) < MinTokenLength {
		return fmt.Errorf("the token is %d bytes; use at least %d random bytes (e.g. openssl rand -hex 24)", len(o.Token), MinTokenLength)
	}
	if o.NoToken && (o.Token != "" || o.AllowRemote) {
		return errors.New("NoToken excludes a token and AllowRemote")
	}
	if loopbackBind(host) {
		if o.Token == "" && !o.NoToken {
			return fmt.Errorf("%w (%s): every local user can reach a loopback port and drive the browser; set a bearer token (--token or SURF_MCP_TOKEN; surf serve makes one by default), or --no-token on a single-user machine", ErrNoToken, addr)
		}
		return nil
	}
	if !o.AllowRemote {
		return fmt.Errorf("%w (%s): anyone who can reach it could drive the browser; to serve other machines pass --allow-remote and a bearer token (--token or SURF_MCP_TOKEN)", ErrRemoteBind, addr)
	}
	if o.Token == "" {
		return fmt.Errorf("%w (%s) without a token: set --token or SURF_MCP_TOKEN", ErrRemoteBind, addr)
	}
	if ip, err := netip.ParseAddr(host); (host == "" || err == nil && ip.IsUnspecified()) && o.PublicHost == "" {
		return fmt.Errorf("listening on all interfaces (%s) needs --public-host, the name clients use to reach this server", addr)
	}
	return nil
}

// IsLoopbackBind reports whether a listen address (host:port) is surely
// loopback: a loopback IP literal, or "localhost".
func IsLoopbackBind(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && loopbackBind(host)
}

// loopbackBind reports whether a listen host is surely loopback: a
// loopback IP literal, or "localhost". Other names go through the
// resolver, which may say anything.
func loopbackBind(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// isLoopbackHost reports whether a Host or Origin host names loopback:
// "localhost", a name under .localhost (which browsers resolve to loopback
// themselves) or a loopback IP.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// GenerateToken returns a new random bearer token (32 bytes, hex).
func GenerateToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Handler is the streamable HTTP handler at HTTPPath, behind the Host,
// Origin and token checks. listen is the address the server listens on
// (it may be "" when unknown). With neither a Token nor NoToken it refuses
// every request.
func (s *Server) Handler(listen string, o HTTPOptions) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, &mcp.StreamableHTTPOptions{
		Logger: s.log,
		// An HTTP client that vanishes without DELETE is noticed only by
		// its silence: its browser context closes after the idle timeout,
		// and its MCP session after the longer sessionTimeout.
		SessionTimeout: sessionTimeout(s.cfg.IdleTimeout),
		// The guard checks Host on every request, whatever address it
		// came in on, and accepts the configured public host, which the
		// SDK's own check (loopback listeners only) would refuse.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        MaxRequestBytes,
	})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, Guard(limitBody(s.trackConns(h)), listen, o, false, s.log))
	if o.UI != nil {
		mux.Handle("/", Guard(o.UI, listen, o, true, s.log))
	} else {
		mux.Handle("/", Guard(http.NotFoundHandler(), listen, o, false, s.log))
	}
	return mux
}

// Guard puts next behind the HTTP checks of the MCP endpoint: Host and
// Origin must name loopback or the server (DNS-rebinding defence), and
// every request must carry the token (unless NoToken) as "Authorization:
// Bearer TOKEN". With browser set, a browser may instead show a UI
// session cookie, which a GET of any page with ?token=TOKEN sets before
// redirecting to the same page without it: that is how a person's browser
// gets in. The cookie holds a random value of its own, never the token,
// which opens this guard's pages only (not another guard's, not
// HTTPPath's) for UISessionTTL; its name (UICookiePrefix and the port)
// keeps two servers on one host apart; it is HttpOnly and
// SameSite=Strict. With neither a Token nor NoToken it refuses every
// request.
func Guard(next http.Handler, listen string, o HTTPOptions, browser bool, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := &guard{next: next, opts: o, hosts: allowedHosts(listen, o), browser: browser, log: log}
	if browser {
		g.sessions = newUISessions(listen)
	}
	return g
}

// sessionTimeout is how long an HTTP MCP session may go without a
// request: long enough that a client coming back after its browser
// context idled out finds its session (and is told the context is new).
func sessionTimeout(idle time.Duration) time.Duration {
	return max(time.Hour, 4*idle)
}

// allowedHosts are the host names requests may name besides loopback.
func allowedHosts(listen string, o HTTPOptions) map[string]bool {
	m := map[string]bool{}
	if o.PublicHost != "" {
		m[normHost(o.PublicHost)] = true
	}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.IsUnspecified() {
			m[normHost(host)] = true
		}
	}
	return m
}

func normHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// guard refuses requests that name a foreign host or origin, or lack the
// token.
type guard struct {
	next    http.Handler
	opts    HTTPOptions
	hosts   map[string]bool
	browser bool // a UI session cookie, set by ?token=, may stand for the token
	// sessions are the browsers logged in with ?token= (browser only).
	sessions *uiSessions
	log      *slog.Logger
}

// tokenOK reports whether got is the token, in constant time.
func (g *guard) tokenOK(got string) bool {
	return g.opts.Token != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(g.opts.Token)) == 1
}

// login answers a browser's GET with ?token=: a good token starts a UI
// session, sets its cookie and redirects to the page without the token.
func (g *guard) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if r.Method != http.MethodGet || !g.tokenOK(q.Get("token")) {
		http.Error(w, "Unauthorized: a valid token is required", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: g.sessions.name, Value: g.sessions.issue(), Path: "/", HttpOnly: true,
		MaxAge: int(g.sessions.ttl.Seconds()), SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	q.Del("token")
	u := *r.URL
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
}

func (g *guard) allowed(host string) bool {
	return isLoopbackHost(host) || g.hosts[normHost(host)]
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if host == "" || !g.allowed(host) {
		g.log.Warn("http: refused Host", "host", r.Host, "remote", r.RemoteAddr)
		http.Error(w, fmt.Sprintf("Forbidden: Host %q is not this server's (DNS rebinding protection)", r.Host), http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !g.allowed(u.Hostname()) {
			g.log.Warn("http: refused Origin", "origin", origin, "remote", r.RemoteAddr)
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q may not use this server", origin), http.StatusForbidden)
			return
		}
	}
	if g.browser && r.URL.Query().Has("token") {
		if g.opts.NoToken {
			http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
			return
		}
		g.login(w, r)
		return
	}
	if !g.opts.NoToken {
		// Without a token (and without NoToken) nothing passes: Handler
		// fails closed where Serve would refuse to start.
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		authed := ok && g.tokenOK(got)
		if !ok && g.browser {
			if c, err := r.Cookie(g.sessions.name); err == nil {
				authed = g.sessions.valid(c.Value)
			}
		}
		if !authed {
			w.Header().Set("WWW-Authenticate", `Bearer realm="surf"`)
			http.Error(w, "Unauthorized: a valid bearer token is required", http.StatusUnauthorized)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// Serve serves streamable HTTP on ln until ctx ends, then closes the
// sessions. The caller checks the address with CheckBind before
// listening.
func (s *Server) Serve(ctx context.Context, ln net.Listener, o HTTPOptions) error {
	if err := CheckBind(ln.Addr().String(), o); err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{
		Handler:           s.Handler(ln.Addr().String(), o),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Close the MCP sessions first: their open event streams would hold
	// Shutdown up.
	s.Close()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		srv.Close()
	}
	return ctx.Err()
}
