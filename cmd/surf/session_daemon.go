package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// The session daemon is "surf session-daemon", a hidden command that
// "surf open" starts by re-executing its own binary, detached (its own
// session, stdin from /dev/null, stdout and stderr to NAME.log in the
// runtime directory). One daemon holds one named session: its own sandbox
// (browser process), session and surfer, with the policy and browser flags
// "surf open" was given, fixed for its life. It holds NAME.lock while it
// runs, serves NAME.sock (see cmd/surf/internal/daemon) and exits after the idle
// timeout, on "surf close", on SIGTERM/SIGINT or when its browser goes away,
// closing the browser and removing its socket and pid file.
//
// Start-up is reported on the file descriptor --ready-fd names: one JSON
// line, a daemon.Response, OK once the socket is listening, else the error
// (with hint and exit code) that stopped it. A daemon that finds the
// session's lock held reports daemon.ErrBusy and exits 0: another "surf
// open" started the session first, and its caller connects to that one.

// The daemon's built-in requests, next to the tools of surf's action space.
const (
	reqStatus     = "status"     // the session's pid and flags (JSON in Text)
	reqOpen       = "open"       // {"url": "..."}: visit a URL, or just observe
	reqObserve    = "observe"    // observe again
	reqTabs       = "tabs"       // the open tabs
	reqScreenshot = "screenshot" // {"plain": bool}: the set-of-mark image or a plain one
	reqClose      = "close"      // close the browser and end the daemon
	reqSaveState  = "save_state" // save the session's state file now
)

// sessionStatus is the answer to reqStatus.
type sessionStatus struct {
	Session string   `json:"session"`
	PID     int      `json:"pid"`
	Flags   []string `json:"flags"`
}

func init() {
	c := &command{
		name:    "session-daemon",
		summary: "the background process behind 'surf open' (not for direct use)",
		usage: `Usage: surf session-daemon --runtime-dir DIR --session NAME [--ready-fd N] [--idle D] [browser flags]

The daemon that holds a session for 'surf open' and the commands after it.
It is started by 'surf open'; there is no need to run it by hand.`,
		hidden: true,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		dir := fs.String("runtime-dir", "", "")
		name := fs.String("session", "", "")
		idle := fs.Duration("idle", 0, "")
		readyFD := fs.Int("ready-fd", 0, "")
		bf := addBrowserFlags(fs)
		bf.state = addStateFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() != 0 || *dir == "" || *name == "" || *idle < 0 {
			return usagef(c, "session-daemon needs --runtime-dir and --session, a non-negative --idle and no arguments")
		}
		d := &sessionDaemon{cli: cli, log: daemonLogger(cli)}
		if *readyFD > 2 {
			// Keep the pipe from the browser and the driver.
			syscall.CloseOnExec(*readyFD)
			d.ready = os.NewFile(uintptr(*readyFD), "ready")
		}
		err := d.run(ctx, *dir, *name, *idle, bf, sessionFlagArgs(fs, nil))
		if err != nil {
			d.report(errorResponse(err))
			if errors.Is(err, daemon.ErrBusy) {
				return nil
			}
		}
		return err
	}
	register(c)
}

// daemonLogger logs the daemon's own lines (start, stop, refused peers) at
// Info, or Debug with SURF_DEBUG, to its log file (stderr).
func daemonLogger(cli *CLI) *slog.Logger {
	level := slog.LevelInfo
	if cli.Getenv("SURF_DEBUG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(cli.Stderr, &slog.HandlerOptions{Level: level}))
}

type sessionDaemon struct {
	cli   *CLI
	log   *slog.Logger
	ready *os.File
}

// report writes the start-up result to the ready pipe, once.
func (d *sessionDaemon) report(resp daemon.Response) {
	if d.ready == nil {
		return
	}
	b, _ := json.Marshal(resp)
	d.ready.Write(append(b, '\n'))
	d.ready.Close()
	d.ready = nil
}

func (d *sessionDaemon) run(ctx context.Context, dir, name string, idle time.Duration, bf *browserFlags, flags []string) error {
	if err := daemon.EnsureDir(dir); err != nil {
		return err
	}
	p, err := daemon.PathsFor(dir, name)
	if err != nil {
		return err
	}
	lock, err := daemon.Acquire(p.Lock)
	if err != nil {
		return err
	}
	defer lock.Release()
	os.Truncate(p.Log, 0) // the log is this daemon's from here on
	daemon.CleanStale(p, d.log)
	if err := daemon.WritePID(p.PID); err != nil {
		return fmt.Errorf("writing the pid file: %w", err)
	}
	defer os.Remove(p.PID)

	b, err := bf.open(ctx, d.cli, openOptions{})
	if err != nil {
		return err
	}
	h := &sessionHandler{
		b:      b,
		reg:    b.surf.Tools(),
		status: sessionStatus{Session: name, PID: os.Getpid(), Flags: flags},
		stop:   make(chan struct{}),
		log:    d.log,
	}
	defer h.closeBrowser()
	if br := b.sb.Browser(); br != nil {
		br.OnDisconnected(func(playwright.Browser) {
			if !h.closing.Load() {
				d.log.Warn("the browser went away; stopping the session daemon")
			}
			h.stopNow()
		})
	}
	srv, err := daemon.Listen(daemon.Config{Socket: p.Socket, Handler: h, Idle: idle, Stop: h.stop, Logger: d.log})
	if err != nil {
		return err
	}
	defer srv.Close()
	d.log.Info("session daemon started", "session", name, "pid", os.Getpid(), "socket", p.Socket, "idle", idleOrDefault(idle), "flags", strings.Join(flags, " "))
	d.report(daemon.Response{OK: true, Text: fmt.Sprint(os.Getpid())})
	err = srv.Serve(ctx)
	d.log.Info("session daemon stopping", "reason", srv.Reason())
	if errors.Is(err, context.Canceled) {
		return nil // SIGTERM or SIGINT: a normal way to stop a daemon
	}
	return err
}

// saveState writes the session's state file now ("surf state save").
func (h *sessionHandler) saveState(ctx context.Context) daemon.Response {
	sf := h.b.bf.stateFile
	if sf.Path == "" {
		return daemon.Fail(1, fmt.Errorf("session %q has no state file", h.status.Session), "open it with --state FILE to keep its login")
	}
	sum, err := h.b.sess.SaveState(ctx)
	if err != nil {
		return errorResponse(stateError(fmt.Errorf("saving the state: %w", err)))
	}
	return daemon.Response{OK: true, Text: fmt.Sprintf("saved %s: %s", sf.Path, describeSummary(sum))}
}

func idleOrDefault(d time.Duration) time.Duration {
	if d == 0 {
		return daemon.DefaultIdle
	}
	return d
}

// sessionHandler answers a daemon's requests with its browser.
type sessionHandler struct {
	b      *browser
	reg    *tools.Registry
	status sessionStatus
	log    *slog.Logger

	stop      chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
	closing   atomic.Bool // the daemon is closing the browser itself
	closeErr  error       // closing's error (a state file not saved), set once
}

var _ daemon.Handler = (*sessionHandler)(nil)

func (h *sessionHandler) stopNow() { h.stopOnce.Do(func() { close(h.stop) }) }

// closeBrowser closes the surfer, session and sandbox (killing the
// browser's process group), once.
func (h *sessionHandler) closeBrowser() {
	h.closeOnce.Do(func() {
		h.closing.Store(true)
		h.closeErr = h.b.Close()
		if h.closeErr != nil {
			h.log.Warn("closing the session", "err", h.closeErr)
		}
	})
}

func (h *sessionHandler) Handle(ctx context.Context, req daemon.Request) daemon.Response {
	resp := h.handle(ctx, req)
	switch req.Tool {
	case reqStatus, reqClose, reqScreenshot, reqSaveState:
	default:
		// Actions, open, observe and tabs: the latest observation, for
		// clients that print JSON.
		if obs := h.b.surf.Last(); obs != nil && !h.closing.Load() {
			resp.Observation, _ = json.Marshal(struct {
				*websurfer.Observation
				Text string `json:"text"`
			}{obs, obs.Text()})
		}
	}
	return resp
}

func (h *sessionHandler) handle(ctx context.Context, req daemon.Request) daemon.Response {
	switch req.Tool {
	case reqStatus:
		b, _ := json.Marshal(h.status)
		return daemon.Response{OK: true, Text: string(b)}
	case reqOpen:
		var a struct {
			URL string `json:"url"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return daemon.Fail(daemon.ExitUsage, err, "")
		}
		return h.open(ctx, a.URL)
	case reqObserve:
		obs, err := h.b.surf.Observe(ctx)
		if err != nil {
			return h.runtimeError(err)
		}
		return daemon.Response{OK: true, Text: obs.Text()}
	case reqTabs:
		return h.tabs(ctx)
	case reqScreenshot:
		var a struct {
			Plain bool `json:"plain"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return daemon.Fail(daemon.ExitUsage, err, "")
		}
		return h.screenshot(ctx, a.Plain)
	case reqSaveState:
		return h.saveState(ctx)
	case reqClose:
		h.closeBrowser()
		h.stopNow()
		if h.closeErr != nil {
			return errorResponse(fmt.Errorf("session %q closed, but: %w", h.status.Session, h.closeErr))
		}
		text := fmt.Sprintf("session %q closed", h.status.Session)
		if sf := h.b.bf.stateFile; sf.Path != "" && !sf.ReadOnly {
			text += "; its state is saved in " + sf.Path
		}
		return daemon.Response{OK: true, Text: text}
	}
	name := req.Tool
	if _, ok := h.reg.Lookup(name); !ok {
		return daemon.Fail(daemon.ExitUsage, fmt.Errorf("unknown action %q", name), "")
	}
	res, err := h.reg.Call(ctx, name, req.Args, h.b.surf.Offered()...)
	if err != nil {
		return h.runtimeError(err)
	}
	if res.IsError {
		return daemon.Fail(daemon.ExitFailed, errors.New(strings.TrimSpace(res.Text)), "")
	}
	return daemon.Response{OK: true, Text: res.Text}
}

func (h *sessionHandler) open(ctx context.Context, url string) daemon.Response {
	if url == "" {
		obs := h.b.surf.Last()
		if obs == nil {
			var err error
			if obs, err = h.b.surf.Observe(ctx); err != nil {
				return h.runtimeError(err)
			}
		}
		return daemon.Response{OK: true, Text: obs.Text()}
	}
	if err := h.b.checkURL(url); err != nil {
		return errorResponse(err)
	}
	res, err := h.b.surf.VisitURL(ctx, url)
	if err != nil {
		if tools.IsToolError(err) {
			return daemon.Fail(daemon.ExitFailed, toolError(err), "")
		}
		return h.runtimeError(err)
	}
	return daemon.Response{OK: true, Text: res.Observation.Text()}
}

// tabs lists the open tabs from a fresh observation. Observing renumbers
// the elements; when the list changed from what the caller last saw, it
// says so, since the old ids no longer mean what they meant.
func (h *sessionHandler) tabs(ctx context.Context) daemon.Response {
	prev := h.b.surf.Last()
	obs, err := h.b.surf.Observe(ctx)
	if err != nil {
		return h.runtimeError(err)
	}
	var sb strings.Builder
	for _, t := range obs.Tabs {
		mark := " "
		if t.Active {
			mark = "*"
		}
		fmt.Fprintf(&sb, "%s %d %q %s\n", mark, t.Index, t.Title, t.URL)
	}
	if prev != nil && !sameElements(prev, obs) {
		fmt.Fprintf(&sb, "(the page has changed: element ids are now those of observation %d; run 'surf observe' to list them)\n", obs.Seq)
	}
	return daemon.Response{OK: true, Text: sb.String()}
}

// sameElements reports whether two observations list the same elements
// under the same ids.
func sameElements(a, b *websurfer.Observation) bool {
	if len(a.Elements) != len(b.Elements) {
		return false
	}
	for i := range a.Elements {
		x, y := a.Elements[i], b.Elements[i]
		if x.ID != y.ID || x.Role != y.Role || x.Name != y.Name || x.Tag != y.Tag {
			return false
		}
	}
	return true
}

// screenshot returns the set-of-mark image of the latest observation (the
// one whose ids the caller has), or a plain screenshot of the viewport now.
func (h *sessionHandler) screenshot(ctx context.Context, plain bool) daemon.Response {
	if plain {
		img, err := h.b.surf.Screenshot(ctx)
		if err != nil {
			return h.runtimeError(err)
		}
		return daemon.Response{OK: true, Text: "a plain screenshot of the viewport", Image: img}
	}
	obs := h.b.surf.Last()
	if obs == nil {
		var err error
		if obs, err = h.b.surf.Observe(ctx); err != nil {
			return h.runtimeError(err)
		}
	}
	if len(obs.Image) == 0 {
		return daemon.Fail(daemon.ExitFailed, fmt.Errorf("observation %d has no screenshot", obs.Seq), "")
	}
	return daemon.Response{OK: true, Text: fmt.Sprintf("the set-of-mark screenshot of observation %d (%s)", obs.Seq, obs.URL), Image: obs.Image}
}

// runtimeError answers an error that is not the action's fault: the
// browser or the session failed. When the surfer is closed for good, the
// daemon stops after answering.
func (h *sessionHandler) runtimeError(err error) daemon.Response {
	if errors.Is(err, context.DeadlineExceeded) {
		return daemon.Fail(daemon.ExitFailed, fmt.Errorf("the action did not finish in time: %w", err), "the page may be stuck; try 'surf observe', or 'surf close' and 'surf open' again")
	}
	if errors.Is(err, websurfer.ErrClosed) {
		h.stopNow()
	}
	h.log.Warn("session error", "err", err)
	return daemon.Fail(daemon.ExitFailed, err, "if the session no longer works, run 'surf close' and 'surf open URL' again")
}

// decodeArgs decodes a built-in's arguments strictly; nil means none.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// errorResponse turns an error the CLI would report into a Response with
// the same message, hint and exit code.
func errorResponse(err error) daemon.Response {
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		code = 2
	}
	hint := ""
	var he *hintError
	if errors.As(err, &he) {
		hint = he.hint
	} else {
		hint = hintFor(err)
	}
	return daemon.Fail(code, err, hint)
}
