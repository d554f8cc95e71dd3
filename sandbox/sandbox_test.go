package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

func TestMain(m *testing.M) {
	if os.Getenv("SURF_TEST_HELPER") == "no-launcher" {
		noLauncher() // before RunLauncher, as in a program that forgot it
		return
	}
	sandbox.RunLauncher()
	if os.Getenv("SURF_TEST_HELPER") == "hold-browser" {
		holdBrowser()
		return
	}
	browsertest.Main(m)
}

func page(t *testing.T, sess *sandbox.Session) playwright.Page {
	t.Helper()
	p, err := sess.Context().NewPage()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSessionLoadsPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Hello surf</title><p id=w></p><script>w.textContent=innerWidth+"x"+innerHeight</script>`)
	}))
	defer srv.Close()
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	p := page(t, sess)
	if _, err := p.Goto(srv.URL); err != nil {
		t.Fatal(err)
	}
	title, err := p.Title()
	if err != nil || title != "Hello surf" {
		t.Fatalf("title = %q, %v; want Hello surf", title, err)
	}
	size, err := p.Locator("#w").TextContent()
	if err != nil || size != "1280x720" {
		t.Errorf("viewport = %q, %v; want the default 1280x720", size, err)
	}
	info := sess.Info()
	if info.Version == "" || info.Executable == "" || info.PID == 0 {
		t.Errorf("info lacks the browser: %+v", info)
	}
	if info.NoSandbox || !strings.HasPrefix(info.ChromiumSandbox, "on") {
		t.Errorf("Chromium's own sandbox must be on by default (as root too, inside bubblewrap): %+v", info)
	}
	if fi, err := os.Stat(info.DownloadsDir); err != nil || !fi.IsDir() {
		t.Errorf("downloads dir %q: %v", info.DownloadsDir, err)
	}
}

// cookieServer sets a cookie on /set and echoes the cookies it receives.
func cookieServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: r.URL.Query().Get("v"), Path: "/"})
		}
		fmt.Fprintf(w, "<title>cookies</title><pre id=c>%s</pre>", r.Header.Get("Cookie"))
	}))
}

func TestSessionsAreIsolated(t *testing.T) {
	srv := cookieServer()
	defer srv.Close()
	a := browsertest.Session(t, sandbox.SessionConfig{})
	b := browsertest.Session(t, sandbox.SessionConfig{})

	// Both sessions work at the same time.
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, c := range []struct {
		s *sandbox.Session
		v string
	}{{a, "alice"}, {b, ""}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := c.s.Context().NewPage()
			if err != nil {
				errs <- err
				return
			}
			u := srv.URL + "/"
			if c.v != "" {
				u = srv.URL + "/set?v=" + c.v
			}
			if _, err := p.Goto(u); err != nil {
				errs <- err
				return
			}
			_, err = p.Evaluate(`() => localStorage.setItem("k", location.search || "none")`)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	read := func(s *sandbox.Session) (server, js, storage string) {
		p := page(t, s)
		if _, err := p.Goto(srv.URL + "/read"); err != nil {
			t.Fatal(err)
		}
		server, _ = p.Locator("#c").TextContent()
		v, _ := p.Evaluate(`() => document.cookie`)
		st, _ := p.Evaluate(`() => localStorage.getItem("k")`)
		js, _ = v.(string)
		storage, _ = st.(string)
		return
	}
	if server, js, st := read(a); server != "who=alice" || js != "who=alice" || st != "?v=alice" {
		t.Errorf("session a: server saw %q, document.cookie %q, storage %q; want its own cookie", server, js, st)
	}
	if server, js, st := read(b); server != "" || js != "" || st != "none" {
		t.Errorf("session b sees session a's state: server saw %q, document.cookie %q, storage %q", server, js, st)
	}
	cookies, err := b.Context().Cookies()
	if err != nil || len(cookies) != 0 {
		t.Errorf("session b's cookie jar = %v, %v; want empty", cookies, err)
	}
	if a.Info().DownloadsDir == b.Info().DownloadsDir {
		t.Errorf("sessions share a downloads dir %s", a.Info().DownloadsDir)
	}
}

func TestSessionCloseRemovesItsDirs(t *testing.T) {
	sb := browsertest.Sandbox(t)
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{Viewport: sandbox.Viewport{Width: 800, Height: 600}})
	if err != nil {
		t.Fatal(err)
	}
	dir := sess.Info().DownloadsDir
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("private downloads dir %s survived Close: %v", dir, err)
	}
	if _, err := sess.Context().NewPage(); err == nil {
		t.Error("a closed session still opens pages")
	}
}

func TestSessionRejectsBadConfig(t *testing.T) {
	sb := browsertest.Sandbox(t)
	for _, cfg := range []sandbox.SessionConfig{
		{Viewport: sandbox.Viewport{Width: 100000, Height: 100}},
		{DeviceScaleFactor: 50},
		{UploadsDir: filepath.Join(t.TempDir(), "missing")},
	} {
		if sess, err := sb.NewSession(context.Background(), cfg); err == nil {
			sess.Close()
			t.Errorf("NewSession(%+v) succeeded; want an error", cfg)
		}
	}
}

// TestOwnSandboxCloseKillsEverything launches a second, private browser and
// checks that Close leaves no process and no temp dir.
func TestOwnSandboxCloseKillsEverything(t *testing.T) {
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env()})
	if err != nil {
		t.Fatal(err)
	}
	pid := sb.Info().PID
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := page(t, sess).Goto("about:blank"); err != nil {
		t.Fatal(err)
	}
	profile := userDataDir(t, pid)
	if err := sb.Close(); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(pid) {
		t.Errorf("browser %d alive after Close", pid)
	}
	if profile != "" {
		if _, err := os.Stat(profile); !os.IsNotExist(err) {
			t.Errorf("profile %s survived Close", profile)
		}
	}
	if _, err := sb.NewSession(context.Background(), sandbox.SessionConfig{}); err == nil {
		t.Error("NewSession on a closed sandbox succeeded")
	}
}

func userDataDir(t *testing.T, pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("browser pid %d: %v", pid, err)
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			return v
		}
	}
	t.Fatalf("browser %d has no --user-data-dir", pid)
	return ""
}

// holdBrowser is a helper process: it launches a browser, prints its pid,
// and waits to be killed.
func holdBrowser() {
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("pid", sb.Info().PID)
	select {}
}

// noLauncher is a helper process standing for a program that never calls
// sandbox.RunLauncher: it tries to start a local browser and prints what
// New says.
func noLauncher() {
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env()})
	if err == nil {
		sb.Close()
		fmt.Println("started a browser")
		os.Exit(1)
	}
	fmt.Printf("is ErrNoLauncher: %v\nerror: %v\n", errors.Is(err, sandbox.ErrNoLauncher), err)
}

// TestNoLauncherRefused runs a program that never called RunLauncher: New
// must refuse to launch a local browser, with an error that names the call
// to add, instead of re-executing the program as the launcher.
func TestNoLauncherRefused(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SURF_TEST_HELPER=no-launcher")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "is ErrNoLauncher: true\n") || !strings.Contains(string(out), "sandbox.RunLauncher()") {
		t.Fatalf("New without RunLauncher said:\n%s\nwant ErrNoLauncher naming sandbox.RunLauncher()", out)
	}
}

// TestBrowserDiesWithSurf kills a surf process with SIGKILL (no cleanup
// runs) and checks that its browser dies too.
func TestBrowserDiesWithSurf(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SURF_TEST_HELPER=hold-browser")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "pid ")))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper said %q", line)
	}
	profile := userDataDir(t, pid)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for proc.Alive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if proc.Alive(pid) {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Fatalf("browser %d outlived its killed owner", pid)
	}
	// Playwright removes the profile when its driver exits; the leak check
	// in TestMain would catch it otherwise.
	for time.Now().Before(deadline) {
		if _, err := os.Stat(profile); os.IsNotExist(err) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The killed owner's own temp dir is named after its pid, not ours, so
	// remove it here: SIGKILL gives no process a chance to clean up.
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", cmd.Process.Pid)))
	for _, m := range matches {
		os.RemoveAll(m)
	}
}

func TestNotReadyGivesHint(t *testing.T) {
	env := browsertest.Env()
	env.DriverDir = t.TempDir()
	_, err := sandbox.New(context.Background(), sandbox.Config{Env: env})
	if !errors.Is(err, sandbox.ErrNotReady) {
		t.Fatalf("New with an empty driver dir: %v; want ErrNotReady", err)
	}
	var h interface{ Hint() string }
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "surf install") {
		t.Errorf("error %v has no install hint", err)
	}

	env = browsertest.Env()
	env.Chromium = filepath.Join(t.TempDir(), "no-such-chromium")
	if _, err := sandbox.New(context.Background(), sandbox.Config{Env: env}); !errors.Is(err, sandbox.ErrNotReady) {
		t.Errorf("New with a missing chromium: %v; want ErrNotReady", err)
	}
}

func TestNewHonoursCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if sb, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env()}); err == nil {
		sb.Close()
		t.Fatal("New with a cancelled context succeeded")
	}
}

// driverDir is the installed Playwright driver the tests use.
func driverDir(t testing.TB) string {
	d := browsertest.Env().DriverDir
	if d == "" {
		var err error
		if d, err = sandbox.DefaultDriverDir(); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// startProcess starts a helper server process in its own process group,
// marked as ours so the leak check sees what it starts, and returns the
// first line matching re.
func startProcess(t *testing.T, re *regexp.Regexp, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", sandbox.OwnerEnv, os.Getpid()))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Ask first, so the server can remove its temp profiles; then make
		// sure the whole group is gone.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case s := <-found:
		return s
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not print %v", name, re)
		return ""
	}
}

// titleThrough loads a page through sb and returns its title. The page
// also tries to reach a canary, directly and through a redirect: the
// layers must stop both on a remote browser too.
func titleThrough(t *testing.T, sb *sandbox.Sandbox) string {
	t.Helper()
	c := newCanary(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, c.origin()+"/c/remote/hop", http.StatusFound)
			return
		}
		fmt.Fprintf(w, `<title>Remote hello</title><img src="/hop"><img src="%s/c/remote/direct">`, c.origin())
	}))
	defer srv.Close()
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{
		Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}}),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if info := sess.Info(); info.Proxy == "" || info.RequestGate != "on" || info.OSSandbox != "off: remote browser" {
		t.Errorf("remote session info %+v; want the request gate, a proxy, and no OS sandbox", info)
	}
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Goto(srv.URL, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateNetworkidle}); err != nil {
		t.Fatal(err)
	}
	title, err := p.Title()
	if err != nil {
		t.Fatal(err)
	}
	if c.hits() != 0 {
		t.Errorf("through a remote browser the canary was reached: %v", c)
	}
	if d := sess.TakeDenials(); len(d) < 2 {
		t.Errorf("denials %+v; want the direct request and the redirect hop", d)
	}
	return title
}

// playwrightServerJS starts a Playwright browser server with the documented
// launchServer API (a plain run-server cannot be told which executable to
// use), prints its endpoint, and closes it cleanly on SIGTERM.
const playwrightServerJS = `
const { chromium } = require(process.argv[1]);
(async () => {
  const server = await chromium.launchServer({
    executablePath: process.argv[2], host: '127.0.0.1', port: 0, headless: true,
    args: ['--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  console.log('Listening on ' + server.wsEndpoint());
  process.on('SIGTERM', async () => { await server.close(); process.exit(0); });
})().catch(e => { console.log('error ' + e); process.exit(1); });
`

// TestConnectToPlaywrightServer starts a real Playwright browser server on
// loopback and drives a page through Config.Connect.
func TestConnectToPlaywrightServer(t *testing.T) {
	chromium, err := sandbox.FindChromium(browsertest.Env().Chromium)
	if err != nil {
		t.Fatal(err)
	}
	ws := startProcess(t, regexp.MustCompile(`Listening on (ws://\S+)`), "node", "-e", playwrightServerJS,
		filepath.Join(driverDir(t), "package"), chromium)
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env(), Connect: ws, Policy: browsertest.Policy()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if info := sb.Info(); !strings.HasPrefix(info.Remote, "playwright ws://127.0.0.1:") || info.PID != 0 {
		t.Errorf("info = %+v; want a remote playwright browser", info)
	}
	if got := titleThrough(t, sb); got != "Remote hello" {
		t.Errorf("title through the playwright server = %q", got)
	}
}

// TestConnectOverCDP starts Chromium with a DevTools port, as browserless
// or Selenium Grid would, and drives a page through Config.CDP.
func TestConnectOverCDP(t *testing.T) {
	chromium, err := sandbox.FindChromium(browsertest.Env().Chromium)
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	ws := startProcess(t, regexp.MustCompile(`DevTools listening on (ws://\S+)`), chromium,
		"--headless", "--no-sandbox", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--user-data-dir="+profile, "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "about:blank")
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env(), CDP: ws, Policy: browsertest.Policy()})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !strings.HasPrefix(sb.Info().Remote, "cdp ws://127.0.0.1:") {
		t.Errorf("info = %+v; want a remote cdp browser", sb.Info())
	}
	if got := titleThrough(t, sb); got != "Remote hello" {
		t.Errorf("title over CDP = %q", got)
	}

	// A proxy the remote browser cannot reach: sessions do not start.
	unreachable, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env(), CDP: ws,
		Policy: browsertest.Policy(), ProxyAdvertise: "127.0.0.9"})
	if err != nil {
		t.Fatal(err)
	}
	defer unreachable.Close()
	if sess, err := unreachable.NewSession(context.Background(), sandbox.SessionConfig{}); err == nil {
		sess.Close()
		t.Error("a session started although the browser cannot reach its proxy")
	} else if !strings.Contains(err.Error(), "cannot reach surf's egress proxy") {
		t.Errorf("error %v does not say the proxy is unreachable", err)
	}
}

func TestNewCancelledMidLaunchLeavesNothing(t *testing.T) {
	// Other sandboxes (the shared browser, private ones other tests keep
	// until the end) may be running: only what this launch adds counts.
	before := map[string]bool{}
	for _, l := range sandbox.Leftovers() {
		before[l] = true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if sb, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env()}); err == nil {
		// The machine was fast enough; that is fine too.
		sb.Close()
	}
	// What a cancelled launch started is torn down in the background;
	// Leftovers waits for it. TestMain's leak check covers the rest.
	var left []string
	for _, l := range sandbox.Leftovers() {
		if !before[l] {
			left = append(left, l)
		}
	}
	if len(left) > 0 {
		t.Errorf("leftovers after a cancelled launch: %v", left)
	}
}

// TestBrowserFeatureSwitches: the browser runs with one --disable-features
// switch that keeps Playwright's features and adds surf's (the omnibox
// popup's web UI, which would load in a renderer of its own per context),
// and a new context loads nothing of the browser's own UI.
func TestBrowserFeatureSwitches(t *testing.T) {
	sb := browsertest.Sandbox(t)
	cs, err := sb.Browser().NewBrowserCDPSession()
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Detach()
	res, err := cs.Send("Browser.getBrowserCommandLine", nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := res.(map[string]any)["arguments"].([]any)
	var disable []string
	for _, a := range raw {
		if v, ok := strings.CutPrefix(fmt.Sprint(a), "--disable-features="); ok {
			disable = append(disable, v)
		}
	}
	if len(disable) != 1 {
		t.Fatalf("the browser has %d --disable-features switches, want 1: %q", len(disable), disable)
	}
	features := strings.Split(disable[0], ",")
	for _, want := range []string{"WebUIOmniboxPopup", "PreloadTopChromeWebUI"} {
		if !slices.Contains(features, want) {
			t.Errorf("--disable-features=%s lacks surf's %s", disable[0], want)
		}
	}
	if len(features) < 8 {
		t.Errorf("--disable-features=%s: Playwright's own features are missing", disable[0])
	}

	// No page of the browser's own UI opens with a context's window.
	sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var targets []string
	var mu sync.Mutex
	tcs, err := sb.Browser().NewBrowserCDPSession()
	if err != nil {
		t.Fatal(err)
	}
	defer tcs.Detach()
	tcs.On("Target.targetCreated", func(ev map[string]any) {
		ti, _ := ev["targetInfo"].(map[string]any)
		mu.Lock()
		targets = append(targets, fmt.Sprint(ti["url"]))
		mu.Unlock()
	})
	if _, err := tcs.Send("Target.setDiscoverTargets", map[string]any{"discover": true}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.NewPage(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err = tcs.Send("Target.getTargets", nil)
	if err != nil {
		t.Fatal(err)
	}
	infos, _ := res.(map[string]any)["targetInfos"].([]any)
	for _, ti := range infos {
		targets = append(targets, fmt.Sprint(ti.(map[string]any)["url"]))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, u := range targets {
		if strings.HasPrefix(u, "chrome://") {
			t.Errorf("the browser opened %s", u)
		}
	}
}
