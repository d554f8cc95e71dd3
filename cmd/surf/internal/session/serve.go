// Package session is the browser side and the vocabulary of surf's
// background sessions ("surf open", "surf click 12", "surf close"): the
// handler a session daemon answers requests with, the daemon's run from
// lock to exit, and how each session command's arguments become a request.
//
// cmd/surf/internal/daemon carries the requests (socket, protocol, lock,
// start-up); this package gives them meaning. A daemon process opens its
// browser and calls Serve, which holds the session's lock, serves its
// socket with a Handler and closes the browser when it stops:
//
//	err := session.Serve(ctx, session.DaemonConfig{
//		Dir: dir, Name: "default", Flags: flags,
//		Open: func(ctx context.Context) (*session.Browser, error) { ... },
//	})
//
// A client builds its request from a command's words with an Action of
// Actions, or names a built-in (ReqOpen, ReqClose, ...), sends it with
// Call (Open starts the daemon when none runs, Close ends it and waits for
// it to go), and prints what comes back (NewOutcome for --json):
//
//	p, err := session.PathsOf(os.Getenv, "default")
//	...
//	resp, err := session.Open(ctx, p, nil, "https://example.com/", nil)
//	...
//	resp, err = session.Call(ctx, os.Getenv, "default", daemon.Request{Tool: session.ReqObserve})
package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/websurfer"
)

// Browser is the open browser a session daemon serves: a sandbox, one
// session in it and its surfer.
type Browser struct {
	Sandbox *sandbox.Sandbox
	Session *sandbox.Session
	Surfer  *websurfer.Surfer
	// State is the session's state file; a zero Path means none.
	State sandbox.StateFile
	// CheckURL judges a URL given to open before it is visited, to
	// refuse it with advice; nil leaves it to the surfer's gate alone.
	CheckURL func(url string) error
	// Close closes the surfer, the session and the sandbox; its error is
	// the session's (a state file that could not be saved). Nil closes
	// the three and returns the session's error.
	Close func() error
}

func (b *Browser) close() error {
	if b.Close != nil {
		return b.Close()
	}
	b.Surfer.Close()
	err := b.Session.Close()
	b.Sandbox.Close()
	return err
}

// DaemonConfig is what Serve runs a session daemon with.
type DaemonConfig struct {
	// Dir is the runtime directory (daemon.RuntimeDir) and Name the
	// session's name: its files are daemon.PathsFor(Dir, Name). Both are
	// required.
	Dir, Name string
	// Idle is how long the daemon waits for a request before it exits;
	// zero means daemon.DefaultIdle.
	Idle time.Duration
	// Flags are the flags the session was opened with, answered to
	// ReqStatus so that a later "surf open" can compare its own.
	Flags []string
	// Open opens the browser, once the lock is held; required.
	Open func(ctx context.Context) (*Browser, error)
	// Ready, when set, is called once the socket listens, with the
	// daemon's pid in the response's Text.
	Ready func(daemon.Response)
	// Respond turns an error into a response, with the message, hint and
	// exit code the CLI would print for it; nil means exit code 1 and the
	// error's Hint() method, if it has one.
	Respond func(error) daemon.Response
	// Logger gets the daemon's own lines (start, stop, errors); nil
	// discards them.
	Logger *slog.Logger
}

// Serve runs a session daemon until its idle timeout, ReqClose, the end of
// ctx (a normal way to stop: it returns nil) or its browser going away:
// it holds the session's lock (daemon.ErrBusy when another process has
// it), writes the pid file, opens the browser, serves the socket, and on
// the way out closes the browser and removes its socket and pid file.
func Serve(ctx context.Context, cfg DaemonConfig) error {
	if cfg.Dir == "" || cfg.Name == "" || cfg.Open == nil {
		return errors.New("session: DaemonConfig needs Dir, Name and Open")
	}
	if cfg.Idle < 0 {
		return fmt.Errorf("session: negative idle timeout %v", cfg.Idle)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := daemon.EnsureDir(cfg.Dir); err != nil {
		return err
	}
	p, err := daemon.PathsFor(cfg.Dir, cfg.Name)
	if err != nil {
		return err
	}
	lock, err := daemon.Acquire(p.Lock)
	if err != nil {
		return err
	}
	defer lock.Release()
	os.Truncate(p.Log, 0) // the log is this daemon's from here on
	daemon.CleanStale(p, log)
	if err := daemon.WritePID(p.PID); err != nil {
		return fmt.Errorf("writing the pid file: %w", err)
	}
	defer os.Remove(p.PID)

	b, err := cfg.Open(ctx)
	if err != nil {
		return err
	}
	h := NewHandler(b, HandlerConfig{Name: cfg.Name, Flags: cfg.Flags, Respond: cfg.Respond, Logger: log})
	defer h.CloseBrowser()
	if b.Sandbox != nil {
		if br := b.Sandbox.Browser(); br != nil {
			br.OnDisconnected(func(playwright.Browser) {
				if !h.closing.Load() {
					log.Warn("the browser went away; stopping the session daemon")
				}
				h.stopNow()
			})
		}
	}
	srv, err := daemon.Listen(daemon.Config{Socket: p.Socket, Handler: h, Idle: cfg.Idle, Stop: h.stop, Logger: log})
	if err != nil {
		return err
	}
	defer srv.Close()
	idle := cfg.Idle
	if idle == 0 {
		idle = daemon.DefaultIdle
	}
	log.Info("session daemon started", "session", cfg.Name, "pid", os.Getpid(), "socket", p.Socket, "idle", idle, "flags", strings.Join(cfg.Flags, " "))
	if cfg.Ready != nil {
		cfg.Ready(daemon.Response{OK: true, Text: fmt.Sprint(os.Getpid())})
	}
	err = srv.Serve(ctx)
	log.Info("session daemon stopping", "reason", srv.Reason())
	if errors.Is(err, context.Canceled) {
		return nil // SIGTERM or SIGINT: a normal way to stop a daemon
	}
	return err
}
