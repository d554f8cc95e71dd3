package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/sandbox"
)

// How long "surf open" waits for a new daemon to report (its browser
// launch is bounded by the sandbox's own 60s), and how many daemons it
// starts before giving up.
const (
	daemonStartTimeout = 90 * time.Second
	daemonMaxStarts    = 3
	// daemonExitWait bounds how long "surf close" waits for the daemon
	// process to be gone after it answered.
	daemonExitWait = 30 * time.Second
)

// defaultSession is the session commands use without --session or
// $SURF_SESSION.
const defaultSession = "default"

// addSessionFlag registers --session on fs; its default is $SURF_SESSION
// or "default".
func addSessionFlag(fs *pflag.FlagSet, cli *CLI) *string {
	def := cli.Getenv("SURF_SESSION")
	if def == "" {
		def = defaultSession
	}
	return fs.String("session", def, "the session's name")
}

// sessionPaths finds the runtime directory (creating it 0700 if needed)
// and the files of session name in it.
func sessionPaths(cli *CLI, name string) (daemon.Paths, error) {
	dir := daemon.RuntimeDir(cli.Getenv)
	if err := daemon.EnsureDir(dir); err != nil {
		return daemon.Paths{}, withHint(err, "set SURF_RUNTIME_DIR to a directory of your own with mode 0700")
	}
	p, err := daemon.PathsFor(dir, name)
	if err != nil {
		return daemon.Paths{}, &exitError{code: 2, err: err}
	}
	return p, nil
}

// noSessionError is the error for a command that needs a session when
// none is open.
func noSessionError(name string) error {
	flag := ""
	if name != defaultSession {
		flag = " --session " + name
	}
	return withHint(fmt.Errorf("no surf session %q is open", name), fmt.Sprintf("run 'surf open URL%s' first", flag))
}

// callSession sends one request to the daemon of session name and returns
// its response; a failed response is returned as an error carrying the
// daemon's message, hint and exit code.
func callSession(ctx context.Context, cli *CLI, name string, req daemon.Request) (*daemon.Response, error) {
	resp, err := rawCallSession(ctx, cli, name, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK {
		return nil, responseError(resp)
	}
	return resp, nil
}

// rawCallSession is callSession that returns a failed response as it is.
func rawCallSession(ctx context.Context, cli *CLI, name string, req daemon.Request) (*daemon.Response, error) {
	p, err := sessionPaths(cli, name)
	if err != nil {
		return nil, err
	}
	c, err := daemon.Dial(ctx, p.Socket)
	if errors.Is(err, daemon.ErrNoDaemon) {
		return nil, noSessionError(name)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Call(ctx, req)
}

// responseError turns a failed response into the CLI's error.
func responseError(resp *daemon.Response) error {
	var err error = errors.New(resp.Error)
	if resp.Hint != "" {
		err = withHint(err, resp.Hint)
	}
	code := resp.ExitCode
	if code == 0 {
		code = 1
	}
	return &exitError{code: code, err: err}
}

// connectOrStart returns a connection to session p's daemon, starting one
// with flags when none runs (or the one there died, leaving a stale
// socket). The session's lock tells a daemon that is starting or stopping
// (lock held, no answer yet) from none at all (lock free).
func connectOrStart(ctx context.Context, cli *CLI, p daemon.Paths, flags []string) (c *daemon.Client, started bool, err error) {
	deadline := time.Now().Add(daemonStartTimeout)
	starts := 0
	for {
		c, err := daemon.Dial(ctx, p.Socket)
		if err == nil {
			return c, started, nil
		}
		if !errors.Is(err, daemon.ErrNoDaemon) {
			return nil, false, err
		}
		lock, lerr := daemon.Acquire(p.Lock)
		switch {
		case lerr == nil:
			lock.Release()
			if starts == daemonMaxStarts {
				return nil, false, withHint(fmt.Errorf("the session daemon for %q did not stay up", p.Name), "see its log: "+p.Log)
			}
			starts++
			ours, err := startDaemon(ctx, cli, p, flags)
			if err != nil {
				return nil, false, err
			}
			started = started || ours
			continue
		case errors.Is(lerr, daemon.ErrBusy):
			// Another daemon is starting or stopping; wait for it.
		default:
			return nil, false, lerr
		}
		if time.Now().After(deadline) {
			return nil, false, withHint(fmt.Errorf("timed out waiting for the session daemon of %q", p.Name), "see its log: "+p.Log)
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// startDaemon re-executes this binary as "surf session-daemon", detached
// (its own session, so a terminal's ^C or hang-up does not reach it), and
// waits for its start-up report on a pipe. It returns true when the daemon
// is listening, false when another daemon holds the session (the caller
// then connects to that one).
func startDaemon(ctx context.Context, cli *CLI, p daemon.Paths, flags []string) (bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return false, fmt.Errorf("finding surf's own executable to start the session daemon: %w", err)
	}
	// Appending: the daemon that wins the session's lock truncates it.
	logf, err := os.OpenFile(p.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return false, fmt.Errorf("opening the session log: %w", err)
	}
	defer logf.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		return false, err
	}
	defer pr.Close()
	args := append([]string{"session-daemon", "--runtime-dir=" + p.Dir, "--session=" + p.Name, "--ready-fd=3"}, flags...)
	cmd := exec.Command(exe, args...)
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.ExtraFiles = []*os.File{pw} // fd 3 in the daemon
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return false, fmt.Errorf("starting the session daemon: %w", err)
	}
	pw.Close()
	// Reap the daemon if it exits while this process still runs; once
	// this process exits, the daemon is adopted and reaped by init.
	go cmd.Wait()

	type result struct {
		resp daemon.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadBytes('\n')
		if len(line) == 0 {
			got <- result{err: err}
			return
		}
		var r daemon.Response
		if err := json.Unmarshal(line, &r); err != nil {
			got <- result{err: fmt.Errorf("reading the session daemon's start-up report: %w", err)}
			return
		}
		got <- result{resp: r}
	}()
	timer := time.NewTimer(daemonStartTimeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGTERM)
		return false, ctx.Err()
	case <-timer.C:
		cmd.Process.Signal(syscall.SIGTERM)
		return false, withHint(fmt.Errorf("the session daemon did not start within %s", daemonStartTimeout), "see its log: "+p.Log)
	case r := <-got:
		switch {
		case r.err != nil:
			return false, withHint(fmt.Errorf("the session daemon exited while starting%s", logTail(p.Log)), "see its log: "+p.Log)
		case r.resp.OK:
			return true, nil
		case r.resp.Error == daemon.ErrBusy.Error():
			return false, nil
		default:
			return false, responseError(&r.resp)
		}
	}
}

// logTail is the last lines of a daemon's log, for an error message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return ":\n  " + strings.Join(lines, "\n  ")
}

// waitGone waits until pid is no longer a live process.
func waitGone(ctx context.Context, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	for proc.Alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the session daemon (pid %d) is still running %s after it was closed", pid, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return nil
}

// cleanStale removes what a daemon that died without cleaning up left in
// the runtime directory: its socket and pid file, and the sandbox's temp
// directories named for its pid (surf-<pid>-* in the temp dir; the browser
// itself died with the daemon's Playwright driver). The caller holds the
// session's lock, so no live daemon owns them.
func cleanStale(p daemon.Paths, log *slog.Logger) {
	pid := daemon.ReadPID(p.PID)
	if pid > 0 && pid != os.Getpid() && !proc.Alive(pid) {
		removed, err := sandbox.RemoveStale(pid)
		for _, dir := range removed {
			log.Info("removed a dead session daemon's temp dir", "pid", pid, "dir", dir)
		}
		if err != nil {
			log.Info("removing a dead session daemon's temp dirs", "pid", pid, "err", err)
		}
		os.Remove(p.PID)
	}
	if fi, err := os.Lstat(p.Socket); err == nil && fi.Mode()&os.ModeSocket != 0 {
		log.Info("removing a stale session socket", "socket", p.Socket)
		os.Remove(p.Socket)
	}
}

// openFlagNames are the flags "surf open" hands to the daemon: the browser
// flags and --idle. Only "surf open" takes them; they are fixed for the
// session's life.
func openFlagNames() map[string]bool {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	addBrowserFlags(fs)
	addStateFlags(fs)
	names := map[string]bool{"idle": true}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}

// pathFlags are the open flags whose values are paths: they are made
// absolute before they reach the daemon.
var pathFlags = map[string]bool{"policy": true, "uploads": true, "downloads": true,
	"state": true, "state-passphrase-file": true, "state-identity": true}

// sessionFlagArgs lists the flags set on fs (those in names; nil means
// all of openFlagNames) as --name=value arguments, in name order, paths
// made absolute: how "surf open" passes them to the daemon, and how it
// compares them with a running session's.
func sessionFlagArgs(fs *pflag.FlagSet, names map[string]bool) []string {
	if names == nil {
		names = openFlagNames()
	}
	var out []string
	fs.Visit(func(f *pflag.Flag) {
		if !names[f.Name] {
			return
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		v := f.Value.String()
		if pathFlags[f.Name] && v != "" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		out = append(out, "--"+f.Name+"="+v)
	})
	return out
}

// checkSameFlags refuses to reuse a running session with other flags than
// it was opened with: its policy and browser are fixed for its life.
func checkSameFlags(ctx context.Context, c *daemon.Client, name string, flags []string) error {
	resp, err := c.Call(ctx, daemon.Request{Tool: reqStatus})
	if err != nil {
		return err
	}
	if !resp.OK {
		return responseError(resp)
	}
	var st sessionStatus
	if err := json.Unmarshal([]byte(resp.Text), &st); err != nil {
		return fmt.Errorf("reading the session's status: %w", err)
	}
	if slices.Equal(st.Flags, flags) {
		return nil
	}
	have := strings.Join(st.Flags, " ")
	if have == "" {
		have = "(none)"
	}
	flag := ""
	if name != defaultSession {
		flag = " --session " + name
	}
	return &exitError{code: 2, err: withHint(
		fmt.Errorf("session %q is already open with other flags: %s", name, have),
		fmt.Sprintf("a session's policy and browser flags are fixed when it opens: run 'surf close%s' first, open it without flags to reuse it, or use --session NAME for another session", flag))}
}
