package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
)

// The session daemon is "surf session-daemon", a hidden command that
// "surf open" starts by re-executing its own binary, detached (its own
// session, stdin from /dev/null, stdout and stderr to NAME.log in the
// runtime directory). One daemon holds one named session: its own sandbox
// (browser process), session and surfer, with the policy and browser flags
// "surf open" was given, fixed for its life. It holds NAME.lock while it
// runs, serves NAME.sock (see cmd/surf/internal/session and
// cmd/surf/internal/daemon) and exits after the idle
// timeout, on "surf close", on SIGTERM/SIGINT or when its browser goes away,
// closing the browser and removing its socket and pid file.
//
// Start-up is reported on the file descriptor --ready-fd names: one JSON
// line, a daemon.Response, OK once the socket is listening, else the error
// (with hint and exit code) that stopped it. A daemon that finds the
// session's lock held reports daemon.ErrBusy and exits 0: another "surf
// open" started the session first, and its caller connects to that one.

func init() {
	c := &command{
		name:    "session-daemon",
		summary: "the background process behind 'surf open' (not for direct use)",
		usage:   helpText("session-daemon"),
		hidden:  true,
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
		report := daemon.ReadyReporter(*readyFD) // once, on the ready pipe
		err := session.Serve(ctx, session.DaemonConfig{
			Dir: *dir, Name: *name, Idle: *idle, Flags: session.FlagArgs(fs, openFlagNames()),
			Open:    func(ctx context.Context) (*session.Browser, error) { return openSessionBrowser(ctx, cli, bf) },
			Ready:   report,
			Respond: func(err error) daemon.Response { return errorResponse(stateError(err)) },
			Logger:  daemonLogger(cli),
		})
		if err != nil {
			report(errorResponse(err))
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

// openSessionBrowser opens the daemon's browser with the flags "surf
// open" gave.
func openSessionBrowser(ctx context.Context, cli *CLI, bf *browserFlags) (*session.Browser, error) {
	b, err := bf.open(ctx, cli, openOptions{})
	if err != nil {
		return nil, err
	}
	return &session.Browser{Sandbox: b.Sandbox(), Session: b.Session(), Surfer: b.Surfer(), State: bf.stateFile,
		CheckURL: b.checkURL, Close: b.Close}, nil
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
