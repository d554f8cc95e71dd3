package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

func init() {
	c := &command{
		name:    "login",
		summary: "log in by hand in a browser window and save the session to a state file",
		usage: `Usage: surf login URL --state FILE [--headless] [flags]

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
  surf login "http://127.0.0.1:8080/magic?token=..." --state dev.json --headless`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
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
			return withHint(errors.New("there is no display for the login window ($DISPLAY and $WAYLAND_DISPLAY are empty)"),
				"run 'surf login' on a machine with a display and copy the state file here (encrypt it: --state-identity or --state-passphrase-file)\n"+
					"or log in over 'ssh -X', or run Xvfb with a VNC server and log in through VNC\n"+
					"or, for a URL that logs in by itself (a magic link), add --headless")
		}
		pol, err := loginPolicy(cli, bf.pol, u)
		if err != nil {
			return err
		}
		bf.headful = !*headless
		l := &login{cli: cli, bf: bf, pol: pol, state: state, headless: *headless}
		sum, err := l.run(ctx, raw)
		if err != nil {
			return err
		}
		sum.Path = state.Path
		if *asJSON {
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(sum)
		}
		fmt.Fprintf(cli.Stdout, "saved %s: %s\n", state.Path, describeSummary(sum))
		return nil
	}
	register(c)
}

// loginPolicy is login's policy: without policy flags, the default one
// plus the URL's host; with them, theirs, which must allow the URL.
func loginPolicy(cli *CLI, pf *policyFlags, u *url.URL) (*policy.Policy, error) {
	if pf.file == "" && len(pf.allow) == 0 && len(pf.deny) == 0 {
		// The host, not host:port: cookies belong to hosts, whatever
		// the port.
		host, err := policy.ParseHostRule(u.Hostname())
		if err != nil {
			return nil, &exitError{code: 2, err: fmt.Errorf("the login URL's host: %w", err)}
		}
		any, err := policy.ParseHostRule("*")
		if err != nil {
			return nil, err
		}
		p, err := policy.New(policy.Config{Allow: []policy.HostRule{any, host}})
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

// login is one "surf login": a browser for a person to log in by hand.
type login struct {
	cli      *CLI
	bf       *browserFlags
	pol      *policy.Policy
	state    sandbox.StateFile
	headless bool
}

// run opens the browser on raw, waits for the person, and saves the state
// into l.state.Path. The session works on a copy of the file beside it,
// renamed over the file once saved: Ctrl-C, or a browser that goes away,
// leaves the file as it was.
func (l *login) run(ctx context.Context, raw string) (sandbox.StateSummary, error) {
	work, err := l.workCopy()
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	defer os.Remove(work.Path)
	sb, sess, err := l.bf.stateSession(ctx, l.cli, l.pol, work)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	defer sb.Close()
	defer sess.Close()
	gone := make(chan struct{}) // the browser went away
	if br := sb.Browser(); br != nil {
		br.OnDisconnected(func(playwright.Browser) { close(gone) })
	}
	closed := make(chan struct{}, 1) // the last page closed
	sess.Context().OnPage(func(p playwright.Page) {
		p.OnClose(func(playwright.Page) {
			if len(sess.Context().Pages()) == 0 {
				select {
				case closed <- struct{}{}:
				default:
				}
			}
		})
	})
	page, err := sess.NewPage(ctx)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	if _, err := page.Goto(raw); err != nil {
		return sandbox.StateSummary{}, fmt.Errorf("opening %s: %w", l.pol.Redact(raw), err)
	}
	if l.headless {
		title, _ := page.Title()
		fmt.Fprintf(l.cli.Stderr, "surf: the page is %q (%s); press Enter to save the state (or end stdin; Ctrl-C saves nothing)\n", title, l.pol.Redact(page.URL()))
	} else {
		fmt.Fprintln(l.cli.Stderr, "surf: log in in the browser window, then press Enter here (or close the window); Ctrl-C saves nothing")
	}
	select {
	case <-l.enter():
	case <-closed:
	case <-gone:
		return sandbox.StateSummary{}, withHint(errors.New("the browser went away before the state was saved; nothing was saved"), "press Enter here instead of quitting the browser")
	case <-ctx.Done():
		return sandbox.StateSummary{}, ctx.Err()
	}
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	sum, err := sess.SaveState(saveCtx)
	if err != nil {
		return sandbox.StateSummary{}, stateError(fmt.Errorf("saving the state: %w", err))
	}
	if err := sess.Close(); err != nil {
		return sandbox.StateSummary{}, stateError(err)
	}
	if err := os.Rename(work.Path, l.state.Path); err != nil {
		return sandbox.StateSummary{}, fmt.Errorf("saving the state: %w", err)
	}
	return sum, nil
}

// workCopy is the state file login's session works on: a copy of the
// file (as it is, encrypted or not) beside it, or no file when there is
// none yet.
func (l *login) workCopy() (sandbox.StateFile, error) {
	dir, base := filepath.Split(l.state.Path)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".login-*")
	if err != nil {
		return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
	}
	defer f.Close()
	work := l.state
	work.Path = f.Name()
	old, err := os.Open(l.state.Path)
	if errors.Is(err, os.ErrNotExist) {
		os.Remove(f.Name()) // a missing file: the session starts empty
		return work, nil
	}
	if err == nil {
		defer old.Close()
		_, err = io.Copy(f, old)
	}
	if err != nil {
		os.Remove(f.Name())
		return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
	}
	return work, nil
}

// enter is closed when the person presses Enter; headless, also at the
// end of stdin (a script's). With a window, the end of stdin means no one
// will press Enter: the window closing ends the wait.
func (l *login) enter() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, err := bufio.NewReader(l.cli.Stdin).ReadString('\n')
		if err == nil || l.headless {
			close(done)
		}
	}()
	return done
}
