package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestLayersInInfo: the shared browser runs with every layer on, inside
// bwrap, and says so.
func TestLayersInInfo(t *testing.T) {
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	info := sess.Info()
	checkLayersOn(t, info.Info)
	if info.OSSandbox != "bwrap" {
		t.Fatalf("OS sandbox %q; want bwrap (install bubblewrap: 'surf install --with-deps')", info.OSSandbox)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", info.PID))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(b), "\x00")
	if filepath.Base(args[0]) != "bwrap" || !strings.Contains(string(b), "--ro-bind\x00/\x00/") {
		t.Errorf("the browser's process %d is %q; want bwrap", info.PID, args[:min(len(args), 4)])
	}
	if info.Proxy == "" || !strings.HasPrefix(info.Proxy, "127.0.0.1:") {
		t.Errorf("session proxy %q", info.Proxy)
	}
}

// TestChromiumSandboxOn: Chromium's own sandbox runs by default, as root
// too (inside bubblewrap, as an unprivileged user): a renderer of the
// shared browser is confined by seccomp-bpf, in its own user and network
// namespaces, and no browser process was started with --no-sandbox.
func TestChromiumSandboxOn(t *testing.T) {
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto("about:blank"); err != nil {
		t.Fatal(err)
	}
	info := sess.Info()
	if info.NoSandbox || !strings.HasPrefix(info.ChromiumSandbox, "on") {
		t.Fatalf("Chromium's sandbox is %q (no_sandbox %v); want on", info.ChromiumSandbox, info.NoSandbox)
	}
	renderers := 0
	for _, pid := range descendants(info.PID) {
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue // gone meanwhile
		}
		if strings.Contains(string(cmd), "\x00--no-sandbox\x00") || strings.HasSuffix(string(cmd), "\x00--no-sandbox\x00") {
			t.Errorf("browser process %d runs with --no-sandbox", pid)
		}
		if !strings.Contains(string(cmd), "--type=renderer") {
			continue
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil {
			continue
		}
		renderers++
		if !strings.Contains(string(status), "Seccomp:\t2") {
			t.Errorf("renderer %d is not confined by seccomp-bpf", pid)
		}
		own, _ := os.Readlink("/proc/self/ns/net")
		if ns, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid)); ns == "" || ns == own {
			t.Errorf("renderer %d shares surf's network namespace (%q)", pid, ns)
		}
	}
	if renderers == 0 {
		t.Fatalf("no renderer found below the browser's process %d", info.PID)
	}
}

// descendants lists the processes below pid (not pid itself).
func descendants(root int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// TestSessionPolicyNarrows: a session's policy narrows the sandbox's and
// cannot widen it; the layers enforce the session's.
func TestSessionPolicyNarrows(t *testing.T) {
	f := newFixtures(t)
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{
		{Host: "127.0.0.1"}, {Host: "10.1.2.3"},
	}})})
	// 10.1.2.3 is private: the sandbox's policy does not allow it, so the
	// session cannot either.
	if d := sess.Policy().DecideURL(policy.Navigation, "http://10.1.2.3/", ""); d.Allowed() {
		t.Errorf("the session widened the sandbox's policy: %+v", d)
	}
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto(f.a.URL + "/ok/narrow/a"); err != nil {
		t.Fatal(err)
	}
	// 127.0.0.3: the sandbox allows it, the session does not.
	if _, err := p.Goto(f.b.URL + "/ok/narrow/b"); err != nil {
		t.Fatal(err)
	}
	if title, _ := p.Title(); title != "Blocked by surf" {
		t.Errorf("navigation outside the session's policy shows %q; want surf's block page", title)
	}
	if f.hit("/ok/narrow/b") != 0 {
		t.Error("the session reached a host its policy does not allow")
	}
	d := sess.TakeDenials()
	if len(d) != 1 || d[0].Layer != sandbox.LayerRequest || !d[0].Navigation || d[0].Host != "127.0.0.3" ||
		d[0].Decision.Verdict != policy.Deny || d[0].Decision.Rule != policy.RulePrivateNetworks {
		t.Errorf("denials = %+v", d)
	}
	if again := sess.TakeDenials(); len(again) != 0 {
		t.Errorf("TakeDenials did not drain: %+v", again)
	}
}

// TestDenialsAreRedactedAndRecorded: secrets never appear in denials; the
// action gate's denials go through the same channel.
func TestDenialsAreRedactedAndRecorded(t *testing.T) {
	f := newFixtures(t)
	c := newCanary(t)
	var mu sync.Mutex
	var hooked []sandbox.Denial
	pol, err := policy.New(policy.Config{
		Allow:   []policy.HostRule{{Host: "127.0.0.1"}},
		Secrets: []policy.Secret{{Name: "token", Value: "hunter2-very-secret", Hosts: []policy.HostRule{{Host: "127.0.0.1"}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol, OnDenial: func(d sandbox.Denial) {
		mu.Lock()
		hooked = append(hooked, d)
		mu.Unlock()
	}})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto(f.a.URL + "/ok/redact/page"); err != nil {
		t.Fatal(err)
	}
	p.Evaluate(`u => fetch(u).catch(() => {})`, c.origin()+"/c/redact?token=hunter2-very-secret")
	sess.RecordDenial(sandbox.Denial{Kind: policy.Navigation, URL: "https://x.example/?t=hunter2-very-secret",
		Decision: policy.Decision{Verdict: policy.Deny, Rule: "allow", Reason: "denied: https://x.example/?t=hunter2-very-secret is not in the allowlist"}})
	deadline := time.Now().Add(5 * time.Second)
	var d []sandbox.Denial
	for time.Now().Before(deadline) && len(d) < 2 {
		d = append(d, sess.TakeDenials()...)
		time.Sleep(50 * time.Millisecond)
	}
	if len(d) != 2 {
		t.Fatalf("denials = %+v; want the fetch and the recorded action", d)
	}
	for _, x := range d {
		s := fmt.Sprintf("%+v", x)
		if strings.Contains(s, "hunter2") || !strings.Contains(x.URL, "<secret:token>") {
			t.Errorf("denial not redacted: %s", s)
		}
	}
	if d[1].Layer != sandbox.LayerAction {
		t.Errorf("recorded denial has layer %q; want action", d[1].Layer)
	}
	mu.Lock()
	if len(hooked) != 2 {
		t.Errorf("OnDenial saw %d denials", len(hooked))
	}
	mu.Unlock()
	if c.hits() != 0 {
		t.Errorf("canary: %v", c)
	}
}

// TestFileAndDataNavigationsAreBlocked: URLs the model might ask for that
// the policy never allows.
func TestFileAndDataNavigationsAreBlocked(t *testing.T) {
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"file:///etc/passwd", "data:text/html,<title>data-loaded</title>"} {
		p.Goto(u)
		// A data: document is replaced right after it commits.
		deadline := time.Now().Add(5 * time.Second)
		for {
			content, _ := p.Content()
			title, _ := p.Title()
			if !strings.Contains(content, "root:x:0") && title != "data-loaded" {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s loaded: %.200s", u, content)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	d := sess.TakeDenials()
	if len(d) != 2 || d[0].Decision.Rule != policy.RuleSchemes || d[1].Decision.Rule != policy.RuleSchemes {
		t.Errorf("denials = %+v; want two scheme denials", d)
	}
}

var (
	noLayersOnce sync.Once
	noLayersSB   *sandbox.Sandbox
	noLayersErr  error
)

// noLayersSandbox is a private browser with every layer off, shared by
// the tests that use it as a control.
func noLayersSandbox(t *testing.T) *sandbox.Sandbox {
	noLayersOnce.Do(func() {
		noLayersSB, noLayersErr = sandbox.New(context.Background(), sandbox.Config{
			Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver(),
			DisableRequestGate: true, DisableEgressProxy: true, DisableOSSandbox: true, DisableChromiumSandbox: true,
			Args: []string{"--host-resolver-rules=MAP rebind.test 127.0.0.2"},
		})
		if noLayersErr == nil {
			browsertest.AtExit(func() { noLayersSB.Close() })
		}
	})
	if noLayersErr != nil {
		t.Fatal(noLayersErr)
	}
	return noLayersSB
}

// TestOSSandboxHidesHome: with nothing but the OS sandbox between the
// browser and the file system (file: URLs allowed), a file in the surf
// user's home directory cannot be read. The control browser, without the
// OS sandbox, reads it.
func TestOSSandboxHidesHome(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(home, fmt.Sprintf(".surf-test-planted-%d", os.Getpid()))
	if err := os.WriteFile(planted, []byte("planted-secret-content"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(planted)
	read := func(sb *sandbox.Sandbox) string {
		sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer sess.Close()
		p, err := sess.NewPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		p.Goto("file://"+planted, playwright.PageGotoOptions{Timeout: playwright.Float(5000)})
		content, _ := p.Content()
		return content
	}
	osOnly := layerSandbox(t, sandbox.Config{DisableRequestGate: true, DisableEgressProxy: true})
	if info := osOnly.Info(); info.OSSandbox != "bwrap" {
		t.Fatalf("OS sandbox %q; want bwrap", info.OSSandbox)
	}
	if c := read(osOnly); strings.Contains(c, "planted-secret-content") {
		t.Errorf("the browser in the OS sandbox read %s", planted)
	}
	if c := read(noLayersSandbox(t)); !strings.Contains(c, "planted-secret-content") {
		t.Errorf("control: the browser without the OS sandbox did not read %s: %.200s", planted, c)
	}
}

// TestProxyAddressChecks: the proxy layer fails closed when it cannot be
// set up.
func TestProxyAddressChecks(t *testing.T) {
	for _, cfg := range []sandbox.Config{
		{ProxyListen: "0.0.0.0"},               // where would the browser connect?
		{ProxyListen: "not-an-ip"},             // must be an IP
		{ProxyListen: "192.0.2.1"},             // not an address of this machine
		{Args: []string{"--proxy-server=x:1"}}, // would bypass the proxy
		{Args: []string{"--no-proxy-server"}},  // would bypass the proxy
		{ProxyAdvertise: "a@b"},                // not a host
		{Args: []string{"--host-resolver-rules=MAP * 1.2.3.4"}},
	} {
		cfg.Env = browsertest.Env()
		sb, err := sandbox.New(context.Background(), cfg)
		if err == nil {
			sb.Close()
			t.Errorf("New(%+v) started; want an error", cfg)
		}
	}
}

// TestLoopbackServerThroughGateAndProxy: an allowed loopback page loads
// through both layers, with its requests logged by the server.
func TestGatedPageStillWorks(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := listen(t, "127.0.0.1", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<title>ok</title><img src="/r1"><script>fetch("/api", {method: "POST", body: "x"})</script>`)
		case "/r1":
			http.Redirect(w, r, "/img", http.StatusFound)
		default:
			w.Write(onePixelPNG)
		}
	}))
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto(srv.URL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateNetworkidle}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := strings.Join(paths, " ")
	mu.Unlock()
	for _, want := range []string{"/", "/r1", "/img", "/api"} {
		if !strings.Contains(" "+got+" ", " "+want+" ") {
			t.Errorf("server saw %q; want %s among them", got, want)
		}
	}
	if d := sess.TakeDenials(); len(d) != 0 {
		t.Errorf("denials on an allowed page: %+v", d)
	}
}

// TestLaunchProxyCoversRawContexts: a context opened on the browser
// directly (not a session) goes through the launch proxy, which enforces
// the sandbox's policy.
func TestLaunchProxyCoversRawContexts(t *testing.T) {
	sb := browsertest.Sandbox(t)
	bctx, err := sb.Browser().NewContext()
	if err != nil {
		t.Fatal(err)
	}
	defer bctx.Close()
	p, err := bctx.NewPage()
	if err != nil {
		t.Fatal(err)
	}
	// 10.255.255.1 is private: the sandbox's policy denies it, and the
	// proxy says so at once (no connection is tried).
	resp, err := p.Goto("http://10.255.255.1:8080/", playwright.PageGotoOptions{Timeout: playwright.Float(10000)})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := resp.Text()
	if resp.Status() != 403 || !strings.Contains(body, "surf egress proxy: denied") {
		t.Errorf("raw context: %d %q; want the launch proxy's 403", resp.Status(), body)
	}
}
