package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

func init() {
	c := &command{
		name:    "state",
		summary: "show what a saved-login state file holds (never values), or save a session's now",
		usage: `Usage: surf state show FILE [--json] [key flags]
       surf state save [--session NAME]

Shows what the storage-state FILE (as --state and 'surf login' write it)
holds: each cookie's domain, path, name, expiry and flags, and each
origin's local-storage keys. Values are never shown: they are the login.

An encrypted FILE needs its key (--state-passphrase-file,
$SURF_STATE_PASSPHRASE or --state-identity). No browser is started: the
file is only read.

'surf state save' saves a background session's state file now (the one
'surf open --state FILE' gave it), without closing it; 'surf close' saves
it too.

Flags:
  --session NAME      (save) the session (default "default", or $SURF_SESSION)
  --json              print it as JSON
  --state-passphrase-file FILE
                      the age passphrase is in this file
  --state-identity FILE
                      the age identity file

Exit codes: 0 shown; 1 the file cannot be read (no key, wrong key, not a
state file); 2 bad usage.

Examples:
  surf state show mail.json --state-identity key.txt
  surf open https://mail.example.com/ --state mail.json && surf state save`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		asJSON := fs.Bool("json", false, "")
		sf := addStateFlags(fs)
		fs.Lookup("state").Hidden = true
		session := addSessionFlag(fs, cli)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() == 1 && fs.Arg(0) == "save" {
			if fs.NFlag() > 0 && !(fs.NFlag() == 1 && fs.Changed("session")) {
				return usagef(c, "'surf state save' takes only --session: the session keeps the file and key it was opened with")
			}
			resp, err := callSession(ctx, cli, *session, daemon.Request{Tool: reqSaveState})
			if err != nil {
				return err
			}
			printText(cli, resp.Text)
			return nil
		}
		if fs.NArg() != 2 || fs.Arg(0) != "show" {
			return usagef(c, "the state commands are 'surf state show FILE' and 'surf state save'")
		}
		if fs.Changed("session") {
			return usagef(c, "--session goes with 'surf state save'")
		}
		if sf.path != "" {
			return usagef(c, "name the file as 'surf state show FILE', not with --state")
		}
		file, err := sf.key(fs.Arg(1), cli.Getenv)
		if err != nil {
			return err
		}
		shown, err := readStateForShow(file)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(shown)
		}
		shown.print(cli.Stdout)
		return nil
	}
	register(c)
}

// addSandboxFlags registers the flags that weaken the sandbox, for
// commands that start a browser without the other browser flags.
func addSandboxFlags(fs *pflag.FlagSet) *browserFlags {
	bf := &browserFlags{}
	fs.BoolVar(&bf.noOSBox, "no-os-sandbox", false, "")
	fs.BoolVar(&bf.noCrBox, "no-chromium-sandbox", false, "")
	return bf
}

// shownState is what "surf state show" prints: no value anywhere.
type shownState struct {
	Path      string        `json:"path"`
	Encrypted bool          `json:"encrypted"`
	Cookies   []shownCookie `json:"cookies"`
	Origins   []shownOrigin `json:"origins"`
}

type shownCookie struct {
	Domain   string `json:"domain"`
	Path     string `json:"path"`
	Name     string `json:"name"`
	Expires  string `json:"expires,omitempty"` // RFC 3339, UTC; empty for a session cookie
	HTTPOnly bool   `json:"http_only,omitempty"`
	Secure   bool   `json:"secure,omitempty"`
	SameSite string `json:"same_site,omitempty"`
}

type shownOrigin struct {
	Origin string   `json:"origin"`
	Keys   []string `json:"local_storage_keys"`
}

// readStateForShow reads a state file, decrypting it with its key.
func readStateForShow(sf sandbox.StateFile) (*shownState, error) {
	st, enc, err := sandbox.ReadState(sf)
	if err != nil {
		return nil, stateError(err)
	}
	return showState(sf.Path, enc, st), nil
}

// stateSession starts a sandbox with policy pol and the sandbox flags of
// bf, and a session in it that loaded sf.
func (bf *browserFlags) stateSession(ctx context.Context, cli *CLI, pol *policy.Policy, sf sandbox.StateFile) (*sandbox.Sandbox, *sandbox.Session, error) {
	cfg, err := bf.sandboxConfig(cli, pol)
	if err != nil {
		return nil, nil, err
	}
	sb, err := sandbox.New(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{State: sf})
	if err != nil {
		sb.Close()
		return nil, nil, stateError(err)
	}
	return sb, sess, nil
}

// showState keeps a storage state's names, domains and expiry, sorted,
// and drops its values.
func showState(path string, encrypted bool, st *playwright.StorageState) *shownState {
	out := &shownState{Path: path, Encrypted: encrypted, Cookies: []shownCookie{}, Origins: []shownOrigin{}}
	for _, c := range st.Cookies {
		sc := shownCookie{Domain: c.Domain, Path: c.Path, Name: c.Name, HTTPOnly: c.HttpOnly, Secure: c.Secure}
		if c.Expires > 0 {
			sc.Expires = time.Unix(int64(c.Expires), 0).UTC().Format(time.RFC3339)
		}
		if c.SameSite != nil {
			sc.SameSite = string(*c.SameSite)
		}
		out.Cookies = append(out.Cookies, sc)
	}
	sort.Slice(out.Cookies, func(i, j int) bool {
		a, b := out.Cookies[i], out.Cookies[j]
		if a.Domain != b.Domain {
			return a.Domain < b.Domain
		}
		if a.Path != b.Path {
			return a.Path < b.Path
		}
		return a.Name < b.Name
	})
	for _, o := range st.Origins {
		so := shownOrigin{Origin: o.Origin, Keys: []string{}}
		for _, kv := range o.LocalStorage {
			so.Keys = append(so.Keys, kv.Name)
		}
		sort.Strings(so.Keys)
		out.Origins = append(out.Origins, so)
	}
	sort.Slice(out.Origins, func(i, j int) bool { return out.Origins[i].Origin < out.Origins[j].Origin })
	return out
}

func (s *shownState) print(w io.Writer) {
	enc := ""
	if s.Encrypted {
		enc = ", encrypted"
	}
	fmt.Fprintf(w, "%s: %s, %s%s\n", termsafe.String(s.Path), plural(len(s.Cookies), "cookie"), plural(len(s.Origins), "origin"), enc)
	if len(s.Cookies) > 0 {
		fmt.Fprintln(w, "cookies:")
	}
	for _, c := range s.Cookies {
		exp := "session"
		if c.Expires != "" {
			exp = "expires " + c.Expires
		}
		var flags []string
		if c.HTTPOnly {
			flags = append(flags, "httpOnly")
		}
		if c.Secure {
			flags = append(flags, "secure")
		}
		if c.SameSite != "" {
			flags = append(flags, "sameSite="+c.SameSite)
		}
		q := termsafe.String
		fmt.Fprintln(w, "  "+strings.TrimSpace(fmt.Sprintf("%s %s %s  %s  %s", q(c.Domain), q(c.Path), q(c.Name), q(exp), q(strings.Join(flags, " ")))))
	}
	if len(s.Origins) > 0 {
		fmt.Fprintln(w, "origins:")
	}
	for _, o := range s.Origins {
		keys := make([]string, len(o.Keys))
		for i, k := range o.Keys {
			keys[i] = termsafe.String(k)
		}
		fmt.Fprintf(w, "  %s  local storage: %s\n", termsafe.String(o.Origin), strings.Join(keys, ", "))
	}
}
