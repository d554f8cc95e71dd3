package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/sandbox"
)

// How long ConnectOrStart waits for a new daemon to report (its browser
// launch is bounded by the sandbox's own 60s), and how many daemons it
// starts before giving up.
const (
	StartTimeout = 90 * time.Second
	maxStarts    = 3
)

// HintError is an error with advice for the person who ran the command
// and, when not zero, the exit code the command ends with (ExitUsage for
// a mistake in its flags or arguments; zero means ExitFailed).
type HintError struct {
	Err  error
	Hint string
	Code int
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// ResponseError is a daemon's failed start-up report.
type ResponseError struct{ Response Response }

func (e *ResponseError) Error() string { return e.Response.Error }

// ConnectOrStart returns a connection to session p's daemon, starting one
// with flags when none runs (or the one there died, leaving a stale
// socket). The session's lock tells a daemon that is starting or stopping
// (lock held, no answer yet) from none at all (lock free).
func ConnectOrStart(ctx context.Context, exe string, p Paths, flags []string) (c *Client, started bool, err error) {
	deadline := time.Now().Add(StartTimeout)
	starts := 0
	for {
		c, err := Dial(ctx, p.Socket)
		if err == nil {
			return c, started, nil
		}
		if !errors.Is(err, ErrNoDaemon) {
			return nil, false, err
		}
		lock, lerr := Acquire(p.Lock)
		switch {
		case lerr == nil:
			lock.Release()
			if starts == maxStarts {
				return nil, false, &HintError{Err: fmt.Errorf("the session daemon for %q did not stay up", p.Name), Hint: "see its log: " + p.Log}
			}
			starts++
			ours, err := start(ctx, exe, p, flags)
			if err != nil {
				return nil, false, err
			}
			started = started || ours
			continue
		case errors.Is(lerr, ErrBusy):
			// Another daemon is starting or stopping; wait for it.
		default:
			return nil, false, lerr
		}
		if time.Now().After(deadline) {
			return nil, false, &HintError{Err: fmt.Errorf("timed out waiting for the session daemon of %q", p.Name), Hint: "see its log: " + p.Log}
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// start runs exe (surf) as "surf session-daemon", detached
// (its own session, so a terminal's ^C or hang-up does not reach it), and
// waits for its start-up report on a pipe. It returns true when the daemon
// is listening, false when another daemon holds the session (the caller
// then connects to that one).
func start(ctx context.Context, exe string, p Paths, flags []string) (bool, error) {
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
		resp Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(pr).ReadBytes('\n')
		if len(line) == 0 {
			got <- result{err: err}
			return
		}
		var r Response
		if err := json.Unmarshal(line, &r); err != nil {
			got <- result{err: fmt.Errorf("reading the session daemon's start-up report: %w", err)}
			return
		}
		got <- result{resp: r}
	}()
	timer := time.NewTimer(StartTimeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		cmd.Process.Signal(syscall.SIGTERM)
		return false, ctx.Err()
	case <-timer.C:
		cmd.Process.Signal(syscall.SIGTERM)
		return false, &HintError{Err: fmt.Errorf("the session daemon did not start within %s", StartTimeout), Hint: "see its log: " + p.Log}
	case r := <-got:
		switch {
		case r.err != nil:
			return false, &HintError{Err: fmt.Errorf("the session daemon exited while starting%s", LogTail(p.Log)), Hint: "see its log: " + p.Log}
		case r.resp.OK:
			return true, nil
		case r.resp.Error == ErrBusy.Error():
			return false, nil
		default:
			return false, &ResponseError{Response: r.resp}
		}
	}
}

// LogTail is the last lines of a daemon's log, for an error message.
func LogTail(path string) string {
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

// WaitGone waits until pid is no longer a live process.
func WaitGone(ctx context.Context, pid int, within time.Duration) error {
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

// CleanStale removes what a daemon that died without cleaning up left in
// the runtime directory: its socket and pid file, and the sandbox's temp
// directories named for its pid (surf-<pid>-* in the temp dir; the browser
// itself died with the daemon's Playwright driver). The caller holds the
// session's lock, so no live daemon owns them.
func CleanStale(p Paths, log *slog.Logger) {
	pid := ReadPID(p.PID)
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

// ReadyReporter is the daemon's side of the start-up report that
// ConnectOrStart reads: it returns a func that writes its first Response
// as one JSON line on file descriptor fd (--ready-fd) and closes it;
// later calls do nothing. The descriptor is marked close-on-exec first,
// so that the browser and its driver do not hold the pipe open. An fd of
// 2 or less (none given) reports nowhere.
func ReadyReporter(fd int) func(Response) {
	var ready *os.File
	if fd > 2 {
		syscall.CloseOnExec(fd)
		ready = os.NewFile(uintptr(fd), "ready")
	}
	var once sync.Once
	return func(resp Response) {
		once.Do(func() {
			if ready == nil {
				return
			}
			b, _ := json.Marshal(resp)
			ready.Write(append(b, '\n'))
			ready.Close()
		})
	}
}
