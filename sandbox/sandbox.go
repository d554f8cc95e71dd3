// Package sandbox provisions and owns the browser surf drives: it finds
// Chromium and the Playwright driver on the machine (installing the driver
// from the npm registry, never from a CDN), launches Chromium as a process
// surf owns (its own process group, killed when surf dies, temp profile
// removed on close) or connects to a remote browser (a Playwright server or
// a Chrome DevTools endpoint), and hands out isolated sessions: browser
// contexts with their own cookies, storage and downloads directory.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"
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
	// DisableChromiumSandbox turns Chromium's own sandbox off when not
	// running as root (as root it cannot run, and surf turns it off and
	// says so in Info). This weakens isolation; it shows in Info.
	DisableChromiumSandbox bool
	// Args are extra Chromium flags.
	Args []string
	// LaunchTimeout bounds launching or connecting; zero means 60s.
	LaunchTimeout time.Duration

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
	// NoSandboxReason says why.
	NoSandbox       bool   `json:"no_sandbox"`
	NoSandboxReason string `json:"no_sandbox_reason,omitempty"`
	// PID is the local browser's process id (its process group leader).
	PID int `json:"pid,omitempty"`
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

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
	nextID   int
}

// New starts a sandbox: it launches Chromium, or connects to the remote
// browser named by Config.Connect or Config.CDP. A machine that is not
// ready gives a *NotReadyError whose Hint says what to run.
func New(ctx context.Context, cfg Config) (*Sandbox, error) {
	if cfg.Connect != "" && cfg.CDP != "" {
		return nil, errors.New("sandbox: set Connect or CDP, not both")
	}
	if cfg.LaunchTimeout <= 0 {
		cfg.LaunchTimeout = 60 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s := &Sandbox{cfg: cfg, log: log, sessions: map[*Session]struct{}{}}

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
		if chromium, err = FindChromium(s.cfg.Env.Chromium); err != nil {
			return &NotReadyError{Problems: []string{err.Error()}}
		}
	}

	s.pw, err = playwright.Run(&playwright.RunOptions{
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
	return nil
}

// launch starts the local Chromium through surf's launcher.
func (s *Sandbox) launch(chromium string, timeout float64) error {
	self, err := selfExecutable()
	if err != nil {
		return err
	}
	s.tmp, err = os.MkdirTemp("", tempPrefix())
	if err != nil {
		return fmt.Errorf("creating the sandbox's temp dir: %w", err)
	}
	home := filepath.Join(s.tmp, "home")
	downloads := filepath.Join(s.tmp, "artifacts")
	for _, d := range []string{home, downloads} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating the sandbox's temp dir: %w", err)
		}
	}
	pidfile := filepath.Join(s.tmp, "browser.pid")
	spec, err := jsonString(launchSpec{Exec: chromium, PIDFile: pidfile})
	if err != nil {
		return err
	}
	env := browserEnv(home)
	env[launcherEnv] = spec

	sandboxOn := true
	switch {
	case os.Geteuid() == 0:
		sandboxOn = false
		s.info.NoSandbox, s.info.NoSandboxReason = true, "running as root: Chromium's sandbox cannot run as root"
	case s.cfg.DisableChromiumSandbox:
		sandboxOn = false
		s.info.NoSandbox, s.info.NoSandboxReason = true, "disabled by Config.DisableChromiumSandbox"
	}
	if s.info.NoSandbox {
		s.log.Info("chromium's own sandbox is off", "reason", s.info.NoSandboxReason)
	}
	headless := !s.cfg.Headful
	args := append(append([]string{}, baseArgs...), s.cfg.Args...)
	no := false
	s.browser, err = s.pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath:  &self,
		Args:            args,
		Headless:        &headless,
		ChromiumSandbox: &sandboxOn,
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
		if err := within(10*time.Second, func() error { return s.browser.Close() }); err != nil {
			s.log.Debug("closing the browser", "err", err)
		}
	}
	if s.pw != nil {
		if err := within(10*time.Second, s.pw.Stop); err != nil {
			s.log.Debug("stopping the playwright driver", "err", err)
		}
	}
	if s.rec.PID != 0 {
		if err := reap(s.rec.PID, 5*time.Second); err != nil {
			errs = append(errs, err)
		}
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
	for alive(pid) && time.Now().Before(deadline.Add(-wait/2)) {
		time.Sleep(10 * time.Millisecond)
	}
	killGroup(pid)
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("browser process %d survived SIGKILL", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// within runs f and gives up waiting after d (f keeps running).
func within(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("timed out after %v", d)
	}
}

// Leftovers lists what browsers started by this process left behind: live
// processes carrying the owner marker, and temp dirs of this process's
// sandboxes. Tests call it after closing everything; it should be empty.
func Leftovers() []string {
	waitBackground(10 * time.Second)
	var out []string
	for _, pid := range ownedProcesses(ownerMarker()) {
		out = append(out, fmt.Sprintf("process %d (%s)", pid, cmdline(pid)))
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
