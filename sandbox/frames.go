package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// FrameMode says where a local browser's frames come from.
type FrameMode string

const (
	// FrameDefault (the zero value) is the mode Env.FrameMode names
	// (SURF_FRAME_MODE), FrameClock when it names none.
	FrameDefault FrameMode = ""
	// FrameClock is Chromium's own 60 Hz frame clock: pages draw whenever
	// they change, and a screenshot waits for the clock's ticks.
	FrameClock FrameMode = "clock"
	// FrameOnDemand runs Chromium's headless shell under begin-frame
	// control: a page draws a frame only when surf asks for one
	// (HeadlessExperimental.beginFrame). Its user (package websurfer)
	// must pump frames while a page loads, settles or is acted on, and
	// takes a step's screenshot from a frame it draws itself; between
	// steps nothing is drawn, so an animated page costs nothing. Local
	// browsers only, headless only.
	FrameOnDemand FrameMode = "on-demand"
)

// ParseFrameMode reads "clock" ("" too) or "on-demand".
func ParseFrameMode(s string) (FrameMode, error) {
	switch s {
	case "", "clock":
		return FrameClock, nil
	case string(FrameOnDemand):
		return FrameOnDemand, nil
	}
	return "", fmt.Errorf("frame mode %q: want clock or on-demand", s)
}

// String is the mode's name: "clock" or "on-demand" ("default" for
// FrameDefault).
func (m FrameMode) String() string {
	if m == FrameDefault {
		return "default"
	}
	return string(m)
}

// frameArgs are the switches that put every page of the headless shell
// under begin-frame control. The switch alone does it: Playwright's
// Target.createTarget needs no flag of its own in Chromium 156's shell.
// Checker imaging and the compositor's own animation and scrolling threads
// would draw outside the frames surf asks for (an image decoded later, a
// scroll drawn by the compositor), so they are off, as in the shell's
// --deterministic-mode (which also fixes the clock for scripts; surf does
// not).
var frameArgs = []string{
	"--enable-begin-frame-control",
	"--run-all-compositor-stages-before-draw",
	"--disable-threaded-animation",
	"--disable-threaded-scrolling",
	"--disable-checker-imaging",
}

// headlessShellCandidates are tried in order for FrameOnDemand.
var headlessShellCandidates = []string{
	"/usr/lib/chromium/chromium-headless-shell",
	"/usr/bin/chromium-headless-shell",
}

// FindHeadlessShell finds Chromium's headless shell (Debian package
// chromium-headless-shell), the browser FrameOnDemand runs: explicit
// first (SURF_HEADLESS_SHELL), then the usual places and PATH.
func FindHeadlessShell(explicit string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("headless shell %q (SURF_HEADLESS_SHELL) is not an executable: %w", explicit, err)
		}
		return resolveWrapper(p), nil
	}
	for _, c := range headlessShellCandidates {
		if isExecutable(c) {
			return c, nil
		}
	}
	if p, err := exec.LookPath("chromium-headless-shell"); err == nil {
		return resolveWrapper(p), nil
	}
	return "", errors.New("chromium-headless-shell not found, which frame mode on-demand runs (install the Debian package chromium-headless-shell, or use frame mode clock)")
}

// validateFrameMode checks cfg's FrameMode against the rest of cfg.
func validateFrameMode(cfg *Config) error {
	switch cfg.FrameMode {
	case FrameDefault, FrameClock:
		return nil
	case FrameOnDemand:
	default:
		return fmt.Errorf("sandbox: Config.FrameMode %q: want %q or %q", string(cfg.FrameMode), FrameClock, FrameOnDemand)
	}
	if cfg.Connect != "" || cfg.CDP != "" {
		return errors.New("sandbox: Config.FrameMode on-demand needs a local browser (its frames are drawn only when surf asks, which a remote browser's pages would not know)")
	}
	if cfg.Headful {
		return errors.New("sandbox: Config.FrameMode on-demand is headless only (Chromium's headless shell)")
	}
	return nil
}

// FrameGate lets one HeadlessExperimental.beginFrame at a time into a
// browser whose frames are on demand. Chromium 156's headless shell draws
// every page through one GPU process, which takes two begin frames that
// overlap (from any two tabs, in any two contexts) as a bad message: it
// exits ("Got overlapping IssueExternalBeginFrame"), and after a few such
// exits the browser does too.
type FrameGate struct{ ch chan struct{} }

// Acquire waits for the gate, or for ctx to end.
func (g *FrameGate) Acquire(ctx context.Context) error {
	select {
	case g.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release lets the next begin frame in.
func (g *FrameGate) Release() { <-g.ch }

// FrameGate is the browser's gate for begin frames; nil unless its frames
// are on demand.
func (s *Sandbox) FrameGate() *FrameGate { return s.frames }
