package main

import (
	"bufio"
	"bytes"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServeHTTP starts "surf serve --http 127.0.0.1:0 ARGS..." with the
// bearer token and returns its MCP endpoint and process. At cleanup it is
// interrupted; with cleanExit its exit must be clean; when the test failed,
// its stderr is logged.
func startServeHTTP(t *testing.T, token string, cleanExit bool, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := surfCmd(append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs bytes.Buffer
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "surf: serving MCP (streamable HTTP) at "); ok {
				endpoint <- rest
			}
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil && cleanExit {
			t.Errorf("surf serve: %v", err)
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("surf serve's stderr:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	select {
	case url := <-endpoint:
		return url, cmd
	case <-time.After(2 * time.Minute):
		t.Fatal("surf serve did not start")
	}
	return "", nil
}

// TestServeHTTPPrintsLoginAddress: surf serve --http prints the address
// that logs a browser in to the live view, with the token, as surf work
// --ui does, and opening it does log in (a cookie, then the page).
func TestServeHTTPPrintsLoginAddress(t *testing.T) {
	const token = "login-token-0123456789abcdef0123"
	cmd := surfCmd("serve", "--http", "127.0.0.1:0")
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	re := regexp.MustCompile(`^surf: live view at (http://127\.0\.0\.1:\d+/\?token=(\S+))$`)
	var login string
	var seen []string
	deadline := time.After(2 * time.Minute)
	for login == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("surf serve ended; it said:\n%s", strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				if m[2] != token {
					t.Fatalf("the login address carries %q, want the server's token", m[2])
				}
				login = m[1]
			}
			if strings.Contains(l, "live view at") && login == "" {
				t.Fatalf("the live view's address is not one that logs in: %q", l)
			}
		case <-deadline:
			t.Fatalf("surf serve printed no live view address:\n%s", strings.Join(seen, "\n"))
		}
	}
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	resp, err := hc.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.RawQuery != "" {
		t.Errorf("opening %s: %d at %s, want 200 at the page without the token", login, resp.StatusCode, resp.Request.URL)
	}
}
