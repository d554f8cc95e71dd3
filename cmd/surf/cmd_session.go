package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// The session commands: "surf open" starts (or reuses) a background
// session daemon and each later command is one action on it, for agents
// that work through a shell. See cmd/surf/internal/session for the
// daemon's side and the actions' requests, and cmd/surf/internal/daemon
// for the socket and protocol.

// openUsage is the usage text of surf open.
var openUsage = helpText("open")

// closeUsage is the usage text of surf close.
var closeUsage = helpText("close")

func init() {
	open := &command{
		name:    "open",
		summary: "start (or reuse) a background browser session and open a URL in it",
		usage:   openUsage,
	}
	open.run = func(ctx context.Context, cli *CLI, args []string) error { return runOpen(ctx, cli, open, args) }
	register(open)

	closeCmd := &command{
		name:    "close",
		summary: "close a background session: its browser and daemon",
		usage:   closeUsage,
	}
	closeCmd.run = func(ctx context.Context, cli *CLI, args []string) error { return runClose(ctx, cli, closeCmd, args) }
	register(closeCmd)

	for _, a := range session.Actions {
		registerAction(a)
	}
}

// openFlags are surf open's flags and URL.
type openFlags struct {
	name  string
	idle  time.Duration
	json  bool
	bf    *browserFlags
	url   string
	flags []string // the session's flags, as given
}

func parseOpenFlags(c *command, cli *CLI, args []string) (*openFlags, error) {
	fs := newFlags(c)
	f := &openFlags{}
	name := addSessionFlag(fs, cli)
	fs.DurationVar(&f.idle, "idle", 0, "")
	fs.BoolVar(&f.json, "json", false, "")
	f.bf = addBrowserFlags(fs)
	f.bf.state = addStateFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 1 {
		return nil, usagef(c, "open takes at most one URL")
	}
	if f.idle < 0 {
		return nil, usagef(c, "--idle must not be negative")
	}
	f.name, f.url = *name, fs.Arg(0)
	f.flags = session.FlagArgs(fs, openFlagNames())
	return f, nil
}

// check checks what can be checked before a browser starts: the policy
// flags, the state file and the uploads directory. It returns the policy.
func (f *openFlags) check(cli *CLI) (*policy.Policy, error) {
	pol, err := f.bf.pol.policy(cli.Getenv)
	if err != nil {
		return nil, err
	}
	if _, err := f.bf.state.file(cli.Getenv); err != nil {
		return nil, err
	}
	if f.bf.uploads != "" {
		if fi, err := os.Stat(f.bf.uploads); err != nil || !fi.IsDir() {
			return nil, withHint(fmt.Errorf("--uploads %s is not a directory", f.bf.uploads), "create it and put the files the agent may upload in it")
		}
	}
	return pol, nil
}

// runOpen is surf open.
func runOpen(ctx context.Context, cli *CLI, c *command, args []string) error {
	f, err := parseOpenFlags(c, cli, args)
	if err != nil {
		return err
	}
	p, err := session.PathsOf(cli.Getenv, f.name)
	if err != nil {
		return sessionError(err)
	}
	// For a new session, the URL is checked under its policy here; a
	// running session checks the URL itself.
	pol, err := f.check(cli)
	if err != nil {
		return err
	}
	resp, err := session.Open(ctx, p, f.flags, f.url, (&browser{pol: pol, bf: f.bf}).checkURL)
	if err != nil {
		return sessionError(err)
	}
	if f.json {
		return printJSON(cli, f.name, "open", resp)
	}
	if !resp.OK {
		return responseError(resp)
	}
	printText(cli, resp.Text)
	return nil
}

// runClose is surf close.
func runClose(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	name := addSessionFlag(fs, cli)
	all := fs.Bool("all", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "close takes no arguments")
	}
	if *all && fs.Changed("session") {
		return usagef(c, "--all and --session do not go together")
	}
	names := []string{*name}
	if *all {
		var err error
		if names, err = session.Names(cli.Getenv); err != nil {
			return err
		}
	}
	var errs []error
	for _, n := range names {
		if err := closeSession(ctx, cli, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeSession closes one session and waits for its daemon to exit. A
// session that is not open is reported on stderr, not as an error; its
// stale files, if any, are removed.
func closeSession(ctx context.Context, cli *CLI, name string) error {
	p, err := session.PathsOf(cli.Getenv, name)
	if err != nil {
		return sessionError(err)
	}
	text, err := session.Close(ctx, p, cli.Logger)
	if errors.Is(err, daemon.ErrNoDaemon) {
		fmt.Fprintf(cli.Stderr, "surf: no session %q is open\n", name)
		return nil
	}
	if err != nil {
		return sessionError(err)
	}
	printText(cli, text)
	return nil
}

// printText prints a response's text, ending it with a newline.
func printText(cli *CLI, s string) {
	if s == "" {
		return
	}
	fmt.Fprint(termsafe.Writer(cli.Stdout), s)
	if !strings.HasSuffix(s, "\n") {
		fmt.Fprintln(cli.Stdout)
	}
}

func registerAction(a *session.Action) {
	c := &command{name: a.Name, summary: a.Summary, usage: actionUsage(a.Usage)}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		name := addSessionFlag(fs, cli)
		asJSON := fs.Bool("json", false, "")
		var build func([]string) (daemon.Request, string)
		if a.Flags != nil {
			build = a.Flags(fs)
		}
		// The open flags are registered only to refuse them clearly.
		openOnly := openFlagNames()
		addBrowserFlags(fs)
		addStateFlags(fs)
		fs.Duration("idle", 0, "")
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		var refused []string
		fs.Visit(func(f *pflag.Flag) {
			if openOnly[f.Name] {
				refused = append(refused, "--"+f.Name)
			}
		})
		if len(refused) > 0 {
			return usagef(c, "%s can only be given to 'surf open': a session's policy and browser are fixed when it opens (close it and open it again to change them)", strings.Join(refused, ", "))
		}
		req, msg := build(fs.Args())
		if msg != "" {
			return usagef(c, "%s", msg)
		}
		if *asJSON && !a.SaveImage {
			resp, err := session.CallRaw(ctx, cli.Getenv, *name, req)
			if err != nil {
				return sessionError(err)
			}
			return printJSON(cli, *name, a.Name, resp)
		}
		resp, err := callSession(ctx, cli, *name, req)
		if err != nil {
			return err
		}
		if a.SaveImage {
			return saveResponseImage(cli, fs.Arg(0), resp)
		}
		printText(cli, resp.Text)
		return nil
	}
	register(c)
}

// printJSON prints a session command's outcome as one JSON object:
// {"ok", "session", "command", "text", "observation"} on success, with
// "error", "hint" and "exit_code" instead of text on failure, and ends
// with the exit code the text form would have.
func printJSON(cli *CLI, name, cmd string, resp *daemon.Response) error {
	out := session.NewOutcome(name, cmd, resp)
	enc := json.NewEncoder(cli.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return &exitError{code: out.ExitCode}
	}
	return nil
}

// actionUsage adds --session to an action's flags and a pointer to
// 'surf help open' before its example.
func actionUsage(u string) string {
	const session = "  --session NAME      the session (default \"default\", or $SURF_SESSION)\n" +
		"  --json              print the outcome and the observation as one JSON object\n"
	if i := strings.Index(u, "Flags:\n"); i >= 0 {
		i += len("Flags:\n")
		u = u[:i] + session + u[i:]
	} else if i := strings.Index(u, "\n\nExample:"); i >= 0 {
		u = u[:i] + "\n\nFlags:\n" + strings.TrimSuffix(session, "\n") + u[i:]
	}
	return u + "\n\nIt acts on the session 'surf open' started; see 'surf help open'."
}

// saveResponseImage saves the image of a response (surf screenshot) to
// path.
func saveResponseImage(cli *CLI, path string, resp *daemon.Response) error {
	if len(resp.Image) == 0 {
		return errors.New("the session sent no image")
	}
	if err := (&websurfer.Observation{Image: resp.Image}).SaveImage(path); err != nil {
		return fmt.Errorf("saving the screenshot: %w", err)
	}
	fmt.Fprintf(cli.Stdout, "saved %s to %s\n", resp.Text, path)
	return nil
}
