package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// Saved logins on a loopback login site whose secrets are new for every
// script:
//
//	loginsite start    serves the site; sets $LOGIN_URL, $LOGIN_HOST and
//	                   the secrets $LOGIN_COOKIE (the session cookie's
//	                   value) and $LOGIN_TOKEN (a local-storage token)
//	no-secrets STATE PATH...
//	                   fails if a file under PATHs holds a secret: either
//	                   value, the state file's raw contents, or any value
//	                   of its cookies and local storage (when it is plain
//	                   JSON)
//	file-mode FILE MODE
//	                   fails unless FILE's permission bits are MODE (octal)
func init() {
	scriptCmds["loginsite"] = cmdLoginSite
	scriptCmds["no-secrets"] = cmdNoSecrets
	scriptCmds["file-mode"] = cmdFileMode
}

func randomHex(ts *testscript.TestScript, n int) string {
	b := make([]byte, n)
	_, err := rand.Read(b)
	ts.Check(err)
	return hex.EncodeToString(b)
}

// loginSite is the site: /magic logs in by itself (a magic link: it sets
// the session cookie and stores the token in local storage), /account
// says who is signed in and whether the token is in local storage,
// without ever showing either value (the page holds the token's SHA-256
// and compares).
func loginSite(cookie, token string) http.Handler {
	sum := sha256.Sum256([]byte(token))
	mux := http.NewServeMux()
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body>%s</body></html>", html.EscapeString(title), body)
	}
	mux.HandleFunc("/magic", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: cookie, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
		page(w, "Welcome", `<h1>Welcome back</h1><p>You are logged in.</p><p><a href="/account">Your account</a></p>`+
			`<script>localStorage.setItem("token", `+strconv.Quote(token)+`)</script>`)
	})
	mux.HandleFunc("/account", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("sid")
		if err != nil || c.Value != cookie {
			page(w, "Sign in", `<h1>Signed out</h1><p>You are not signed in.</p><p><a href="/magic">Sign in</a></p>`)
			return
		}
		page(w, "Account", `<h1>Account</h1><p>Signed in as Ada Lovelace</p><p id="t">Token: checking</p>
<script>
(async () => {
  const t = localStorage.getItem("token") || "";
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(t));
  const hex = [...new Uint8Array(d)].map(b => b.toString(16).padStart(2, "0")).join("");
  document.getElementById("t").textContent = hex === "`+hex.EncodeToString(sum[:])+`" ? "Token: present" : "Token: missing";
})();
</script>`)
	})
	return mux
}

func cmdLoginSite(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || args[0] != "start" {
		ts.Fatalf("usage: loginsite start")
	}
	cookie, token := "c"+randomHex(ts, 16), "t"+randomHex(ts, 16)
	srv := httptest.NewServer(loginSite(cookie, token))
	ts.Defer(srv.Close)
	ts.Setenv("LOGIN_URL", srv.URL)
	ts.Setenv("LOGIN_HOST", strings.TrimPrefix(srv.URL, "http://"))
	ts.Setenv("LOGIN_COOKIE", cookie)
	ts.Setenv("LOGIN_TOKEN", token)
}

// stateValues are the values of a plain state file's cookies and local
// storage (none for an encrypted file).
func stateValues(raw []byte) []string {
	var st struct {
		Cookies []struct{ Value string } `json:"cookies"`
		Origins []struct {
			LocalStorage []struct{ Value string } `json:"localStorage"`
		} `json:"origins"`
	}
	if json.Unmarshal(raw, &st) != nil {
		return nil
	}
	var out []string
	for _, c := range st.Cookies {
		out = append(out, c.Value)
	}
	for _, o := range st.Origins {
		for _, kv := range o.LocalStorage {
			out = append(out, kv.Value)
		}
	}
	return out
}

func cmdNoSecrets(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: no-secrets STATE PATH...")
	}
	raw, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	secrets := map[string]string{"the state file": string(bytes.TrimSpace(raw))}
	for _, k := range []string{"LOGIN_COOKIE", "LOGIN_TOKEN"} {
		if v := ts.Getenv(k); v != "" {
			secrets["$"+k] = v
		} else {
			ts.Fatalf("$%s is not set: run loginsite start first", k)
		}
	}
	for i, v := range stateValues(raw) {
		if len(v) >= 8 { // short values ("1", "dark") are not secrets worth the name
			secrets[fmt.Sprintf("state value %d", i)] = v
		}
	}
	files := 0
	for _, root := range args[1:] {
		err := filepath.WalkDir(ts.MkAbs(root), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files++
			for what, v := range secrets {
				if bytes.Contains(b, []byte(v)) {
					ts.Fatalf("%s holds %s", path, what)
				}
			}
			return nil
		})
		ts.Check(err)
	}
	if files == 0 {
		ts.Fatalf("no files under %s", strings.Join(args[1:], " "))
	}
	fmt.Fprintf(ts.Stdout(), "no secret in %d files\n", files)
}

func cmdFileMode(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: file-mode FILE MODE")
	}
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	if got := fi.Mode().Perm(); (got == os.FileMode(want)) == neg {
		ts.Fatalf("%s has mode %#o", args[0], got)
	}
}

// TestLoginInterruptSavesNothing: Ctrl-C during "surf login" leaves the
// state file exactly as it was, and no work copy beside it; the exit code
// is 130.
func TestLoginInterruptSavesNothing(t *testing.T) {
	srv := httptest.NewServer(loginSite("c-interrupted-cookie", "t-interrupted-token"))
	defer srv.Close()
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	before := []byte(`{"cookies":[{"name":"sid","value":"earlier","domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],"origins":[]}`)
	if err := os.WriteFile(state, before, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := surfCmd("login", srv.URL+"/magic", "--state", state, "--headless", "--allow", "127.0.0.1")
	stdin, err := cmd.StdinPipe() // open, and never written: no Enter
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the prompt: the page is open and the login waits.
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "press Enter") {
		n, err := stderr.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			cmd.Wait()
			t.Fatalf("login ended before its prompt: %v\n%s", err, seen.String())
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(stderr)
	seen.Write(rest)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("login after Ctrl-C: %v, want exit status 130\n%s", err, seen.String())
	}
	if !strings.Contains(seen.String(), "surf: interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", seen.String())
	}
	after, err := os.ReadFile(state)
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("the state file changed after Ctrl-C (err %v)", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left beside the state file: %v", names)
	}
}

// TestServeState: "surf serve --state FILE" starts each connection's
// default session from FILE (a file in Playwright's shape, written by
// hand here) and saves it back when the connection ends; "--state-dir
// DIR" keeps a named session's state as DIR/NAME.json. No tool result
// carries the cookie's or the token's value.
func TestServeState(t *testing.T) {
	cookie, token := "c"+rand.Text(), "t"+rand.Text()
	srv := httptest.NewServer(loginSite(cookie, token))
	defer srv.Close()
	dir := t.TempDir()
	state, stateDir := filepath.Join(dir, "default.json"), filepath.Join(dir, "named")
	file := fmt.Sprintf(`{"cookies":[{"name":"sid","value":%q,"domain":"127.0.0.1","path":"/","expires":-1,"httpOnly":true,"secure":false,"sameSite":"Lax"}],`+
		`"origins":[{"origin":%q,"localStorage":[{"name":"token","value":%q}]}]}`, cookie, srv.URL, token)
	if err := os.WriteFile(state, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startServe(t, "--allow", "127.0.0.1", "--image", "none", "--state", state, "--state-dir", stateDir)
	ctx := context.Background()
	call := func(name string, args map[string]any) string {
		t.Helper()
		res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text := resultText(res)
		if res.IsError {
			t.Fatalf("%s: error result: %s", name, text)
		}
		if strings.Contains(text, cookie) || strings.Contains(text, token) {
			t.Fatalf("%s's result holds a secret:\n%s", name, text)
		}
		return text
	}
	if got := call("visit_url", map[string]any{"url": srv.URL + "/account"}); !strings.Contains(got, "Signed in as Ada Lovelace") || !strings.Contains(got, "Token: present") {
		t.Fatalf("the default session did not start signed in:\n%s", got)
	}

	// A named session with its own state file starts empty, logs in,
	// and keeps it in DIR/NAME.json when closed.
	call("session_open", map[string]any{"name": "work", "state": "work"})
	if got := call("visit_url", map[string]any{"url": srv.URL + "/account", "session": "work"}); !strings.Contains(got, "Signed out") {
		t.Fatalf("the named session shares the default's login:\n%s", got)
	}
	call("visit_url", map[string]any{"url": srv.URL + "/magic", "session": "work"})
	call("session_close", map[string]any{"name": "work"})
	named, err := os.ReadFile(filepath.Join(stateDir, "work.json"))
	if err != nil {
		t.Fatalf("the named session's state: %v", err)
	}
	if !bytes.Contains(named, []byte(cookie)) {
		t.Errorf("the named session's state file lacks its login")
	}

	// The connection ends: the default session saves FILE back.
	os.Remove(state)
	t0 := time.Now()
	c.stdin.Close()
	c.wait(t, t0)
	saved, err := os.ReadFile(state)
	if err != nil {
		t.Fatalf("the default session's state was not saved at the end: %v", err)
	}
	if !bytes.Contains(saved, []byte(`"sid"`)) || !bytes.Contains(saved, []byte(token)) {
		t.Errorf("the saved state lacks the cookie or the token")
	}
	for _, p := range []string{state, filepath.Join(stateDir, "work.json")} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %#o, want 0600", p, fi.Mode().Perm())
		}
	}
}
