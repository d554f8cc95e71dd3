package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/internal/login"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// loginUsage is the usage text of surf login.
var loginUsage = helpText("login")

func init() {
	c := &command{
		name:    "login",
		summary: "log in by hand in a browser window and save the session to a state file",
		usage:   loginUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runLogin(ctx, cli, c, args) }
	register(c)
}

// noDisplayHint is what to do when surf login has no display for its
// window.
const noDisplayHint = "run 'surf login' on a machine with a display and copy the state file here (encrypt it: --state-identity or --state-passphrase-file)\n" +
	"or log in over 'ssh -X', or run Xvfb with a VNC server and log in through VNC\n" +
	"or, for a URL that logs in by itself (a magic link), add --headless"

// runLogin is surf login.
func runLogin(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	headless := fs.Bool("headless", false, "")
	asJSON := fs.Bool("json", false, "")
	sf := addStateFlags(fs)
	bf := addSandboxFlags(fs)
	bf.pol = addPolicyFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "login takes one URL")
	}
	if sf.Path == "" {
		return usagef(c, "login needs --state FILE: where to save the login")
	}
	raw := fs.Arg(0)
	u, err := login.ParseURL(raw)
	if err != nil {
		return usagef(c, "%s", err)
	}
	state, err := sf.file(cli.Getenv)
	if err != nil {
		return err
	}
	if !*headless && !login.HasDisplay(cli.Getenv) {
		return withHint(errors.New("there is no display for the login window ($DISPLAY and $WAYLAND_DISPLAY are empty)"), noDisplayHint)
	}
	pol, err := loginPolicy(cli, bf.pol, u)
	if err != nil {
		return err
	}
	bf.headful = !*headless
	sum, err := runLoginFlow(ctx, cli, bf, pol, state, *headless, raw)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(cli.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(cli.Stdout, "saved %s: %s\n", state.Path, session.DescribeState(sum))
	return nil
}

// runLoginFlow runs login.Run, prompting on stderr and reading Enter
// from stdin.
func runLoginFlow(ctx context.Context, cli *CLI, bf *browserFlags, pol *policy.Policy, state sandbox.StateFile, headless bool, raw string) (sandbox.StateSummary, error) {
	sbCfg, err := bf.sandboxConfig(cli, pol)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	sum, err := login.Run(ctx, login.Config{
		Sandbox: sbCfg,
		State:   state,
		Done:    login.EnterPressed(cli.Stdin, headless),
		Opened: func(title, url string) {
			if headless {
				fmt.Fprintf(cli.Stderr, "surf: the page is %q (%s); press Enter to save the state (or end stdin; Ctrl-C saves nothing)\n", title, url)
			} else {
				fmt.Fprintln(cli.Stderr, "surf: log in in the browser window, then press Enter here (or close the window); Ctrl-C saves nothing")
			}
		},
	}, raw)
	if errors.Is(err, login.ErrBrowserGone) {
		return sum, withHint(err, "press Enter here instead of quitting the browser")
	}
	return sum, stateError(err)
}

// loginPolicy is login's policy: without policy flags, the default one
// plus the URL's host; with them, theirs, which must allow the URL.
func loginPolicy(cli *CLI, pf *policyFlags, u *url.URL) (*policy.Policy, error) {
	if pf.file == "" && len(pf.allow) == 0 && len(pf.deny) == 0 {
		p, err := login.Policy(u)
		if err != nil {
			return nil, &exitError{code: 2, err: err}
		}
		return p, nil
	}
	p, err := pf.policy(cli.Getenv)
	if err != nil {
		return nil, err
	}
	if d := p.DecideURL(policy.Navigation, u.String(), ""); d.Verdict != policy.Allow {
		return nil, pf.deniedError(d)
	}
	return p, nil
}
