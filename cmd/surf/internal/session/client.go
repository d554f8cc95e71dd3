package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
)

// The client side of a session: what "surf open", "surf close" and each
// session command do before and after their one request. Errors carry the
// advice and exit code the CLI prints: *daemon.HintError for the client's
// own, *daemon.ResponseError for a daemon's failed response.

// DefaultName is the session commands use without --session or
// $SURF_SESSION.
const DefaultName = "default"

// ExitWait bounds how long Close waits for the daemon process to be gone
// after it answered.
const ExitWait = 30 * time.Second

// PathFlags are the open flags whose values are paths: FlagArgs makes them
// absolute before they reach the daemon.
var PathFlags = map[string]bool{"policy": true, "uploads": true, "downloads": true,
	"state": true, "state-passphrase-file": true, "state-identity": true}

// PathsOf finds the runtime directory (creating it 0700 if needed) and the
// files of session name in it.
func PathsOf(getenv func(string) string, name string) (daemon.Paths, error) {
	dir := daemon.RuntimeDir(getenv)
	if err := daemon.EnsureDir(dir); err != nil {
		return daemon.Paths{}, &daemon.HintError{Err: err, Hint: "set SURF_RUNTIME_DIR to a directory of your own with mode 0700"}
	}
	p, err := daemon.PathsFor(dir, name)
	if err != nil {
		return daemon.Paths{}, &daemon.HintError{Err: err, Code: daemon.ExitUsage}
	}
	return p, nil
}

// Names lists the sessions that have a socket in the runtime directory,
// sorted.
func Names(getenv func(string) string) ([]string, error) {
	dir := daemon.RuntimeDir(getenv)
	if err := daemon.EnsureDir(dir); err != nil {
		return nil, err
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	names := make([]string, 0, len(socks))
	for _, s := range socks {
		names = append(names, strings.TrimSuffix(filepath.Base(s), ".sock"))
	}
	sort.Strings(names)
	return names, nil
}

// sessionFlag is " --session NAME" for a session other than the default,
// for the commands a hint names.
func sessionFlag(name string) string {
	if name == DefaultName {
		return ""
	}
	return " --session " + name
}

// NotOpenError is the error for a command that needs session name when
// none is open.
func NotOpenError(name string) error {
	return &daemon.HintError{Err: fmt.Errorf("no surf session %q is open", name),
		Hint: fmt.Sprintf("run 'surf open URL%s' first", sessionFlag(name))}
}

// Call sends one request to the daemon of session name and returns its
// response; a failed response is returned as a *daemon.ResponseError.
func Call(ctx context.Context, getenv func(string) string, name string, req daemon.Request) (*daemon.Response, error) {
	resp, err := CallRaw(ctx, getenv, name, req)
	if err != nil {
		return nil, err
	}
	if !resp.OK {
		return nil, &daemon.ResponseError{Response: *resp}
	}
	return resp, nil
}

// CallRaw is Call that returns a failed response as it is.
func CallRaw(ctx context.Context, getenv func(string) string, name string, req daemon.Request) (*daemon.Response, error) {
	p, err := PathsOf(getenv, name)
	if err != nil {
		return nil, err
	}
	c, err := daemon.Dial(ctx, p.Socket)
	if errors.Is(err, daemon.ErrNoDaemon) {
		return nil, NotOpenError(name)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Call(ctx, req)
}

// FlagArgs lists the flags set on fs that are in names as --name=value
// arguments, in name order, the values of PathFlags made absolute: how
// "surf open" passes them to the daemon, and how it compares them with a
// running session's.
func FlagArgs(fs *pflag.FlagSet, names map[string]bool) []string {
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
		if PathFlags[f.Name] && v != "" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs
			}
		}
		out = append(out, "--"+f.Name+"="+v)
	})
	return out
}

// CheckSameFlags refuses to reuse a running session with other flags than
// it was opened with: its policy and browser are fixed for its life.
func CheckSameFlags(ctx context.Context, c *daemon.Client, name string, flags []string) error {
	resp, err := c.Call(ctx, daemon.Request{Tool: ReqStatus})
	if err != nil {
		return err
	}
	if !resp.OK {
		return &daemon.ResponseError{Response: *resp}
	}
	var st Status
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
	return &daemon.HintError{Code: daemon.ExitUsage,
		Err:  fmt.Errorf("session %q is already open with other flags: %s", name, have),
		Hint: fmt.Sprintf("a session's policy and browser flags are fixed when it opens: run 'surf close%s' first, open it without flags to reuse it, or use --session NAME for another session", sessionFlag(name))}
}

// ConnectOrStart connects to session p's daemon, starting one with flags
// (this executable as "surf session-daemon") when none runs. started
// tells whether this call started it.
func ConnectOrStart(ctx context.Context, p daemon.Paths, flags []string) (c *daemon.Client, started bool, err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, false, fmt.Errorf("finding surf's own executable to start the session daemon: %w", err)
	}
	return daemon.ConnectOrStart(ctx, exe, p, flags)
}

// Close closes the session at p and waits (up to ExitWait) for its daemon
// to exit; it returns the daemon's closing text. A session that is not
// open is an error matching daemon.ErrNoDaemon, after its stale files,
// if any, are removed (log, nil to discard, says which).
func Close(ctx context.Context, p daemon.Paths, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	conn, err := daemon.Dial(ctx, p.Socket)
	if errors.Is(err, daemon.ErrNoDaemon) {
		if lock, lerr := daemon.Acquire(p.Lock); lerr == nil {
			daemon.CleanStale(p, log)
			lock.Release()
		}
		return "", err
	}
	if err != nil {
		return "", err
	}
	defer conn.Close()
	resp, err := conn.Call(ctx, daemon.Request{Tool: ReqClose})
	if err != nil {
		return "", err
	}
	if !resp.OK {
		return "", &daemon.ResponseError{Response: *resp}
	}
	if err := daemon.WaitGone(ctx, conn.PID(), ExitWait); err != nil {
		return "", err
	}
	return resp.Text, nil
}

// Open is "surf open": it opens url in session p (or, for "", observes
// its page), starting the session's daemon with flags when none runs, and
// returns the daemon's response as it is, failed or not. Before a daemon
// is started, check, when set, vets url (when not "") under the new
// session's policy; a running session checks the URL itself, and when
// flags are given it must have been opened with the same (see
// CheckSameFlags).
func Open(ctx context.Context, p daemon.Paths, flags []string, url string, check func(url string) error) (*daemon.Response, error) {
	conn, err := daemon.Dial(ctx, p.Socket)
	started := false
	if errors.Is(err, daemon.ErrNoDaemon) {
		if url != "" && check != nil {
			if err := check(url); err != nil {
				return nil, err
			}
		}
		conn, started, err = ConnectOrStart(ctx, p, flags)
	}
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if !started && len(flags) > 0 {
		if err := CheckSameFlags(ctx, conn, p.Name, flags); err != nil {
			return nil, err
		}
	}
	a, _ := json.Marshal(map[string]string{"url": url})
	return conn.Call(ctx, daemon.Request{Tool: ReqOpen, Args: a})
}
