// Package browsertest is surf's test harness for real-browser tests: one
// Chromium per test binary (launched on first use), a fresh isolated session
// per test, and a check after the run that no browser process or temp
// profile outlived the tests.
//
// Use it from TestMain:
//
//	func TestMain(m *testing.M) { browsertest.Main(m) }
//
// and in a test:
//
//	sess := browsertest.Session(t, sandbox.SessionConfig{})
package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/sandbox"
)

var (
	once    sync.Once
	shared  *sandbox.Sandbox
	initErr error
	mu      sync.Mutex
	extra   []func() // closers registered by tests (servers, sandboxes)
)

// Main runs the tests, closes the shared browser, and fails the run if any
// browser process or temp profile started by this binary remains.
func Main(m *testing.M) {
	before := playwrightProfiles()
	code := m.Run()
	mu.Lock()
	for i := len(extra) - 1; i >= 0; i-- {
		extra[i]()
	}
	mu.Unlock()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "browsertest: closing the browser: %v\n", err)
			code = 1
		}
	}
	if left := leftovers(before); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "browsertest: browser state outlived the tests:")
		for _, l := range left {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
		code = 1
	}
	os.Exit(code)
}

// leftovers waits briefly for processes to exit (Close has already killed
// them; the kernel may take a moment to reap), then lists what remains.
func leftovers(before map[string]bool) []string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := sandbox.Leftovers()
		for p := range playwrightProfiles() {
			if !before[p] {
				left = append(left, "playwright profile "+p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// playwrightProfiles lists the temp profiles Playwright creates.
func playwrightProfiles() map[string]bool {
	m := map[string]bool{}
	for _, pat := range []string{"playwright_chromiumdev_profile-*", "playwright-artifacts-*"} {
		matches, _ := filepath.Glob(filepath.Join(os.TempDir(), pat))
		for _, p := range matches {
			m[p] = true
		}
	}
	return m
}

// Env is the machine environment tests use (SURF_CHROMIUM and friends).
func Env() sandbox.Env { return sandbox.EnvFrom(os.Getenv) }

// Sandbox returns the binary's shared browser, launching it on first use.
// A machine that is not ready fails the test with the install hint.
func Sandbox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared, initErr = sandbox.New(ctx, sandbox.Config{Env: Env()})
	})
	if initErr != nil {
		if h, ok := initErr.(interface{ Hint() string }); ok {
			t.Fatalf("launching the test browser: %v\nhint: %s", initErr, h.Hint())
		}
		t.Fatalf("launching the test browser: %v", initErr)
	}
	return shared
}

// Session opens a fresh session in the shared browser, closed when the test
// ends.
func Session(t testing.TB, cfg sandbox.SessionConfig) *sandbox.Session {
	t.Helper()
	sb := Sandbox(t)
	sess, err := sb.NewSession(context.Background(), cfg)
	if err != nil {
		t.Fatalf("opening a session: %v", err)
	}
	t.Cleanup(func() {
		if err := sess.Close(); err != nil {
			t.Errorf("closing the session: %v", err)
		}
	})
	return sess
}

// AtExit registers f to run after all tests, before the leak check: for
// resources shared across tests, such as a second sandbox or a server.
func AtExit(f func()) {
	mu.Lock()
	extra = append(extra, f)
	mu.Unlock()
}
