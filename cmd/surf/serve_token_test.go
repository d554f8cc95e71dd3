package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
)

// TestServeHTTPToken runs "surf serve --http" on loopback without a token
// flag: surf makes a token, writes it to a 0600 file in the runtime
// directory and refuses requests without it (401), so that other local
// users cannot drive its browser; a go-sdk client with the token works.
// On exit the file is removed.
func TestServeHTTPToken(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	rt := filepath.Join(t.TempDir(), "rt")
	cmd := surfCmd("serve", "--http", "127.0.0.1:0", "--allow", site.Host)
	cmd.Env = append(cmd.Env, "SURF_RUNTIME_DIR="+rt) // the last one counts
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var log strings.Builder
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			select {
			case lines <- sc.Text():
			default:
			}
		}
		close(lines)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
			t.Errorf("surf serve did not exit on SIGTERM")
		}
	}
	t.Cleanup(stop)
	defer func() {
		if t.Failed() {
			logMu.Lock()
			t.Logf("surf serve's stderr:\n%s", log.String())
			logMu.Unlock()
		}
	}()

	tokenRE := regexp.MustCompile(`the bearer token is in (\S+) \(mode 0600\)`)
	serveRE := regexp.MustCompile(`serving MCP \(streamable HTTP\) at (http://\S+)`)
	var tokenPath, endpoint string
	timeout := time.After(2 * time.Minute)
	for endpoint == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("surf serve ended before serving")
			}
			if m := tokenRE.FindStringSubmatch(l); m != nil {
				tokenPath = m[1]
			}
			if m := serveRE.FindStringSubmatch(l); m != nil {
				endpoint = m[1]
			}
		case <-timeout:
			t.Fatal("surf serve did not start serving")
		}
	}
	if want := filepath.Join(rt, "serve-"+endpoint[strings.LastIndex(endpoint, ":")+1:strings.LastIndex(endpoint, "/")]+".token"); tokenPath != want {
		t.Fatalf("token file %q, want %q", tokenPath, want)
	}
	fi, err := os.Lstat(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o600 {
		t.Errorf("token file mode %v, want -rw-------", fi.Mode())
	}
	b, err := os.ReadFile(tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(b))
	if len(token) < 32 {
		t.Fatalf("token %q is too short", token)
	}

	for _, auth := range []string{"", "Bearer wrong-token-0123456789abcdef", "Bearer " + token + "x"} {
		if code := initialize(t, endpoint, auth); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d, want 401", auth, code)
		}
	}
	if code := initialize(t, endpoint, "Bearer "+token); code != http.StatusOK {
		t.Errorf("with the token: status %d, want 200", code)
	}

	// A real MCP client with the token drives the browser.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatalf("connecting with the token: %v", err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(resultText(res), `title "Riverside Library"`) {
		t.Errorf("visit_url with the token: IsError=%v\n%s", res.IsError, resultText(res))
	}
	cs.Close()
	// Without the token, the go-sdk client cannot even connect.
	if cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil); err == nil {
		cs.Close()
		t.Error("a client without the token connected")
	}

	t.Run("other local user", func(t *testing.T) { otherLocalUser(t, endpoint, tokenPath) })

	stop()
	if _, err := os.Lstat(tokenPath); !os.IsNotExist(err) {
		t.Errorf("the token file outlived surf serve: %v", err)
	}
}

// otherLocalUser plays another user of the machine (uid 65534, "nobody")
// against a running surf serve: it can reach the loopback port, but
// cannot read the token file, and its requests without the token are
// refused. Switching users needs root.
func otherLocalUser(t *testing.T, endpoint, tokenPath string) {
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root; the 401s above cover the refusal")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to play the other user")
	}
	hostport := strings.TrimSuffix(strings.TrimPrefix(endpoint, "http://"), "/mcp")
	host, port, _ := strings.Cut(hostport, ":")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"http://127.0.0.1:9/"}}}`
	script := `
cat "$TOKEN_FILE" >/dev/null 2>&1 && echo "read the token file"
exec 3<>"/dev/tcp/$HOST/$PORT" || { echo "no connection"; exit 0; }
printf 'POST /mcp HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s' "$HOST" "$PORT" "${#BODY}" "$BODY" >&3
head -n 1 <&3
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TOKEN_FILE=" + tokenPath, "HOST=" + host, "PORT=" + port, "BODY=" + body}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running as another user: %v\n%s", err, out)
	}
	got := string(out)
	if strings.Contains(got, "read the token file") {
		t.Error("another user read the token file")
	}
	if !strings.Contains(got, "HTTP/1.1 401") {
		t.Errorf("another user's request without the token: %q, want 401", got)
	}
}

// initialize posts an MCP initialize request and returns the status.
func initialize(t *testing.T, endpoint, auth string) int {
	t.Helper()
	req, err := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
