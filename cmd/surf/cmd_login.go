package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/internal/login"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// loginUsage is the usage text of surf login.
const loginUsage = `Usage: surf login URL --state FILE [--headless] [flags]

Opens URL in a browser window for you to log in by hand, then saves the
session's cookies and local storage to FILE (Playwright's storage-state
JSON, mode 0600), for later commands' --state FILE: they start logged in.
The model never takes part: the password goes from you to the site.

It prints "log in in the browser window, then press Enter here (or close
the window)" and waits for Enter, for the last window to close, or for
Ctrl-C, which saves nothing. An existing FILE is loaded first (with its
key), so logging into a second site keeps the first one's login.

The policy: with no --policy, --allow or --deny, the default (any public
host) plus URL's own host (any port), so a login page on a private address works and
so does a single sign-on provider on another public host. With policy
flags, exactly that policy, which must allow URL. Either way only the
hosts the policy allows are saved.

Without a display ($DISPLAY and $WAYLAND_DISPLAY empty) there is no window:
run 'surf login' on a machine with one and copy FILE (encrypt it), or use
'ssh -X', or Xvfb with a VNC server. --headless runs without a window for
scripted logins, such as a magic link that logs in by itself: the state is
saved at Enter or at the end of stdin.

Flags:
  --headless          no window: for URLs that log in by themselves
  --json              print the counts saved as JSON
` + stateFlagsHelp + `
  --policy FILE       the policy (YAML); --allow/--deny then narrow it
  --allow LIST        hosts that may be visited, comma-separated ("*" = any public host)
  --deny LIST         hosts that may not
  --no-os-sandbox     do not run Chromium in bubblewrap (weakens isolation)
  --no-chromium-sandbox  turn Chromium's own sandbox off (weakens isolation)

Exit codes: 0 saved; 1 not saved (an error, or the browser went away);
2 bad usage; 130 Ctrl-C.

Examples:
  surf login https://mail.example.com/ --state mail.json --state-identity key.txt
  surf run "list today's unread mail" --state mail.json --state-identity key.txt --allow mail.example.com
  surf login "http://127.0.0.1:8080/magic?token=..." --state dev.json --headless`

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
	if sf.path == "" {
		return usagef(c, "login needs --state FILE: where to save the login")
	}
	raw := fs.Arg(0)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef(c, "%q is not an http(s) URL", raw)
	}
	state, err := sf.file(cli.Getenv)
	if err != nil {
		return err
	}
	if !*headless && cli.Getenv("DISPLAY") == "" && cli.Getenv("WAYLAND_DISPLAY") == "" {
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
		Done:    enterPressed(cli.Stdin, headless),
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

// enterPressed is closed when the person presses Enter; headless, also at
// the end of stdin (a script's). With a window, the end of stdin means no
// one will press Enter: the window closing ends the wait.
func enterPressed(stdin io.Reader, headless bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, err := bufio.NewReader(stdin).ReadString('\n')
		if err == nil || headless {
			close(done)
		}
	}()
	return done
}
