package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a child's stderr, read while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serveChild is "surf serve" on stdio as a child process, with a go-sdk
// client on its pipes.
type serveChild struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *lockedBuffer
	cs     *mcp.ClientSession
	exited chan error
}

func startServe(t *testing.T, args ...string) *serveChild {
	t.Helper()
	cmd := surfCmd(append([]string{"serve"}, args...)...)
	var err error
	c := &serveChild{cmd: cmd, stderr: &lockedBuffer{}, exited: make(chan error, 1)}
	cmd.Stderr = c.stderr
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		if t.Failed() {
			t.Logf("surf serve's stderr:\n%s", c.stderr.String())
		}
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.cs, err = client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: c.stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to surf serve: %v\n%s", err, c.stderr.String())
	}
	return c
}

// wait waits for the child to exit and checks that it exited with 0,
// logged no error, and left no browser process or temp directory behind.
// It returns how long the exit took from t0.
func (c *serveChild) wait(t *testing.T, t0 time.Time) time.Duration {
	t.Helper()
	var took time.Duration
	select {
	case <-c.exited:
		took = time.Since(t0)
	case <-time.After(time.Minute):
		t.Fatal("surf serve did not exit")
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("surf serve exited with %d, want 0", code)
	}
	if strings.Contains(c.stderr.String(), "level=ERROR") {
		t.Errorf("surf serve logged an error on an ordinary stop:\n%s", c.stderr.String())
	}
	pid := c.cmd.Process.Pid
	if left := ownedBy(pid); len(left) > 0 {
		t.Errorf("browser processes outlived surf serve: %v", left)
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "surf-"+strconv.Itoa(pid)+"-*"))
	if len(dirs) > 0 {
		t.Errorf("surf serve left temp directories behind: %v", dirs)
	}
	return took
}

// stuckPage serves /stuck, which sends its head and the start of its body
// and then nothing more, and reports on loading when the page is loading.
func stuckPage(t *testing.T) (url, host string, loading chan struct{}) {
	t.Helper()
	loading = make(chan struct{}, 4)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stuck":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Stuck</title><p>loading<script>fetch("/loading")</script>`)
			w.(http.Flusher).Flush()
			<-release
		case "/loading":
			loading <- struct{}{}
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	return srv.URL + "/stuck", strings.TrimPrefix(srv.URL, "http://"), loading
}

// TestServeStops: surf serve on stdio stops on SIGINT or SIGTERM, or when
// its stdin closes, idle or with a page load in flight that would never
// end: it exits with 0, logs no error, and leaves no browser process or
// profile behind.
func TestServeStops(t *testing.T) {
	url, host, loading := stuckPage(t)
	cases := []struct {
		name string
		busy bool
		stop func(c *serveChild) error
	}{
		{"idle SIGINT", false, func(c *serveChild) error { return c.cmd.Process.Signal(syscall.SIGINT) }},
		{"SIGINT", true, func(c *serveChild) error { return c.cmd.Process.Signal(syscall.SIGINT) }},
		{"SIGTERM", true, func(c *serveChild) error { return c.cmd.Process.Signal(syscall.SIGTERM) }},
		{"stdin closed", true, func(c *serveChild) error { return c.stdin.Close() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := startServe(t, "--allow", host, "--image", "none")
			if tc.busy {
				go c.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": url}})
				select {
				case <-loading:
				case <-time.After(time.Minute):
					t.Fatalf("the stuck page never loaded\n%s", c.stderr.String())
				}
				time.Sleep(500 * time.Millisecond) // into the wait for the page to load
			} else if _, err := c.cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			if err := tc.stop(c); err != nil {
				t.Fatal(err)
			}
			took := c.wait(t, t0)
			t.Logf("%s: surf serve exited %s after the stop", tc.name, took.Round(time.Millisecond))
		})
	}
}
