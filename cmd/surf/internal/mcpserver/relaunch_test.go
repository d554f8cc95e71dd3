package mcpserver

import (
	"context"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// ownSandbox launches a private browser for a test that kills it.
func ownSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	sb, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver()})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// TestRelaunch kills the browser under a session: the next call relaunches
// it, opens a fresh context, says so, and works.
func TestRelaunch(t *testing.T) {
	f := serveFixture(t)
	sb := ownSandbox(t)
	t.Cleanup(func() { sb.Close() })
	var relaunched atomic.Int32
	s := newServer(t, f, func(c *Config) {
		c.Sandbox = sb
		c.Relaunch = func(ctx context.Context) (*sandbox.Sandbox, error) {
			relaunched.Add(1)
			return ownSandbox(t), nil
		}
	})
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})

	pid := sb.Info().PID
	if pid == 0 {
		t.Fatal("the sandbox has no browser pid")
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the browser to be seen gone", 20*time.Second, func() bool { return lost(sb) })

	res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/about.html"})
	if got := text(res); !strings.Contains(got, "was relaunched") || !strings.Contains(got, "sold kettles since 1999") {
		t.Errorf("the call after the browser died:\n%s", got)
	}
	if n := relaunched.Load(); n != 1 {
		t.Errorf("relaunched %d times, want 1", n)
	}
	if s.Sessions() != 1 {
		t.Errorf("%d sessions, want 1", s.Sessions())
	}
}
