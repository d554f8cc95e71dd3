package sandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"filippo.io/age"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// loginSite is a loopback site with a cookie login: /login sets a session
// cookie and a local-storage token, both random; /account says whether
// the request carried the cookie and whether the page sees the token.
type loginSite struct {
	*httptest.Server
	cookie, token string
}

func newLoginSite(t *testing.T) *loginSite {
	t.Helper()
	s := &loginSite{cookie: randomHex(t), token: randomHex(t)}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: s.cookie, Path: "/", HttpOnly: true, MaxAge: 3600})
			fmt.Fprintf(w, `<!doctype html><title>Logged in</title><script>localStorage.setItem("token", %q)</script><p>welcome</p>`, s.token)
		case "/account":
			who := "Signed out"
			if c, err := r.Cookie("sid"); err == nil && c.Value == s.cookie {
				who = "Signed in"
			}
			fmt.Fprintf(w, `<!doctype html><title>Account</title><p id=who>%s</p><p id=tok></p><script>tok.textContent = localStorage.getItem("token") === %q ? "token present" : "no token"</script>`, who, s.token)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// account loads /account in a session and returns what it says.
func (s *loginSite) account(t *testing.T, sess *sandbox.Session) (who, tok string) {
	t.Helper()
	p := page(t, sess)
	defer p.Close()
	if _, err := p.Goto(s.URL + "/account"); err != nil {
		t.Fatal(err)
	}
	who, err := p.Locator("#who").TextContent()
	if err != nil {
		t.Fatal(err)
	}
	tok, err = p.Locator("#tok").TextContent()
	if err != nil {
		t.Fatal(err)
	}
	return who, tok
}

// openSession opens a session closed by the test (its Close error is the
// caller's to check when it matters, so it is ignored at cleanup).
func openSession(t *testing.T, cfg sandbox.SessionConfig) *sandbox.Session {
	t.Helper()
	sess, err := browsertest.Sandbox(t).NewSession(context.Background(), cfg)
	if err != nil {
		t.Fatalf("opening a session: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func loopbackOnly(t *testing.T) *policy.Policy {
	t.Helper()
	r, err := policy.ParseHostRule("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return policy.MustNew(policy.Config{Allow: []policy.HostRule{r}})
}

func TestStateSavedAndReloaded(t *testing.T) {
	site := newLoginSite(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "state.json")
	st := sandbox.StateFile{Path: file}

	first := openSession(t, sandbox.SessionConfig{State: st})
	if got := first.StateLoaded(); got.Path != file || got.Cookies != 0 {
		t.Errorf("a missing state file loaded %+v", got)
	}
	p := page(t, first)
	if _, err := p.Goto(site.URL + "/login"); err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatalf("closing (and saving): %v", err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatalf("Close wrote no state file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".surf-state-*")); len(left) > 0 {
		t.Errorf("temp files left: %v", left)
	}
	raw, _ := os.ReadFile(file)
	var pw playwright.StorageState
	if err := json.Unmarshal(raw, &pw); err != nil || len(pw.Cookies) != 1 || pw.Cookies[0].Name != "sid" || len(pw.Origins) != 1 {
		t.Fatalf("state file is not Playwright's storage state with the login: %v, %d cookies, %d origins", err, len(pw.Cookies), len(pw.Origins))
	}

	second := openSession(t, sandbox.SessionConfig{State: st})
	if got := second.StateLoaded(); got.Cookies != 1 || got.Origins != 1 || got.DroppedCookies != 0 {
		t.Errorf("StateLoaded = %+v, want 1 cookie and 1 origin", got)
	}
	if who, tok := site.account(t, second); who != "Signed in" || tok != "token present" {
		t.Errorf("a session with the saved state: %q, %q; want signed in with the token", who, tok)
	}
	fresh := openSession(t, sandbox.SessionConfig{})
	if who, tok := site.account(t, fresh); who != "Signed out" || tok != "no token" {
		t.Errorf("a session without state: %q, %q; want signed out", who, tok)
	}
}

func TestStateDeniedHostsNotLoaded(t *testing.T) {
	site := newLoginSite(t)
	u := strings.TrimPrefix(site.URL, "http://")
	file := filepath.Join(t.TempDir(), "smuggled.json")
	// A file in Playwright's exact shape: cookies for the site and for two
	// hosts the session's policy denies, storage for each.
	smuggled := fmt.Sprintf(`{"cookies":[
 {"name":"sid","value":%q,"domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"},
 {"name":"evil","value":"smuggled-1","domain":"evil.test","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"},
 {"name":"evil2","value":"smuggled-2","domain":".evil.test","path":"/","expires":-1,"httpOnly":false,"secure":true,"sameSite":"None"},
 {"name":"other","value":"smuggled-3","domain":"127.0.0.2","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"}],
"origins":[{"origin":"http://%s","localStorage":[{"name":"token","value":%q}]},
 {"origin":"http://evil.test","localStorage":[{"name":"x","value":"smuggled-4"}]},
 {"origin":"javascript:alert(1)","localStorage":[{"name":"x","value":"smuggled-5"}]}]}`, site.cookie, u, site.token)
	if err := os.WriteFile(file, []byte(smuggled), 0o600); err != nil {
		t.Fatal(err)
	}
	sess := openSession(t, sandbox.SessionConfig{State: sandbox.StateFile{Path: file, ReadOnly: true}, Policy: loopbackOnly(t)})
	if got := sess.StateLoaded(); got.Cookies != 1 || got.Origins != 1 || got.DroppedCookies != 3 || got.DroppedOrigins != 2 {
		t.Errorf("StateLoaded = %+v; want 1 cookie, 1 origin, 3 and 2 dropped", got)
	}
	cookies, err := sess.Context().Cookies()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies {
		if c.Domain != "127.0.0.1" {
			t.Errorf("a cookie for a denied host was loaded: %s on %s", c.Name, c.Domain)
		}
	}
	if len(cookies) != 1 {
		t.Errorf("%d cookies loaded, want 1", len(cookies))
	}
	if who, tok := site.account(t, sess); who != "Signed in" || tok != "token present" {
		t.Errorf("the allowed part of the file: %q, %q; want signed in with the token", who, tok)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(file)
	if !bytes.Equal(after, []byte(smuggled)) {
		t.Error("a read-only state file was written")
	}
}

func TestStateSaveKeepsOnlyAllowedHosts(t *testing.T) {
	site := newLoginSite(t)
	file := filepath.Join(t.TempDir(), "state.json")
	sess := openSession(t, sandbox.SessionConfig{State: sandbox.StateFile{Path: file}, Policy: loopbackOnly(t)})
	p := page(t, sess)
	if _, err := p.Goto(site.URL + "/login"); err != nil {
		t.Fatal(err)
	}
	// A cookie for a host the policy denies, put in the jar directly.
	if err := sess.Context().AddCookies([]playwright.OptionalCookie{{Name: "evil", Value: "planted-value", Domain: playwright.String("evil.test"), Path: playwright.String("/")}}); err != nil {
		t.Fatal(err)
	}
	sum, err := sess.SaveState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cookies != 1 || sum.DroppedCookies != 1 || sum.Origins != 1 {
		t.Errorf("SaveState = %+v; want 1 cookie kept, 1 dropped, 1 origin", sum)
	}
	raw, _ := os.ReadFile(file)
	if bytes.Contains(raw, []byte("planted-value")) || bytes.Contains(raw, []byte("evil.test")) {
		t.Errorf("the state file holds the denied host's cookie:\n%s", raw)
	}
	if !bytes.Contains(raw, []byte(site.cookie)) {
		t.Error("the state file lacks the site's cookie")
	}
}

func TestStateEncrypted(t *testing.T) {
	site := newLoginSite(t)
	dir := t.TempDir()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := age.GenerateX25519Identity()
	idFile, otherFile := filepath.Join(dir, "key.txt"), filepath.Join(dir, "other.txt")
	os.WriteFile(idFile, []byte("# test key\n"+id.String()+"\n"), 0o600)
	os.WriteFile(otherFile, []byte(other.String()+"\n"), 0o600)
	file := filepath.Join(dir, "state.age")
	st := sandbox.StateFile{Path: file, IdentityFile: idFile}

	sess := openSession(t, sandbox.SessionConfig{State: st})
	p := page(t, sess)
	if _, err := p.Goto(site.URL + "/login"); err != nil {
		t.Fatal(err)
	}
	sum, err := sess.SaveState(context.Background())
	if err != nil || !sum.Encrypted || sum.Cookies != 1 {
		t.Fatalf("SaveState = %+v, %v; want 1 cookie, encrypted", sum, err)
	}
	raw, _ := os.ReadFile(file)
	if !bytes.HasPrefix(raw, []byte("age-encryption.org/v1")) {
		t.Fatalf("the file is not age-encrypted: %.40q", raw)
	}
	for _, secret := range []string{site.cookie, site.token, "sid", "127.0.0.1"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the encrypted file holds %q in the clear", secret)
		}
	}

	_, err = browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{State: sandbox.StateFile{Path: file}})
	if !errors.Is(err, sandbox.ErrStateEncrypted) || !strings.Contains(err.Error(), "encrypted") || !strings.Contains(err.Error(), file) {
		t.Errorf("opening without the key: %v; want ErrStateEncrypted naming the file", err)
	}
	_, err = browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{State: sandbox.StateFile{Path: file, IdentityFile: otherFile}})
	if !errors.Is(err, sandbox.ErrStateKey) {
		t.Errorf("opening with another key: %v; want ErrStateKey", err)
	}
	if _, _, err := sandbox.ReadState(sandbox.StateFile{Path: file, Passphrase: "wrong"}); !errors.Is(err, sandbox.ErrStateKey) {
		t.Errorf("reading with a passphrase: %v; want ErrStateKey", err)
	}

	again := openSession(t, sandbox.SessionConfig{State: st})
	if who, tok := site.account(t, again); who != "Signed in" || tok != "token present" {
		t.Errorf("with the key: %q, %q; want signed in with the token", who, tok)
	}
}

func TestStatePassphrase(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.age")
	want := &sandbox.StorageState{Cookies: []playwright.Cookie{{Name: "a", Value: "passphrase-secret", Domain: "example.com", Path: "/", Expires: -1}}, Origins: []playwright.Origin{}}
	f := sandbox.StateFile{Path: file, Passphrase: "correct horse battery staple"}
	if err := sandbox.WriteState(f, want); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(file)
	if bytes.Contains(raw, []byte("passphrase-secret")) {
		t.Error("the passphrase-encrypted file holds the cookie in the clear")
	}
	got, enc, err := sandbox.ReadState(f)
	if err != nil || !enc || len(got.Cookies) != 1 || got.Cookies[0].Value != "passphrase-secret" {
		t.Fatalf("ReadState = %+v, %v, %v", got, enc, err)
	}
	if _, _, err := sandbox.ReadState(sandbox.StateFile{Path: file}); !errors.Is(err, sandbox.ErrStateEncrypted) {
		t.Errorf("without the passphrase: %v", err)
	}
	if _, _, err := sandbox.ReadState(sandbox.StateFile{Path: file, Passphrase: "wrong"}); !errors.Is(err, sandbox.ErrStateKey) {
		t.Errorf("with a wrong passphrase: %v", err)
	}
	if err := sandbox.WriteState(sandbox.StateFile{Path: file, Passphrase: "x", IdentityFile: "y"}, want); err == nil {
		t.Error("a passphrase and an identity file together were accepted")
	}
}

func TestStateBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage":   "sid=super-secret-value",
		"array":     `["super-secret-value"]`,
		"no-domain": `{"cookies":[{"name":"sid","value":"super-secret-value","path":"/"}]}`,
		"two":       `{} {"x":"super-secret-value"}`,
	} {
		file := filepath.Join(dir, name)
		os.WriteFile(file, []byte(content), 0o600)
		_, err := browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{State: sandbox.StateFile{Path: file}})
		if err == nil {
			t.Errorf("%s: a bad state file was accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "super-secret-value") {
			t.Errorf("%s: the error quotes the file: %v", name, err)
		}
	}
	if _, err := browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{State: sandbox.StateFile{Passphrase: "x"}}); err == nil {
		t.Error("a key without a state file was accepted")
	}
	sess := openSession(t, sandbox.SessionConfig{})
	if _, err := sess.SaveState(context.Background()); err == nil {
		t.Error("SaveState without a state file succeeded")
	}
}

func TestRecordingHasNoCookieValues(t *testing.T) {
	site := newLoginSite(t)
	har := filepath.Join(t.TempDir(), "rec.har")
	sess := openSession(t, sandbox.SessionConfig{RecordHAR: har})
	p := page(t, sess)
	if _, err := p.Goto(site.URL + "/login"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto(site.URL + "/account"); err != nil { // sends the cookie
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(site.cookie)) {
		t.Error("the recording holds the session cookie's value")
	}
	if !bytes.Contains(raw, []byte("sid=surf-redacted")) {
		t.Error("the recording lost the cookie's name (it should keep names, redact values)")
	}
}

func FuzzParseState(f *testing.F) {
	f.Add([]byte(`{"cookies":[{"name":"a","value":"b","domain":"x.test","path":"/","expires":-1,"httpOnly":false,"secure":false,"sameSite":"Lax"}],"origins":[{"origin":"https://x.test","localStorage":[{"name":"k","value":"v"}]}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"cookies":[{"domain":""}]}`))
	f.Add([]byte(`null`))
	pol := policy.MustNew(policy.Config{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		st, err := sandbox.ParseState(raw)
		if err != nil {
			return
		}
		kept, sum := sandbox.FilterState(st, pol)
		if sum.Cookies+sum.DroppedCookies != len(st.Cookies) || sum.Origins+sum.DroppedOrigins != len(st.Origins) || len(kept.Cookies) != sum.Cookies {
			t.Fatalf("counts do not add up: %+v for %d cookies, %d origins", sum, len(st.Cookies), len(st.Origins))
		}
	})
}
