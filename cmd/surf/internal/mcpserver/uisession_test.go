package mcpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestUISessionExpires: a live-view login opens the UI until it expires,
// and never stands for the token; another server's sessions are not its.
func TestUISessionExpires(t *testing.T) {
	token := GenerateToken()
	opts := HTTPOptions{Token: token}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	g := Guard(ok, "127.0.0.1:8932", opts, true, nil).(*guard)
	now := time.Unix(1_700_000_000, 0)
	g.sessions.now = func() time.Time { return now }

	rec := httptest.NewRecorder()
	g.ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:8932/?token="+token, nil))
	res := rec.Result()
	if res.StatusCode != http.StatusSeeOther || len(res.Cookies()) != 1 {
		t.Fatalf("login: %d, cookies %v", res.StatusCode, res.Cookies())
	}
	c := res.Cookies()[0]
	if c.Name != UICookiePrefix+"8932" || c.Value == token || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.MaxAge != int(UISessionTTL.Seconds()) {
		t.Fatalf("the cookie is %+v", c)
	}
	get := func(h *guard, cookie string) int {
		req := httptest.NewRequest("GET", "http://127.0.0.1:8932/", nil)
		req.Header.Set("Cookie", cookie)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := get(g, c.Name+"="+c.Value); code != http.StatusOK {
		t.Fatalf("with the session: %d", code)
	}
	for _, bad := range []string{c.Name + "=" + token, c.Name + "=" + strings.Repeat("0", 64), "surf_token=" + token} {
		if code := get(g, bad); code != http.StatusUnauthorized {
			t.Errorf("with %q: %d, want 401", bad[:20], code)
		}
	}
	// Another server (a restart) does not know the session.
	g2 := Guard(ok, "127.0.0.1:8932", opts, true, nil).(*guard)
	if code := get(g2, c.Name+"="+c.Value); code != http.StatusUnauthorized {
		t.Errorf("another server with the session: %d, want 401", code)
	}
	now = now.Add(UISessionTTL)
	if code := get(g, c.Name+"="+c.Value); code != http.StatusUnauthorized {
		t.Errorf("after %s: %d, want 401", UISessionTTL, code)
	}
}

// TestUISessionsBounded: logins past the bound drop the oldest.
func TestUISessionsBounded(t *testing.T) {
	u := newUISessions("127.0.0.1:1")
	clock := time.Unix(1_700_000_000, 0)
	u.now = func() time.Time { clock = clock.Add(time.Second); return clock }
	first := u.issue()
	for range maxUISessions {
		u.issue()
	}
	if len(u.m) != maxUISessions || u.valid(first) {
		t.Fatalf("%d sessions kept, the first valid: %v", len(u.m), u.valid(first))
	}
}
