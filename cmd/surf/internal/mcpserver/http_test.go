package mcpserver

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckBind(t *testing.T) {
	const token = "0123456789abcdef0123"
	cases := []struct {
		addr string
		o    HTTPOptions
		want string // "" for ok, else a substring of the error
	}{
		{"127.0.0.1:8931", HTTPOptions{Token: token}, ""},
		{"127.0.0.1:8931", HTTPOptions{}, "every local user"},
		{"127.0.0.1:8931", HTTPOptions{NoToken: true}, ""},
		{"127.0.0.1:8931", HTTPOptions{NoToken: true, Token: token}, "excludes"},
		{"192.168.1.5:8931", HTTPOptions{NoToken: true, AllowRemote: true}, "excludes"},
		{"192.168.1.5:8931", HTTPOptions{NoToken: true}, "--allow-remote"},
		{"127.0.0.1:0", HTTPOptions{Token: token}, ""},
		{"127.8.9.10:0", HTTPOptions{Token: token}, ""},
		{"[::1]:0", HTTPOptions{Token: token}, ""},
		{"localhost:0", HTTPOptions{Token: token}, ""},
		{"localhost:0", HTTPOptions{}, "every local user"},
		{"127.0.0.1.:0", HTTPOptions{}, "--allow-remote"},
		{"a.localhost:0", HTTPOptions{}, "--allow-remote"},
		{"[::ffff:127.0.0.1]:0", HTTPOptions{Token: token}, ""},
		{"0.0.0.0:8931", HTTPOptions{}, "--allow-remote"},
		{":8931", HTTPOptions{}, "--allow-remote"},
		{"[::]:8931", HTTPOptions{}, "--allow-remote"},
		{"192.168.1.5:8931", HTTPOptions{}, "--allow-remote"},
		{"example.com:8931", HTTPOptions{}, "--allow-remote"},
		{"192.168.1.5:8931", HTTPOptions{AllowRemote: true}, "without a token"},
		{"192.168.1.5:8931", HTTPOptions{Token: token}, "--allow-remote"},
		{"192.168.1.5:8931", HTTPOptions{AllowRemote: true, Token: token}, ""},
		{"0.0.0.0:8931", HTTPOptions{AllowRemote: true, Token: token}, "--public-host"},
		{"0.0.0.0:8931", HTTPOptions{AllowRemote: true, Token: token, PublicHost: "surf.example"}, ""},
		{"192.168.1.5:8931", HTTPOptions{AllowRemote: true, Token: "short"}, "at least 16"},
		{"127.0.0.1", HTTPOptions{}, "missing port"},
	}
	for _, c := range cases {
		err := CheckBind(c.addr, c.o)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckBind(%q, %+v) = %v, want ok", c.addr, c.o, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("CheckBind(%q, %+v) = %v, want an error with %q", c.addr, c.o, err, c.want)
		}
		if err != nil && strings.Contains(c.want, "allow-remote") && !errors.Is(err, ErrRemoteBind) {
			t.Errorf("CheckBind(%q): %v does not match ErrRemoteBind", c.addr, err)
		}
		if err != nil && c.want == "every local user" && !errors.Is(err, ErrNoToken) {
			t.Errorf("CheckBind(%q): %v does not match ErrNoToken", c.addr, err)
		}
	}
}

// TestServeRefusesRemote: Serve checks its listener like CheckBind.
func TestServeRefusesRemote(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Serve(context.Background(), ln, HTTPOptions{Token: "short"})
	if err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Errorf("Serve with a short token: %v", err)
	}
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// post sends an initialize request with the given headers (Host is the
// Host header) and returns the status. Without an Authorization header
// in headers it sends testToken; an empty one sends none.
func post(t *testing.T, endpoint string, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest("POST", endpoint, strings.NewReader(initBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range headers {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestHTTPGuard checks the DNS-rebinding defences (Host and Origin) and
// the bearer token.
func TestHTTPGuard(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{})
	port := endpoint[strings.LastIndex(endpoint, ":")+1 : strings.LastIndex(endpoint, "/")]

	cases := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"plain", nil, http.StatusOK},
		{"localhost host", map[string]string{"Host": "localhost:" + port}, http.StatusOK},
		{"ipv6 loopback host", map[string]string{"Host": "[::1]:" + port}, http.StatusOK},
		{"rebound host", map[string]string{"Host": "attacker.example:" + port}, http.StatusForbidden},
		{"lookalike host", map[string]string{"Host": "127.0.0.1.attacker.example"}, http.StatusForbidden},
		{"foreign origin", map[string]string{"Origin": "https://attacker.example"}, http.StatusForbidden},
		{"null origin", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"file origin", map[string]string{"Origin": "file://"}, http.StatusForbidden},
		{"loopback origin", map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
		{"loopback ip origin", map[string]string{"Origin": "http://127.0.0.1:" + port}, http.StatusOK},
	}
	for _, c := range cases {
		if got := post(t, endpoint, c.headers); got != c.want {
			t.Errorf("%s: status %d, want %d", c.name, got, c.want)
		}
	}
	// Only the endpoint is served.
	if got := post(t, strings.TrimSuffix(endpoint, HTTPPath)+"/other", nil); got != http.StatusNotFound {
		t.Errorf("another path: status %d, want 404", got)
	}
}

// TestHTTPToken: with a token, requests need it; the go-sdk client works
// with it.
func TestHTTPToken(t *testing.T) {
	const token = "s3cret-token-for-tests-0123456789"
	f := serveFixture(t)
	s := newServer(t, f, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{Token: token})
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Basic " + token, http.StatusUnauthorized},
		{"Bearer " + token + "x", http.StatusUnauthorized},
		{"Bearer " + testToken, http.StatusUnauthorized},
		{"Bearer " + token, http.StatusOK},
	} {
		h := map[string]string{"Authorization": c.auth}
		if got := post(t, endpoint, h); got != c.want {
			t.Errorf("Authorization %q: status %d, want %d", c.auth, got, c.want)
		}
	}
	// Host is checked before the token: a rebinding page with a stolen
	// token still fails.
	if got := post(t, endpoint, map[string]string{"Authorization": "Bearer " + token, "Host": "attacker.example"}); got != http.StatusForbidden {
		t.Errorf("foreign Host with the token: status %d, want 403", got)
	}
	cs := connect(t, endpoint, nil, &http.Client{Transport: bearer{token}})
	res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	if !strings.Contains(text(res), "Fixture Shop") {
		t.Errorf("visit_url with the token:\n%s", text(res))
	}
}

// TestHTTPPublicHost: a server reached by a public name accepts that name
// in Host and Origin, and no other.
func TestHTTPPublicHost(t *testing.T) {
	const token = "s3cret-token-for-tests-0123456789"
	f := serveFixture(t)
	s := newServer(t, f, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{Token: token, PublicHost: "surf.example"})
	auth := "Bearer " + token
	for _, c := range []struct {
		headers map[string]string
		want    int
	}{
		{map[string]string{"Host": "surf.example:8931"}, http.StatusOK},
		{map[string]string{"Host": "SURF.example."}, http.StatusOK},
		{map[string]string{"Host": "surf.example", "Origin": "https://surf.example"}, http.StatusOK},
		{map[string]string{"Host": "surf.example", "Origin": "https://other.example"}, http.StatusForbidden},
		{map[string]string{"Host": "other.example"}, http.StatusForbidden},
	} {
		c.headers["Authorization"] = auth
		if got := post(t, endpoint, c.headers); got != c.want {
			t.Errorf("%v: status %d, want %d", c.headers, got, c.want)
		}
	}
}

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// FuzzCheckBind: no address makes CheckBind panic, and an address it
// accepts without AllowRemote is one the system resolves to loopback.
func FuzzCheckBind(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8931", "[::1]:0", "localhost:1", "0.0.0.0:1", ":80", "[::ffff:127.0.0.1]:1", "127.1:80", "0x7f.0.0.1:1", "LOCALHOST.:1", "a.localhost:1", "[fe80::1%lo]:1", "127.0.0.1.nip.io:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		if CheckBind(addr, HTTPOptions{}) == nil {
			t.Fatalf("accepted %q without a token", addr)
		}
		if CheckBind(addr, HTTPOptions{Token: "0123456789abcdef0123"}) != nil {
			return
		}
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("accepted %q, which does not split: %v", addr, err)
		}
		if strings.EqualFold(host, "localhost") {
			return
		}
		ipHost, _, _ := strings.Cut(host, "%") // a zone does not change the address
		ip := net.ParseIP(ipHost)
		if ip == nil || !ip.IsLoopback() {
			t.Fatalf("accepted %q without --allow-remote, but %q is not a loopback address", addr, host)
		}
	})
}

// TestHTTPNeedsToken: a loopback server needs a token too (every local
// user can reach a loopback port): Serve refuses to start without one, a
// Handler made without one refuses every request, and NoToken is the
// explicit way out.
func TestHTTPNeedsToken(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(context.Background(), ln, HTTPOptions{}); !errors.Is(err, ErrNoToken) {
		t.Errorf("Serve on loopback without a token: %v, want ErrNoToken", err)
	}
	h := s.Handler("127.0.0.1:8931", HTTPOptions{})
	for _, auth := range []string{"", "Bearer ", "Bearer " + testToken} {
		req := httptest.NewRequest("POST", "http://127.0.0.1:8931"+HTTPPath, strings.NewReader(initBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusUnauthorized {
			t.Errorf("a Handler without a token, Authorization %q: status %d, want 401", auth, w.Code)
		}
	}
	endpoint := serveHTTP(t, s, HTTPOptions{NoToken: true})
	if got := post(t, endpoint, map[string]string{"Authorization": ""}); got != http.StatusOK {
		t.Errorf("NoToken: status %d, want 200", got)
	}
}

// TestHTTPUnauthorizedSaysHow: a request without the token gets a 401 that
// says how to get in, and nothing that starts an OAuth flow: a browser
// (Accept: text/html) a page on logging in with ?token=, a client a
// WWW-Authenticate header with the Bearer scheme and an error description
// but no resource metadata; OAuth discovery finds nothing (404, no token
// needed) rather than a 401.
func TestHTTPUnauthorizedSaysHow(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the live view") })
	endpoint := serveHTTP(t, s, HTTPOptions{UI: ui})
	root := strings.TrimSuffix(endpoint, HTTPPath)
	get := func(path, accept string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest("GET", root+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, path := range []string{"/", HTTPPath} {
		resp, body := get(path, "text/html,application/xhtml+xml,*/*;q=0.8")
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("a browser's GET %s: %d %s, want 401 text/html", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if !strings.Contains(body, "/?token=TOKEN") || !strings.Contains(body, "Authorization: Bearer TOKEN") {
			t.Errorf("a browser's GET %s: the page does not say how to log in:\n%s", path, body)
		}
	}
	resp, _ := get(HTTPPath, "application/json, text/event-stream")
	www := resp.Header.Get("WWW-Authenticate")
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(www, "Bearer ") || !strings.Contains(www, `error_description="`) || strings.Contains(www, "resource_metadata") {
		t.Errorf("a client's request without a token: %d, WWW-Authenticate %q; want 401, Bearer with an error description and no resource metadata", resp.StatusCode, www)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"} {
		resp, body := get(path, "application/json")
		if resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "does not use OAuth") {
			t.Errorf("GET %s: %d %q, want 404 saying surf does not use OAuth", path, resp.StatusCode, body)
		}
	}
	// With the token, the page is the live view.
	req, _ := http.NewRequest("GET", root+"/", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusOK || string(b) != "the live view" {
		t.Errorf("with the token: %d %q", r.StatusCode, b)
	}
}
