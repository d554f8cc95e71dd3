package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/internal/cdpmux"
	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// DefaultViewport is the viewport of a session unless configured.
var DefaultViewport = Viewport{Width: 1280, Height: 720}

// Viewport is a size in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// baseArgs are the Chromium flags surf always adds. On a closed network
// Chromium's background services would otherwise flood it with refused
// connections.
var baseArgs = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	"--disable-default-apps",
	"--disable-domain-reliability",
	"--disable-breakpad",
	"--no-pings",
	// Headless Chromium opens a browser window for each context, and each
	// window loads the omnibox popup's web UI in a renderer of its own
	// (chrome://omnibox-popup.top-chrome: some 400 script modules), which
	// cost about a third of the CPU a short task takes. The launcher
	// merges this switch with Playwright's (Chromium keeps only the last
	// of a repeated switch).
	"--disable-features=WebUIOmniboxPopup,WebUIOmniboxFullPopup,WebUIOmniboxAimPopup,PreloadTopChromeWebUI",
}

// Config configures a Sandbox. The zero value launches the local headless
// Chromium found on the machine.
type Config struct {
	// Env locates Chromium, node and the driver (see EnvFrom).
	Env Env

	// Connect is a Playwright browser server's websocket URL (for example
	// from "playwright-core run-server"). When set, no local browser is
	// launched; the driver is still needed locally.
	Connect string
	// ConnectHeaders are sent with Connect, for example a token, or
	// x-playwright-launch-options to tell a Playwright server which
	// browser to launch.
	ConnectHeaders map[string]string
	// CDP is a Chrome DevTools endpoint (http://host:port or
	// ws://host:port/devtools/browser/ID), as served by browserless or
	// Selenium Grid. Downloads then land on the remote machine.
	CDP string

	// Headful shows the browser window (needs a display).
	Headful bool
	// DisableChromiumSandbox turns Chromium's own sandbox off. This
	// weakens isolation; it shows in Info. As root, Chromium's sandbox
	// runs only inside the OS sandbox (the browser then runs as an
	// unprivileged user in a user namespace), so running as root with
	// DisableOSSandbox also needs DisableChromiumSandbox: surf never turns
	// a layer off on its own.
	DisableChromiumSandbox bool
	// Args are extra Chromium flags.
	Args []string
	// FrameMode says where a local browser's frames come from: Chromium's
	// 60 Hz clock (FrameClock) or, with FrameOnDemand, frames drawn only
	// when surf asks, in Chromium's headless shell. The zero value means
	// Env.FrameMode, whose empty means the clock.
	FrameMode FrameMode
	// LaunchTimeout bounds launching or connecting; zero means 60s.
	LaunchTimeout time.Duration

	// Policy decides what the browser may reach. Nil means the default
	// policy: public hosts allowed, private networks (loopback included)
	// denied. Sessions can narrow it (SessionConfig.Policy), never widen
	// it. The layers below enforce it; see the package documentation.
	Policy *policy.Policy
	// DisableRequestGate turns off the request gate (the browser-side
	// interception that judges every request and redirect hop before it
	// is sent). This weakens isolation; it shows in Info.
	DisableRequestGate bool
	// DisableEgressProxy turns off the egress proxy (every connection the
	// browser makes goes through a surf proxy that resolves names itself
	// and judges each address) and the Chromium flags that go with it (no
	// QUIC, no non-proxied WebRTC UDP, no DNS in the browser). This
	// weakens isolation; it shows in Info.
	DisableEgressProxy bool
	// DisableOSSandbox runs a local Chromium without bubblewrap (read-only
	// file system, no home directory). This weakens isolation; it shows
	// in Info. Without it, a bwrap that is missing or does not work stops
	// New with a *LayerError ('surf install --with-deps' installs it).
	DisableOSSandbox bool
	// Resolver resolves host names for the egress proxy; nil means
	// net.DefaultResolver.
	Resolver Resolver
	// ProxyListen is the IP address the egress proxies listen on; empty
	// means 127.0.0.1, which a local browser or a remote browser on the
	// same machine reaches. For a browser on another machine, listen on an
	// address it can reach and set ProxyAdvertise. Each session's proxy
	// requires its own random credentials.
	ProxyListen string
	// ProxyAdvertise is the host the browser is told to reach the proxies
	// at; empty means ProxyListen (which must then not be 0.0.0.0 or ::).
	ProxyAdvertise string

	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Info describes the browser behind a sandbox.
type Info struct {
	Browser string `json:"browser"`
	Version string `json:"version"`
	// Executable is the local Chromium binary; empty for remote browsers.
	Executable string `json:"executable,omitempty"`
	// Remote says how a remote browser is reached: "playwright <url>" or
	// "cdp <url>"; empty for a local browser.
	Remote   string `json:"remote,omitempty"`
	Headless bool   `json:"headless"`
	// NoSandbox is true when Chromium's own sandbox is off, and
	// NoSandboxReason says why. ChromiumSandbox says it in words: "on",
	// "on (as uid N in bubblewrap's user namespace, ...)" or "off: why";
	// empty for remote browsers, whose sandbox is not surf's to know.
	NoSandbox       bool   `json:"no_sandbox"`
	NoSandboxReason string `json:"no_sandbox_reason,omitempty"`
	ChromiumSandbox string `json:"chromium_sandbox,omitempty"`
	// PID is the local browser's process id (its process group leader;
	// bubblewrap's pid when the OS sandbox is on).
	PID int `json:"pid,omitempty"`

	// The enforcement layers: "on..." or "off: <reason>" (RequestGate,
	// EgressProxy), "bwrap" or "off: <reason>" (OSSandbox).
	RequestGate string `json:"request_gate"`
	EgressProxy string `json:"egress_proxy"`
	OSSandbox   string `json:"os_sandbox"`

	// FrameMode is where the browser's frames come from: "clock" or
	// "on-demand" (see Config.FrameMode).
	FrameMode string `json:"frame_mode"`
}

// Sandbox owns one browser: a local Chromium process or a connection to a
// remote one. Sessions opened from it are isolated from each other. It is
// safe for concurrent use.
type Sandbox struct {
	cfg     Config
	log     *slog.Logger
	pw      *playwright.Playwright
	browser playwright.Browser
	info    Info
	tmp     string // surf-owned temp dir: pid file, home, downloads
	rec     launchRecord
	pol     *policy.Policy
	proxy   *egressProxy // the launch-level proxy (local browsers)
	relay   *cdpmux.Mux  // surf's side of a local browser's DevTools pipe
	frames  *FrameGate   // with FrameOnDemand: one begin frame at a time

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
	nextID   int
}

// New starts a sandbox: it launches Chromium, or connects to the remote
// browser named by Config.Connect or Config.CDP. A machine that is not
// ready gives a *NotReadyError whose Hint says what to run. A local
// browser needs the program to have called RunLauncher (ErrNoLauncher).
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	if cfg.Connect != "" && cfg.CDP != "" {
		return nil, errors.New("sandbox: set Connect or CDP, not both")
	}
	if cfg.Connect == "" && cfg.CDP == "" && !launcherCalled.Load() {
		return nil, ErrNoLauncher
	}
	if cfg.LaunchTimeout <= 0 {
		cfg.LaunchTimeout = 60 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := validateProxyAddrs(&cfg); err != nil {
		return nil, err
	}
	if cfg.FrameMode == FrameDefault {
		m, err := ParseFrameMode(cfg.Env.FrameMode)
		if err != nil {
			return nil, fmt.Errorf("sandbox: Env.FrameMode (SURF_FRAME_MODE): %w", err)
		}
		cfg.FrameMode = m
	}
	if err := validateFrameMode(&cfg); err != nil {
		return nil, err
	}
	if !cfg.DisableEgressProxy {
		for _, a := range cfg.Args {
			for _, f := range egressFlags {
				if a == f || strings.HasPrefix(a, f+"=") {
					return nil, fmt.Errorf("sandbox: Config.Args has %s, which would bypass the egress proxy (set DisableEgressProxy to do without the proxy)", f)
				}
			}
		}
	}
	pol := cfg.Policy
	if pol == nil {
		var err error
		if pol, err = policy.New(policy.Config{}); err != nil {
			return nil, fmt.Errorf("sandbox: default policy: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Sandbox{cfg: cfg, log: log, sessions: map[*Session]struct{}{}, pol: pol}

	type result struct{ err error }
	done := make(chan result, 1)
	go func() { done <- result{s.start(ctx)} }()
	select {
	case r := <-done:
		if r.err != nil {
			s.teardown()
			return nil, r.err
		}
		return s, nil
	case <-ctx.Done():
		// Launching cannot be interrupted; clean up once it ends.
		background.Add(1)
		go func() {
			defer background.Done()
			<-done
			s.teardown()
		}()
		return nil, ctx.Err()
	}
}

func (s *Sandbox) start(ctx context.Context) error {
	dir, err := s.cfg.Env.driverDir()
	if err != nil {
		return err
	}
	node, _, err := findNode(ctx, s.cfg.Env.Node)
	if err != nil {
		return &NotReadyError{Problems: []string{err.Error()}}
	}
	if _, err := driverVersion(ctx, dir, node); err != nil {
		return &NotReadyError{Problems: []string{err.Error()}}
	}
	local := s.cfg.Connect == "" && s.cfg.CDP == ""
	var chromium string
	if local {
		find := func() (string, error) { return FindChromium(s.cfg.Env.Chromium) }
		if s.cfg.FrameMode == FrameOnDemand {
			find = func() (string, error) { return FindHeadlessShell(s.cfg.Env.HeadlessShell) }
		}
		if chromium, err = find(); err != nil {
			return &NotReadyError{Problems: []string{err.Error()}}
		}
	}

	// A local driver gets a temp dir of its own, inside the sandbox's:
	// what it and the browser it starts leave there (Playwright's
	// artifacts dir, when the driver is stopped before it removes it) goes
	// with the sandbox's, at teardown or, after a kill, RemoveStale.
	var driverEnv []string
	if local {
		if s.tmp, err = os.MkdirTemp("", tempPrefix()); err != nil {
			return fmt.Errorf("creating the sandbox's temp dir: %w", err)
		}
		driverTmp := filepath.Join(s.tmp, "tmp")
		if err := os.Mkdir(driverTmp, 0o700); err != nil {
			return fmt.Errorf("creating the sandbox's temp dir: %w", err)
		}
		driverEnv = []string{"TMPDIR=" + driverTmp}
	}
	s.pw, err = playwright.Run(&playwright.RunOptions{
		Env:                 driverEnv,
		DriverDirectory:     dir,
		SkipInstallBrowsers: true,
		Verbose:             false,
		Stdout:              io.Discard,
		Stderr:              logWriter{s.log, "playwright driver"},
		Logger:              s.log,
	})
	if err != nil {
		return fmt.Errorf("starting the playwright driver: %w", err)
	}
	timeout := float64(s.cfg.LaunchTimeout.Milliseconds())
	switch {
	case s.cfg.Connect != "":
		s.browser, err = s.pw.Chromium.Connect(s.cfg.Connect, playwright.BrowserTypeConnectOptions{
			Headers: s.cfg.ConnectHeaders,
			Timeout: &timeout,
		})
		if err != nil {
			return fmt.Errorf("connecting to playwright server %s: %w", s.cfg.Connect, err)
		}
		s.info.Remote = "playwright " + s.cfg.Connect
	case s.cfg.CDP != "":
		s.browser, err = s.pw.Chromium.ConnectOverCDP(s.cfg.CDP, playwright.BrowserTypeConnectOverCDPOptions{
			Timeout: &timeout,
		})
		if err != nil {
			return fmt.Errorf("connecting to devtools endpoint %s: %w", s.cfg.CDP, err)
		}
		s.info.Remote = "cdp " + s.cfg.CDP
	default:
		if err := s.launch(chromium, timeout); err != nil {
			return err
		}
	}
	s.info.Browser = "chromium"
	s.info.Version = s.browser.Version()
	s.info.Headless = !s.cfg.Headful || !local
	s.info.FrameMode = s.cfg.FrameMode.String()
	if s.cfg.FrameMode == FrameOnDemand {
		s.frames = &FrameGate{ch: make(chan struct{}, 1)}
	}
	s.info.RequestGate = "on"
	if s.cfg.DisableRequestGate {
		s.info.RequestGate = "off: disabled by Config.DisableRequestGate"
	}
	switch {
	case s.cfg.DisableEgressProxy:
		s.info.EgressProxy = "off: disabled by Config.DisableEgressProxy"
	case local:
		s.info.EgressProxy = "on: a proxy per session; launch proxy " + s.proxy.Addr()
	default:
		s.info.EgressProxy = "on: a proxy per session (remote browser: its QUIC, WebRTC and DNS flags are not surf's)"
	}
	if !local {
		s.info.OSSandbox = "off: remote browser"
	}
	for _, l := range []string{s.info.RequestGate, s.info.EgressProxy, s.info.OSSandbox} {
		if strings.HasPrefix(l, "off: disabled") {
			s.log.Warn("a policy enforcement layer is off", "layer", l)
		}
	}
	return nil
}

// browserPrefs are the profile preferences of a local browser: no
// autofill or password manager (they send the forms of every page to
// Google). With the request gate or the proxy on: no network prediction
// (speculative preconnects, DNS prefetch, speculation-rules prefetch and
// prerender open connections before the request gate sees a request, or
// outside it). With the proxy on: WebRTC may use UDP only through the
// proxy, that is never (the flag says it too).
func browserPrefs(gate, egress bool) map[string]any {
	// Autofill and password saving ask Google's servers about the forms
	// of every page: off always.
	p := map[string]any{
		"autofill":                   map[string]any{"profile_enabled": false, "credit_card_enabled": false},
		"credentials_enable_service": false,
		"profile":                    map[string]any{"password_manager_enabled": false},
	}
	if gate || egress {
		p["net"] = map[string]any{"network_prediction_options": 2}
	}
	if egress {
		p["webrtc"] = map[string]any{"ip_handling_policy": "disable_non_proxied_udp"}
	}
	return p
}

// osSandbox decides the OS sandbox for a local browser and records it in
// Info. It is on unless Config.DisableOSSandbox turns it off (or the system
// is not Linux): a bwrap that is missing or does not work here is an error,
// never a silent downgrade. As root the browser runs as an unprivileged
// user in a user namespace of its own, so Chromium's sandbox can run too.
func (s *Sandbox) osSandbox(chromium string) (*bwrapSpec, error) {
	switch {
	case s.cfg.DisableOSSandbox:
		s.info.OSSandbox = "off: disabled by Config.DisableOSSandbox"
		return nil, nil
	case runtime.GOOS != "linux":
		s.info.OSSandbox = "off: bubblewrap is Linux-only"
		s.log.Warn("the OS sandbox is off: bubblewrap is Linux-only")
		return nil, nil
	}
	bw, err := findBwrap(s.cfg.Env.Bwrap)
	if err != nil {
		return nil, &LayerError{Layer: "the OS sandbox", Err: err,
			Fix: "'surf install --with-deps' installs bubblewrap; to run without it, set Config.DisableOSSandbox (--no-os-sandbox)"}
	}
	realHome, _ := os.UserHomeDir()
	spec := newBwrapSpec(bw, s.tmp, s.uploadsDir(), chromium, realHome)
	if os.Geteuid() == 0 && !s.cfg.DisableChromiumSandbox {
		spec.UID = sandboxUID
	}
	if err := checkBwrap(context.Background(), spec); err != nil {
		fix := "set Config.DisableOSSandbox (--no-os-sandbox) to run without it"
		if spec.UID != 0 {
			fix = "bubblewrap must be able to create a user namespace (sysctl user.max_user_namespaces > 0) to run Chromium's sandbox as an unprivileged user; " + fix + " and Config.DisableChromiumSandbox (--no-chromium-sandbox)"
		}
		return nil, &LayerError{Layer: "the OS sandbox", Err: err, Fix: fix}
	}
	s.info.OSSandbox = "bwrap"
	return spec, nil
}

// chromiumSandbox decides Chromium's own sandbox for a local browser and
// records it in Info. It is on unless Config.DisableChromiumSandbox turns it
// off. Chromium refuses to run its sandbox as root: surf running as root
// runs the browser as an unprivileged user inside the OS sandbox (see
// osSandbox); without the OS sandbox that is impossible, and it is an error
// unless the Chromium sandbox was turned off explicitly.
func (s *Sandbox) chromiumSandbox(bw *bwrapSpec) (bool, error) {
	switch {
	case s.cfg.DisableChromiumSandbox:
		s.info.NoSandbox, s.info.NoSandboxReason = true, "disabled by Config.DisableChromiumSandbox"
		s.info.ChromiumSandbox = "off: " + s.info.NoSandboxReason
		s.log.Warn("a policy enforcement layer is off", "layer", "chromium sandbox", "reason", s.info.NoSandboxReason)
		return false, nil
	case os.Geteuid() == 0 && (bw == nil || bw.UID == 0):
		return false, &LayerError{Layer: "Chromium's sandbox",
			Err: errors.New("it cannot run as root outside the OS sandbox (bubblewrap runs the browser as an unprivileged user)"),
			Fix: "keep the OS sandbox on, run surf as another user, or set Config.DisableChromiumSandbox (--no-chromium-sandbox)"}
	case os.Geteuid() == 0:
		s.info.ChromiumSandbox = fmt.Sprintf("on (as uid %d in bubblewrap's user namespace, since surf runs as root)", bw.UID)
	default:
		s.info.ChromiumSandbox = "on"
	}
	return true, nil
}

// LayerError says that an enforcement layer that is on could not be set
// up, so the sandbox does not start; Fix says how to set it up, or how to
// turn it off explicitly.
type LayerError struct {
	Layer string // "the OS sandbox", "Chromium's sandbox"
	Err   error
	Fix   string
}

func (e *LayerError) Error() string {
	return fmt.Sprintf("starting %s: %v (%s)", e.Layer, e.Err, e.Fix)
}

func (e *LayerError) Unwrap() error { return e.Err }

// Hint is the advice the CLI prints after the error.
func (e *LayerError) Hint() string { return e.Fix }

// egressFlags are Chromium flags that surf sets for the egress proxy and
// that Config.Args may not set.
var egressFlags = []string{
	"--proxy-server", "--proxy-bypass-list", "--no-proxy-server", "--proxy-auto-detect",
	"--proxy-pac-url", "--host-resolver-rules", "--webrtc-ip-handling-policy", "--enable-quic",
	"--winhttp-proxy-resolver",
}

// egressArgs are the Chromium flags for a local browser whose launch
// proxy is at host:port: every connection goes through the proxy
// (loopback included), the browser resolves no names itself, QUIC is off
// and WebRTC may not send UDP outside the proxy (it cannot).
func egressArgs(host string, port int) []string {
	hp := net.JoinHostPort(host, fmt.Sprint(port))
	return []string{
		"--proxy-server=http://" + hp,
		"--proxy-bypass-list=<-loopback>",
		"--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE " + host,
		"--disable-quic",
		"--webrtc-ip-handling-policy=disable_non_proxied_udp",
	}
}

// validateProxyAddrs checks and defaults ProxyListen and ProxyAdvertise.
func validateProxyAddrs(cfg *Config) error {
	if cfg.ProxyListen == "" {
		cfg.ProxyListen = "127.0.0.1"
	}
	a, err := netip.ParseAddr(cfg.ProxyListen)
	if err != nil {
		return fmt.Errorf("sandbox: ProxyListen %q is not an IP address", cfg.ProxyListen)
	}
	if cfg.ProxyAdvertise == "" {
		if a.IsUnspecified() {
			return fmt.Errorf("sandbox: ProxyListen %s needs ProxyAdvertise (the address the browser reaches the proxy at)", cfg.ProxyListen)
		}
		cfg.ProxyAdvertise = cfg.ProxyListen
	}
	if strings.ContainsAny(cfg.ProxyAdvertise, "/@ ,;") {
		return fmt.Errorf("sandbox: ProxyAdvertise %q is not a host", cfg.ProxyAdvertise)
	}
	return nil
}

// proxyURL is how the browser reaches a proxy listening on port.
func (s *Sandbox) proxyURL(port int) string {
	return "http://" + net.JoinHostPort(strings.Trim(s.cfg.ProxyAdvertise, "[]"), fmt.Sprint(port))
}

// Policy is the sandbox's policy; sessions enforce it or a narrowing of it.
func (s *Sandbox) Policy() *policy.Policy { return s.pol }

// launch starts the local Chromium through surf's launcher, in the
// sandbox's temp dir (s.tmp, which start made before the driver).
func (s *Sandbox) launch(chromium string, timeout float64) error {
	self, err := selfExecutable()
	if err != nil {
		return err
	}
	home := filepath.Join(s.tmp, "home")
	downloads := filepath.Join(s.tmp, "artifacts")
	for _, d := range []string{home, downloads, s.uploadsDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating the sandbox's temp dir: %w", err)
		}
	}
	pidfile := filepath.Join(s.tmp, "browser.pid")
	ls := launchSpec{Exec: chromium, PIDFile: pidfile,
		Prefs: browserPrefs(!s.cfg.DisableRequestGate, !s.cfg.DisableEgressProxy)}

	if ls.Bwrap, err = s.osSandbox(chromium); err != nil {
		return err
	}
	sandboxOn, err := s.chromiumSandbox(ls.Bwrap)
	if err != nil {
		return err
	}

	args := append(append([]string{}, baseArgs...), s.cfg.Args...)
	if s.cfg.FrameMode == FrameOnDemand {
		args = append(args, frameArgs...)
	}
	var launchProxy *playwright.Proxy
	if !s.cfg.DisableEgressProxy {
		// The launch-level proxy takes whatever does not belong to a
		// session's context, with the sandbox's policy.
		// With its own credentials, like the sessions' proxies: other
		// local users can reach its port too.
		s.proxy, err = startProxy(proxyConfig{
			policy:   s.pol,
			resolver: s.cfg.Resolver,
			listen:   s.cfg.ProxyListen,
			user:     "surf-" + randomToken(8),
			password: randomToken(24),
			log:      s.log.With("proxy", "launch"),
		})
		if err != nil {
			return err
		}
		args = append(args, egressArgs(strings.Trim(s.cfg.ProxyAdvertise, "[]"), s.proxy.Port())...)
		// Playwright answers the launch proxy's challenges with these for
		// contexts that have no proxy of their own (the flags above still
		// decide where traffic goes: they come after Playwright's).
		launchProxy = &playwright.Proxy{
			Server:   s.proxyURL(s.proxy.Port()),
			Bypass:   playwright.String("<-loopback>"),
			Username: playwright.String(s.proxy.cfg.user),
			Password: playwright.String(s.proxy.cfg.password),
		}
	}
	var rl *relayListener
	if relaySupported {
		if rl, err = listenRelay(); err != nil {
			return err
		}
		defer rl.close()
		ls.Relay, ls.RelayToken = rl.path, rl.token
	}
	spec, err := jsonString(ls)
	if err != nil {
		return err
	}
	env := browserEnv(home)
	env[launcherEnv] = spec

	headless := !s.cfg.Headful
	no := false
	type relayed struct {
		m   *cdpmux.Mux
		err error
	}
	relayc := make(chan relayed, 1)
	if rl != nil {
		go func() {
			m, err := rl.accept(time.Now().Add(time.Duration(timeout)*time.Millisecond), s.log)
			relayc <- relayed{m, err}
		}()
	}
	s.browser, err = s.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath:  &self,
		Args:            args,
		Headless:        &headless,
		ChromiumSandbox: &sandboxOn,
		Proxy:           launchProxy,
		DownloadsPath:   &downloads,
		Env:             env,
		Timeout:         &timeout,
		HandleSIGINT:    &no,
		HandleSIGTERM:   &no,
		HandleSIGHUP:    &no,
	})
	if rec, rerr := readLaunchRecord(pidfile); rerr == nil {
		s.rec = rec
	}
	if rl != nil {
		if err != nil {
			rl.close() // ends the accept
		}
		r := <-relayc
		s.relay = r.m
		if err == nil && r.err != nil {
			return r.err
		}
	}
	if err != nil {
		return fmt.Errorf("launching chromium %s: %w", chromium, cleanPlaywrightError(err))
	}
	if s.rec.PID == 0 {
		return fmt.Errorf("launching chromium %s: the launcher left no pid file", chromium)
	}
	s.info.Executable = chromium
	s.info.PID = s.rec.PID
	return nil
}

// browserEnv is the browser's environment: surf's own, with HOME and the
// XDG directories moved into the sandbox's temp dir so the browser leaves
// nothing in the user's home, and the owner marker added.
func browserEnv(home string) map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	delete(env, launcherEnv)
	env["HOME"] = home
	env["XDG_CONFIG_HOME"] = filepath.Join(home, ".config")
	env["XDG_CACHE_HOME"] = filepath.Join(home, ".cache")
	env["XDG_DATA_HOME"] = filepath.Join(home, ".local", "share")
	k, v, _ := strings.Cut(ownerMarker(), "=")
	env[k] = v
	return env
}

// uploadsDir is where sessions stage files for upload: inside the OS
// sandbox it is visible read-only.
func (s *Sandbox) uploadsDir() string {
	if s.tmp == "" {
		return ""
	}
	return filepath.Join(s.tmp, "uploads")
}

// tempPrefix names the sandbox's temp dirs so leftovers can be traced to
// their owner.
func tempPrefix() string { return fmt.Sprintf("surf-%d-", os.Getpid()) }

// Info describes the browser.
func (s *Sandbox) Info() Info { return s.info }

// Browser is the underlying Playwright browser, for advanced use. Closing
// it directly leaves the sandbox unusable; use Close.
func (s *Sandbox) Browser() playwright.Browser { return s.browser }

// Close closes every session and the browser: a local browser's process
// group is killed and waited for, and its temp profile and directories
// are removed. It is safe to call more than once.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	sessions := make([]*Session, 0, len(s.sessions))
	for sess := range s.sessions {
		sessions = append(sessions, sess)
	}
	s.mu.Unlock()
	var errs []error
	for _, sess := range sessions {
		if err := sess.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := s.teardown(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// teardown stops the browser and the driver and removes every trace. It
// works on a partly started sandbox too.
func (s *Sandbox) teardown() error {
	var errs []error
	if s.browser != nil {
		if err := bounded.Call(10*time.Second, func() error { return s.browser.Close() }); err != nil {
			s.log.Debug("closing the browser", "err", err)
		}
	}
	if s.relay != nil {
		s.relay.Close()
	}
	if s.pw != nil {
		if err := bounded.Call(10*time.Second, s.pw.Stop); err != nil {
			s.log.Debug("stopping the playwright driver", "err", err)
		}
	}
	if s.rec.PID != 0 {
		if err := reap(s.rec.PID, 5*time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if s.proxy != nil {
		s.proxy.Close()
	}
	for _, d := range []string{s.rec.UserDataDir, s.tmp} {
		if d == "" {
			continue
		}
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// reap makes sure the browser's process group is gone: Playwright closes
// it gracefully; whatever is left is killed.
func reap(pid int, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for proc.Alive(pid) && time.Now().Before(deadline.Add(-wait/2)) {
		time.Sleep(10 * time.Millisecond)
	}
	killGroup(pid)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("browser process %d survived SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// Leftovers lists what browsers started by this process left behind: live
// processes carrying the owner marker, and temp dirs of this process's
// sandboxes. Tests call it after closing everything; it should be empty.
func Leftovers() []string {
	waitBackground(10 * time.Second)
	var out []string
	for _, pid := range proc.WithEnv(ownerMarker()) {
		out = append(out, fmt.Sprintf("process %d (%s)", pid, textcut.Bytes(proc.Cmdline(pid), 160)))
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix()+"*"))
	for _, m := range matches {
		out = append(out, "temp dir "+m)
	}
	return out
}

// background counts teardowns still running after New gave up waiting.
var background sync.WaitGroup

func waitBackground(d time.Duration) {
	done := make(chan struct{})
	go func() { background.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// logWriter turns a child's stderr into debug logs.
type logWriter struct {
	log  *slog.Logger
	what string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.log.Debug(w.what, "stderr", line)
		}
	}
	return len(p), nil
}

// cleanPlaywrightError trims Playwright's multi-line call logs from an
// error, keeping the first line.
func cleanPlaywrightError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, "\nCall log:"); i >= 0 {
		return errors.New(strings.TrimSpace(msg[:i]))
	}
	return err
}

// RemoveStale removes the temp directories that the sandboxes of process
// pid left behind because it died without closing them (killed, for
// example): profiles, downloads, recordings in progress. Its browser died
// with it. It removes only directories owned by the current user, refuses
// while pid is alive, and returns what it removed.
func RemoveStale(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("sandbox: no process %d", pid)
	}
	if pid == os.Getpid() || proc.Alive(pid) {
		return nil, fmt.Errorf("sandbox: process %d is alive", pid)
	}
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", pid)))
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, m := range matches {
		fi, err := os.Lstat(m)
		if err != nil || !fi.IsDir() || !ownedByCurrentUser(fi) {
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, m)
	}
	return removed, errors.Join(errs...)
}

func ownedByCurrentUser(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
