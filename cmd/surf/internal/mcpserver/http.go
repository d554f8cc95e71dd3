package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
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
	// Principals, when set, are the tokens of several clients that do not
	// share anything: each principal's named sessions' state files
	// (Config.StateDir/NAME/) and board tasks are its own (see
	// PrincipalFromContext). Token, if also set, is the token of the
	// unnamed principal (""). Tokens are compared in constant time.
	Principals []Principal
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

// Principal is one client of a server with several (HTTPOptions.Principals):
// its name and its bearer token.
type Principal struct {
	Name  string
	Token string
}

// CheckPrincipals checks a list of principals: names as session names are
// (letters, digits, '_', '.', '-'), tokens of at least MinTokenLength
// bytes, neither repeated.
func CheckPrincipals(ps []Principal) error {
	names := map[string]bool{}
	tokens := map[string]bool{}
	for _, p := range ps {
		if err := checkName("principal", p.Name); err != nil {
			return err
		}
		if len(p.Token) < MinTokenLength {
			return fmt.Errorf("principal %q: the token is %d bytes; use at least %d random bytes (e.g. openssl rand -hex 24)", p.Name, len(p.Token), MinTokenLength)
		}
		if names[p.Name] {
			return fmt.Errorf("principal %q is listed twice", p.Name)
		}
		if tokens[p.Token] {
			return fmt.Errorf("principal %q has the token of another principal", p.Name)
		}
		names[p.Name], tokens[p.Token] = true, true
	}
	return nil
}

// hasToken reports whether the options name at least one token.
func (o HTTPOptions) hasToken() bool { return o.Token != "" || len(o.Principals) > 0 }

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
	if err := CheckPrincipals(o.Principals); err != nil {
		return err
	}
	if o.NoToken && (o.hasToken() || o.AllowRemote) {
		return errors.New("NoToken excludes a token and AllowRemote")
	}
	if loopbackBind(host) {
		if !o.hasToken() && !o.NoToken {
			return fmt.Errorf("%w (%s): every local user can reach a loopback port and drive the browser; set a bearer token (SURF_MCP_TOKEN, --token-file or --tokens; surf serve makes one by default), or --no-token on a single-user machine", ErrNoToken, addr)
		}
		return nil
	}
	if !o.AllowRemote {
		return fmt.Errorf("%w (%s): anyone who can reach it could drive the browser; to serve other machines pass --allow-remote and a bearer token (SURF_MCP_TOKEN, --token-file or --tokens)", ErrRemoteBind, addr)
	}
	if !o.hasToken() {
		return fmt.Errorf("%w (%s) without a token: set SURF_MCP_TOKEN, --token-file or --tokens", ErrRemoteBind, addr)
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
		// Long calls survive a dropped connection (resume.go).
		EventStore: newEventStore(),
	})
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, Guard(withTokenInfo(limitBody(s.trackConns(s.resumable(s.dropCancelled(h))))), listen, o, false, s.log))
	mux.HandleFunc("/.well-known/oauth-protected-resource", noOAuth)
	mux.HandleFunc("/.well-known/oauth-protected-resource/", noOAuth)
	mux.HandleFunc("/.well-known/oauth-authorization-server", noOAuth)
	mux.HandleFunc("/.well-known/oauth-authorization-server/", noOAuth)
	mux.HandleFunc("/.well-known/openid-configuration", noOAuth)
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

// principal returns the principal whose token got is: "" for Token, a
// name for one of Principals. Every token is compared, in constant time,
// whichever matches.
func (g *guard) principal(got string) (name string, ok bool) {
	b := []byte(strings.TrimSpace(got))
	if g.opts.Token != "" && subtle.ConstantTimeCompare(b, []byte(g.opts.Token)) == 1 {
		ok = true
	}
	for _, p := range g.opts.Principals {
		if subtle.ConstantTimeCompare(b, []byte(p.Token)) == 1 && !ok {
			name, ok = p.Name, true
		}
	}
	return name, ok
}

// login answers a browser's GET with ?token=: a good token starts a UI
// session, sets its cookie and redirects to the page without the token.
func (g *guard) login(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	token := strings.TrimSpace(q.Get("token"))
	if _, ok := g.principal(token); r.Method != http.MethodGet || !ok {
		g.unauthorized(w, r, "the token in the address is not this server's")
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

// unauthorized answers a request without a good token: 401 with a
// WWW-Authenticate header that names the scheme and why (and no OAuth
// resource metadata: surf has no authorization server to send a client
// to), and for a browser (Accept: text/html) a page saying how to log in.
func (g *guard) unauthorized(w http.ResponseWriter, r *http.Request, why string) {
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm="surf", error="invalid_token", error_description=%q`,
		why+`: send "Authorization: Bearer TOKEN" with the token surf serve printed or wrote to its token file`))
	w.Header().Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, loginPage)
		return
	}
	http.Error(w, "Unauthorized: "+why+`; send "Authorization: Bearer TOKEN"`, http.StatusUnauthorized)
}

// loginPage is what a browser gets instead of a bare 401.
const loginPage = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>surf: log in with the token</title>
<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em;line-height:1.5}code{background:#eee;padding:0 .2em}</style></head>
<body><h1>This surf server needs its token</h1>
<p>Open the address <code>surf serve --http</code> (or <code>surf run --ui</code>, <code>surf work --ui</code>) printed when it started:
it ends in <code>/?token=TOKEN</code>. Your browser then keeps a cookie and this page goes away.</p>
<p>Without that address: the token is in the file surf named on its standard error
(by default <code>serve-PORT.token</code> in surf's runtime directory), in <code>$SURF_MCP_TOKEN</code>,
or in the file given with <code>--token-file</code> or <code>--tokens</code>. Add <code>?token=</code> and the token to this address.</p>
<p>MCP clients do not log in here: they send the header <code>Authorization: Bearer TOKEN</code> with every request.
surf does not use OAuth.</p>
</body></html>
`

// noOAuth answers OAuth discovery (/.well-known/oauth-*) with 404 and a
// word on what to do, without a token: it reveals nothing, and a client
// that finds no metadata does not start an authorization flow that cannot
// succeed.
func noOAuth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, `{"error":"not_found","error_description":"surf does not use OAuth: send \"Authorization: Bearer TOKEN\" with the token surf serve printed or wrote to its token file"}`+"\n")
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
		got, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		var name string
		authed := false
		why := "no bearer token"
		if bearer {
			name, authed = g.principal(got)
			why = "the bearer token is not this server's"
		} else if g.browser {
			if c, err := r.Cookie(g.sessions.name); err == nil {
				authed = g.sessions.valid(c.Value)
				why = "the login has expired"
			}
		}
		if !authed {
			g.unauthorized(w, r, why)
			return
		}
		if !bearer {
			g.next.ServeHTTP(w, r) // a browser's UI session
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), principalKey{}, name))
	}
	g.next.ServeHTTP(w, r)
}

// principalKey is the context key of the principal the guard let in.
type principalKey struct{}

// PrincipalFromContext returns the principal of an HTTP request the guard
// let in: "" for the server's Token (or no token), the name of one of
// HTTPOptions.Principals otherwise.
func PrincipalFromContext(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// withTokenInfo hands the guard's principal to the MCP handler as the
// request's auth.TokenInfo: the SDK then gives it to tool calls
// (RequestExtra.TokenInfo) and refuses a session's requests from another
// principal than the one that opened it.
func withTokenInfo(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := r.Context().Value(principalKey{}).(string)
		if !ok {
			next.ServeHTTP(w, r) // no token (NoToken)
			return
		}
		ti := &auth.TokenInfo{UserID: principalUserID(p), Expiration: time.Now().Add(100 * 365 * 24 * time.Hour)}
		auth.RequireBearerToken(func(context.Context, string, *http.Request) (*auth.TokenInfo, error) { return ti, nil }, nil)(next).ServeHTTP(w, r)
	})
}

// principalUserID is a principal's TokenInfo.UserID: never empty, since
// the SDK reads an empty one as no user.
func principalUserID(p string) string { return "principal:" + p }

// callPrincipal is the principal of a tool call: "" on stdio and for the
// server's single token.
func callPrincipal(req *mcp.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.TokenInfo == nil {
		return ""
	}
	p, _ := strings.CutPrefix(req.Extra.TokenInfo.UserID, "principal:")
	return p
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
