// Package browsertest is surf's harness for real-browser tests.
//
// It gives one Chromium per test binary (launched on first use, with every enforcement
// layer on and a policy that allows loopback test servers, see Policy), a
// fresh isolated session per test, names a test can point anywhere
// (MapHost), and a check after the run that no browser process or temp
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
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/policy"
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
// browser process or temp profile started by this binary remains. It
// calls sandbox.RunLauncher first, so the test binary can launch browsers.
//
// The binary gets a temporary directory of its own: Main makes it under
// the shared one ($TMPDIR or /tmp) before the tests run and points TMPDIR
// at it, so the Playwright driver, the browsers and the sandboxes (which
// inherit the environment) make their profiles there. The leak check
// judges only that directory: a profile that another program (a killed
// surf, another test run) leaves in the shared temp dir is none of this
// binary's business. Main removes the directory at the end.
func Main(m *testing.M) {
	sandbox.RunLauncher()
	os.Exit(run(m))
}

// run is Main without the exit: m is anything with testing.M's Run.
func run(m interface{ Run() int }) (code int) {
	tmp, err := enterPrivateTemp()
	if err != nil {
		fmt.Fprintf(os.Stderr, "browsertest: %v\n", err)
		return 1
	}
	defer func() {
		if err := tmp.leave(); err != nil {
			fmt.Fprintf(os.Stderr, "browsertest: %v\n", err)
			code = 1
		}
	}()
	before := playwrightProfiles()
	// A dead process that had this pid may have left its browsers behind.
	for _, l := range sandbox.Leftovers() {
		before[l] = true
	}
	code = m.Run()
	mu.Lock()
	for i := len(extra) - 1; i >= 0; i-- {
		extra[i]()
	}
	extra = nil
	mu.Unlock()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "browsertest: closing the browser: %v\n", err)
			code = 1
		}
		shared, initErr, once = nil, nil, sync.Once{}
	}
	if left := leftovers(before); len(left) > 0 {
		fmt.Fprintln(os.Stderr, "browsertest: browser state outlived the tests:")
		for _, l := range left {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
		code = 1
	}
	return code
}

// privateTemp is a test binary's own temporary directory, which TMPDIR
// names while the tests run.
type privateTemp struct {
	dir       string
	oldTMPDIR string
	hadTMPDIR bool
}

// enterPrivateTemp makes a directory under the shared temp dir and points
// TMPDIR (and so os.TempDir and every child process) at it.
func enterPrivateTemp() (*privateTemp, error) {
	dir, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		return nil, fmt.Errorf("making the test binary's temp dir: %w", err)
	}
	p := &privateTemp{dir: dir}
	p.oldTMPDIR, p.hadTMPDIR = os.LookupEnv("TMPDIR")
	if err := os.Setenv("TMPDIR", dir); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("setting TMPDIR: %w", err)
	}
	return p, nil
}

// leave points TMPDIR back where it was and removes the directory with
// whatever the run left in it (the leak check has judged it already).
func (p *privateTemp) leave() error {
	if p.hadTMPDIR {
		os.Setenv("TMPDIR", p.oldTMPDIR)
	} else {
		os.Unsetenv("TMPDIR")
	}
	if err := os.RemoveAll(p.dir); err != nil {
		return fmt.Errorf("removing the test binary's temp dir: %w", err)
	}
	return nil
}

// leftovers waits briefly for processes to exit (Close has already killed
// them; the kernel may take a moment to reap), then lists what remains
// that was not there before the run.
func leftovers(before map[string]bool) []string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		var left []string
		for _, l := range sandbox.Leftovers() {
			if !before[l] {
				left = append(left, l)
			}
		}
		for p := range playwrightProfiles() {
			if !before[p] && !foreignInUse(p) {
				left = append(left, "playwright profile "+p)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// playwrightProfiles lists the temp profiles Playwright creates for the
// browsers it launches, in the temp dir (the binary's own, in Main). (Its
// artifacts dirs go with them: a driver that leaves one leaves the other.)
func playwrightProfiles() map[string]bool {
	m := map[string]bool{}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "playwright_chromiumdev_profile-*"))
	for _, p := range matches {
		m[p] = true
	}
	return m
}

// foreignInUse reports whether a live browser that this process did not
// start uses profile: a child process of a test (a helper binary that
// inherited TMPDIR) may still be closing its own.
func foreignInUse(profile string) bool {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return false
	}
	want := []byte("--user-data-dir=" + profile + "\x00")
	mine := []byte(sandbox.OwnerEnv + "=" + strconv.Itoa(os.Getpid()) + "\x00")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !bytes.Contains(cmd, want) {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if !bytes.Contains(env, mine) {
			return true
		}
	}
	return false
}

// Policy is the shared browser's policy: the default policy (public hosts)
// plus the loopback network 127.0.0.0/8 and [::1], where test servers
// listen. A test that needs a stricter policy narrows it for its session
// (SessionConfig.Policy); tests of the gate put their canaries on loopback
// addresses that their session's policy leaves out, such as 127.0.0.2.
func Policy() *policy.Policy {
	return policy.MustNew(policy.Config{Allow: []policy.HostRule{
		mustRule("*"), mustRule("127.0.0.0/8"), mustRule("[::1]"),
	}})
}

func mustRule(s string) policy.HostRule {
	r, err := policy.ParseHostRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// Resolver is the name resolver the shared browser's egress proxy uses:
// names registered with MapHost resolve to their addresses, other names
// through net.DefaultResolver. Tests that start their own sandbox can pass
// it in sandbox.Config.Resolver.
func Resolver() sandbox.Resolver { return hosts }

// MapHost makes name resolve to addrs for the egress proxy (of the shared
// browser, and of sandboxes using Resolver), as a DNS server under a
// test's control would: for example a name that resolves to a private
// address, to test DNS rebinding. Use names under .test (RFC 6761).
func MapHost(name string, addrs ...netip.Addr) {
	hosts.mu.Lock()
	defer hosts.mu.Unlock()
	hosts.m[strings.ToLower(strings.TrimSuffix(name, "."))] = addrs
}

var hosts = &hostTable{m: map[string][]netip.Addr{}}

type hostTable struct {
	mu sync.Mutex
	m  map[string][]netip.Addr
}

var _ sandbox.Resolver = (*hostTable)(nil)

func (h *hostTable) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	h.mu.Lock()
	addrs, ok := h.m[strings.ToLower(strings.TrimSuffix(host, "."))]
	h.mu.Unlock()
	if ok {
		return addrs, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
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
		shared, initErr = sandbox.New(ctx, sandbox.Config{Env: Env(), Policy: Policy(), Resolver: Resolver()})
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
