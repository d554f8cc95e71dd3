package liveui_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// TestLoginCookieIsNotTheToken: a person's browser logs in to two live
// views on 127.0.0.1 and then opens another web server on 127.0.0.1.
// Browsers send a host's cookies to every port: that server receives the
// live views' cookies, which must not carry the token nor open /mcp; and
// the two live views keep their logins apart.
func TestLoginCookieIsNotTheToken(t *testing.T) {
	hub1, hub2 := live.New(live.Config{}), live.New(live.Config{})
	t.Cleanup(hub1.Close)
	t.Cleanup(hub2.Close)
	base1, token1 := serveUI(t, hub1)
	base2, token2 := serveUI(t, hub2)

	// The other web server: it keeps the Cookie header it receives.
	got := make(chan string, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ok(t, err)
	other := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Get("Cookie"):
		default:
		}
		w.Write([]byte("<title>other</title>another server"))
	})}
	go other.Serve(ln)
	t.Cleanup(func() { other.Close() })

	page := viewer(t)
	for _, login := range []string{base1 + "/?token=" + token1, base2 + "/?token=" + token2} {
		resp := must(page.Goto(login))(t)
		if resp.Status() != http.StatusOK || strings.Contains(page.URL(), "token=") {
			t.Fatalf("logging in at %s: %d, at %s", login, resp.Status(), page.URL())
		}
	}
	// Both logins hold: neither server's cookie replaced the other's.
	for _, base := range []string{base1, base2} {
		if resp := must(page.Goto(base + "/api/sessions"))(t); resp.Status() != http.StatusOK {
			t.Errorf("GET %s/api/sessions after both logins: %d, want 200", base, resp.Status())
		}
	}

	must(page.Goto("http://" + ln.Addr().String() + "/"))(t)
	header := <-got
	if header == "" {
		t.Fatal("the other server received no cookie: the check below could not fail")
	}
	for _, tok := range []string{token1, token2} {
		if strings.Contains(header, tok) {
			t.Fatalf("another server on the host received a live view's token in its cookies: %s", header)
		}
	}
	// What it received opens no MCP endpoint: not as a bearer token, not
	// as a cookie.
	mcp1 := mcpserver.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}), strings.TrimPrefix(base1, "http://"),
		mcpserver.HTTPOptions{Token: token1}, false, nil)
	for _, c := range strings.Split(header, "; ") {
		name, value, _ := strings.Cut(c, "=")
		if !strings.HasPrefix(name, mcpserver.UICookiePrefix) {
			t.Errorf("a live view's cookie is named %q, not %s + its port", name, mcpserver.UICookiePrefix)
		}
		for _, h := range []http.Header{{"Authorization": {"Bearer " + value}}, {"Cookie": {c}}} {
			req, err := http.NewRequest("POST", base1+mcpserver.HTTPPath, strings.NewReader("{}"))
			ok(t, err)
			req.Header = h
			rec := httptest.NewRecorder()
			mcp1.ServeHTTP(rec, req)
			if rec.Code != http.StatusUnauthorized {
				t.Errorf("the MCP endpoint with the cookie %s as %v: %d, want 401", name, h, rec.Code)
			}
		}
	}
}
