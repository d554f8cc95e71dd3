package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
)

const (
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
	resp, err := c.Call(ctx, daemon.Request{Tool: session.ReqStatus})
	if err != nil {
		return err
	}
	if !resp.OK {
		return responseError(resp)
	}
	var st session.Status
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

// connectOrStart connects to session p's daemon, starting one with flags
// (this executable as surf session-daemon) when none runs.
func connectOrStart(ctx context.Context, p daemon.Paths, flags []string) (*daemon.Client, bool, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, false, fmt.Errorf("finding surf's own executable to start the session daemon: %w", err)
	}
	c, started, err := daemon.ConnectOrStart(ctx, exe, p, flags)
	var he *daemon.HintError
	var re *daemon.ResponseError
	switch {
	case errors.As(err, &re):
		return nil, false, responseError(&re.Response)
	case errors.As(err, &he):
		return nil, false, withHint(he.Err, he.Hint)
	}
	return c, started, err
}
