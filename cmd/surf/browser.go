package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// browserFlags are the flags every command that drives a browser takes:
// the policy, where the browser is, and the session's directories.
type browserFlags struct {
	pol       *policyFlags
	connect   string
	cdp       string
	headful   bool
	uploads   string
	downloads string
	budget    int
	noOSBox   bool
	noCrBox   bool
	recordHAR string
	replayHAR string
	searchURL string

	// state, when the command takes --state (addStateFlags), is the saved
	// identity; open resolves it into stateFile.
	state     *stateFlags
	stateFile sandbox.StateFile

	loaded atomic.Pointer[policy.Policy] // the policy open loaded, for redact
}

// redact replaces the secrets of the policy open loaded (nothing before
// it is loaded): for what is written outside the browser, such as model
// cassettes.
func (bf *browserFlags) redact(s string) string { return bf.loaded.Load().Redact(s) }

func addBrowserFlags(fs *pflag.FlagSet) *browserFlags {
	bf := &browserFlags{pol: addPolicyFlags(fs)}
	fs.StringVar(&bf.connect, "connect", "", "use a remote Playwright browser server (ws://...)")
	fs.StringVar(&bf.cdp, "cdp", "", "use a remote browser's DevTools endpoint (http://host:9222)")
	fs.BoolVar(&bf.headful, "headful", false, "show the browser window (needs a display)")
	fs.StringVar(&bf.uploads, "uploads", "", "the directory upload_file may take files from")
	fs.StringVar(&bf.downloads, "downloads", "", "keep downloads in this directory")
	fs.IntVar(&bf.budget, "budget", 0, "the observation's token budget (default 2500)")
	fs.BoolVar(&bf.noOSBox, "no-os-sandbox", false, "do not run Chromium inside bubblewrap (weakens isolation)")
	fs.BoolVar(&bf.noCrBox, "no-chromium-sandbox", false, "turn Chromium's own sandbox off (weakens isolation)")
	fs.StringVar(&bf.recordHAR, "record-har", "", "record what the session loads into this HAR file")
	fs.StringVar(&bf.replayHAR, "replay-har", "", "answer every request from this recording, offline")
	fs.StringVar(&bf.searchURL, "search-url", "", "the web_search engine, with %s for the query")
	return bf
}

// browser is an open sandbox, session and surfer, with the policy and
// flags they were opened with.
type browser struct {
	*websurfer.Browser
	pol *policy.Policy
	bf  *browserFlags
}

// openOptions adjusts openBrowser for commands with their own needs.
type openOptions struct {
	// base replaces the default base policy (demo and bench allow only
	// their own origin); user flags still narrow it.
	base  *policy.Policy
	model websurfer.Model
	surf  websurfer.Config
}

// open starts the sandbox, a session and a surfer with the policy the
// flags give.
func (bf *browserFlags) open(ctx context.Context, cli *CLI, o openOptions) (*browser, error) {
	pol, err := bf.pol.policy(cli.Getenv)
	if err != nil {
		return nil, err
	}
	bf.loaded.Store(pol)
	if bf.stateFile, err = bf.state.file(cli.Getenv); err != nil {
		return nil, err
	}
	if o.base != nil {
		if bf.pol.file == "" && len(bf.pol.allow) == 0 && len(bf.pol.deny) == 0 {
			pol = o.base
		} else {
			pol = o.base.Narrow(pol)
		}
	}
	sbCfg, err := bf.sandboxConfig(cli, pol)
	if err != nil {
		return nil, err
	}
	cfg := o.surf
	cfg.Policy = pol
	cfg.TokenBudget = bf.budget
	if bf.searchURL != "" {
		cfg.SearchURL = bf.searchURL
	}
	cfg.Model = o.model
	cfg.Logger = cli.Logger
	wb, err := websurfer.Launch(ctx, websurfer.LaunchConfig{Sandbox: sbCfg, Session: bf.sessionConfig(), Surfer: cfg})
	if err != nil {
		return nil, stateError(err)
	}
	b := &browser{Browser: wb, pol: pol, bf: bf}
	if bf.stateFile.Path != "" {
		b.noteDropped(cli)
	}
	return b, nil
}

// sandboxConfig checks the flags that name local paths and builds the
// sandbox's configuration for policy pol.
func (bf *browserFlags) sandboxConfig(cli *CLI, pol *policy.Policy) (sandbox.Config, error) {
	if bf.uploads != "" {
		fi, err := os.Stat(bf.uploads)
		if err != nil || !fi.IsDir() {
			return sandbox.Config{}, withHint(fmt.Errorf("--uploads %s is not a directory", bf.uploads), "create it and put the files the agent may upload in it")
		}
	}
	if bf.searchURL != "" {
		if err := checkSearchURL(bf.searchURL); err != nil {
			return sandbox.Config{}, err
		}
	}
	return sandbox.Config{
		Env:                    sandbox.EnvFrom(cli.Getenv),
		Connect:                bf.connect,
		CDP:                    bf.cdp,
		Headful:                bf.headful,
		Policy:                 pol,
		DisableOSSandbox:       bf.noOSBox,
		DisableChromiumSandbox: bf.noCrBox,
		Logger:                 cli.Logger,
	}, nil
}

// sessionConfig is the session's configuration from the flags.
func (bf *browserFlags) sessionConfig() sandbox.SessionConfig {
	return sandbox.SessionConfig{UploadsDir: bf.uploads, DownloadsDir: bf.downloads,
		RecordHAR: bf.recordHAR, ReplayHAR: bf.replayHAR, State: bf.stateFile}
}

// checkSearchURL refuses a --search-url that is not an http(s) URL with
// one %s.
func checkSearchURL(s string) error {
	if websurfer.CheckSearchURL(s) != nil {
		return withHint(fmt.Errorf("--search-url %q is not an http(s) URL with one %%s", s), "for example --search-url 'https://duckduckgo.com/html/?q=%s'")
	}
	return nil
}

// Close closes everything the browser opened. Its error is the session's:
// a recording or a state file that could not be written.
func (b *browser) Close() error { return stateError(b.Browser.Close()) }

// closeInto closes the browser and, when *err is nil, sets it to the
// close's error: for "defer b.closeInto(&err)" in commands whose state
// file is saved at close.
func (b *browser) closeInto(err *error) {
	if cerr := b.Close(); cerr != nil && *err == nil {
		*err = cerr
	}
}

// noteDropped tells the user, on stderr, when the policy kept part of the
// state file out of the session: a cookie or origin for a host it denies.
func (b *browser) noteDropped(cli *CLI) {
	s := b.Session().StateLoaded()
	if s.DroppedCookies > 0 || s.DroppedOrigins > 0 {
		fmt.Fprintf(cli.Stderr, "surf: note: %s: %s\n", b.bf.stateFile.Path, session.DescribeState(s))
	}
}

// checkURL judges a URL named on the command line like any other: the
// command line does not widen the policy. A denied URL is an error with a
// hint naming the flag that would allow it.
func (b *browser) checkURL(raw string) error {
	d := b.pol.DecideURL(policy.Navigation, raw, "")
	if d.Verdict == policy.Allow {
		return nil
	}
	return b.bf.pol.deniedError(d)
}

// toolError turns an action's tool error into a CLI error, keeping its
// message.
func toolError(err error) error {
	if err == nil {
		return nil
	}
	return errors.New(strings.TrimPrefix(err.Error(), "tool error: "))
}
