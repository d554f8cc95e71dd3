package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// TestServeLiveViewRemote: the live view of "surf serve --http" with
// --allow-remote and a token. A browser gets in with ?token= (an HttpOnly
// SameSite=Strict cookie), sees the MCP client's session, and only a
// same-origin POST changes anything: cross-origin POSTs get 403 and GETs
// change nothing.
func TestServeLiveViewRemote(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	const token = "0123456789abcdef0123456789abcdef"
	endpoint, _ := startServeHTTP(t, token, true, "--http", "0.0.0.0:0", "--allow-remote", "--public-host", "surf.test",
		"--allow", site.Host, "--image", "none")
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(u.Host)
	base := "http://127.0.0.1:" + port
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// An MCP client's session, with a page open.
	hc := &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
	if err != nil || res.IsError {
		t.Fatalf("visit_url: %v %+v", err, res)
	}

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	do := func(method, path string, header map[string]string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}

	// Without the token, nothing; a wrong one, nothing.
	for _, p := range []string{"/", "/api/sessions", "/?token=wrong-token-0123456789"} {
		if r := do("GET", p, nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", p, r.StatusCode)
		}
	}
	login := do("GET", "/?token="+token, nil)
	if login.StatusCode != http.StatusSeeOther || login.Header.Get("Location") != "/" {
		t.Fatalf("GET /?token=: %d to %q, want 303 to /", login.StatusCode, login.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, ck := range login.Cookies() {
		if ck.Name == mcpserver.UICookiePrefix+port {
			cookie = ck
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.MaxAge <= 0 {
		t.Fatalf("the login cookie is %+v; want %s%s, HttpOnly, SameSite=Strict, expiring", login.Cookies(), mcpserver.UICookiePrefix, port)
	}
	if strings.Contains(cookie.Value, token) {
		t.Fatalf("the login cookie carries the token")
	}
	auth := cookie.Name + "=" + cookie.Value
	// The UI's session does not open /mcp, as a cookie or as a token.
	for _, h := range []map[string]string{{"Cookie": auth}, {"Authorization": "Bearer " + cookie.Value}} {
		h["Content-Type"] = "application/json"
		h["Accept"] = "application/json, text/event-stream"
		if r := do("POST", "/mcp", h); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("POST /mcp with the UI's session (%v): %d, want 401", h, r.StatusCode)
		}
	}

	page := do("GET", "/", map[string]string{"Cookie": auth})
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET / with the cookie: %d", page.StatusCode)
	}
	csp := page.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("the CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("the CSP %q allows inline or eval'd script", csp)
	}
	if page.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("no X-Content-Type-Options: nosniff")
	}

	sessions := func() []map[string]any {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/sessions", nil)
		req.Header.Set("Cookie", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out []map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	list := sessions()
	if len(list) != 1 {
		t.Fatalf("the live view lists %d sessions, want the MCP client's one: %v", len(list), list)
	}
	s := list[0]
	if !strings.Contains(s["owner"].(string), "mcp client surf-test") || !strings.HasPrefix(s["url"].(string), site.URL) {
		t.Errorf("the session is %v", s)
	}
	id := s["id"].(string)
	state := func() string { t.Helper(); return sessions()[0]["state"].(string) }

	// Cross-origin POSTs are refused and change nothing; so are GETs of
	// the actions.
	self := base
	for _, h := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Origin": "http://127.0.0.1:1"}, // another loopback origin
		{"Origin": self, "Sec-Fetch-Site": "cross-site"},
		{"Origin": self, "Sec-Fetch-Site": "same-site"},
		{}, // no Origin at all
	} {
		h["Cookie"] = auth
		h["Content-Type"] = "application/json"
		if r := do("POST", "/s/"+id+"/takeover", h); r.StatusCode != http.StatusForbidden {
			t.Errorf("POST takeover with %v: %d, want 403", h, r.StatusCode)
		}
	}
	for _, p := range []string{"/takeover", "/handback", "/approve", "/input"} {
		if r := do("GET", "/s/"+id+p, map[string]string{"Cookie": auth}); r.StatusCode < 400 {
			t.Errorf("GET %s: %d, want an error", p, r.StatusCode)
		}
	}
	if st := state(); st == "taken over" {
		t.Fatalf("a refused request took the session over")
	}

	// The same POST from the UI's own origin works (so the 403s above are
	// the origin check's).
	if r := do("POST", "/s/"+id+"/takeover", map[string]string{"Cookie": auth, "Origin": self, "Sec-Fetch-Site": "same-origin", "Content-Type": "application/json"}); r.StatusCode != http.StatusOK {
		t.Fatalf("a same-origin takeover: %d", r.StatusCode)
	}
	if st := state(); st != "taken over" {
		t.Fatalf("after a same-origin takeover the state is %q", st)
	}
	if r := do("POST", "/s/"+id+"/handback", map[string]string{"Cookie": auth, "Origin": self, "Content-Type": "application/json"}); r.StatusCode != http.StatusOK {
		t.Fatalf("a same-origin hand-back: %d", r.StatusCode)
	}
	// A foreign Host (DNS rebinding) is refused even with the cookie.
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/sessions", nil)
	req.Host = "rebound.example:" + port
	req.Header.Set("Cookie", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a foreign Host: %d, want 403", resp.StatusCode)
	}
}
