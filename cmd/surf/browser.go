package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"
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
}

func addBrowserFlags(fs *pflag.FlagSet) *browserFlags {
	bf := &browserFlags{pol: addPolicyFlags(fs)}
	fs.StringVar(&bf.connect, "connect", "", "use a remote Playwright browser server (ws://...)")
	fs.StringVar(&bf.cdp, "cdp", "", "use a remote browser's DevTools endpoint (http://host:9222)")
	fs.BoolVar(&bf.headful, "headful", false, "show the browser window (needs a display)")
	fs.StringVar(&bf.uploads, "uploads", "", "the directory upload_file may take files from")
	fs.StringVar(&bf.downloads, "downloads", "", "keep downloads in this directory")
	fs.IntVar(&bf.budget, "budget", 0, "the observation's token budget (default 2500)")
	fs.BoolVar(&bf.noOSBox, "no-os-sandbox", false, "do not run Chromium inside bubblewrap (weakens isolation)")
	return bf
}

// browserFlagsHelp is the usage text of the shared flags.
const browserFlagsHelp = `  --policy FILE       the policy (YAML); --allow/--deny then narrow it
  --allow LIST        hosts that may be visited, comma-separated ("*" = any public host)
  --deny LIST         hosts that may not
  --connect URL       a remote Playwright browser server (ws://...)
  --cdp URL           a remote browser's DevTools endpoint
  --uploads DIR       the only directory upload_file may read
  --downloads DIR     keep downloads here (default: a private temp dir)
  --budget N          the observation's token budget (default 2500)
  --no-os-sandbox     do not run Chromium in bubblewrap (weakens isolation)
  --headful           show the browser window`

// browser is an open sandbox, session and surfer.
type browser struct {
	sb   *sandbox.Sandbox
	sess *sandbox.Session
	surf *websurfer.Surfer
	pol  *policy.Policy
	bf   *browserFlags
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
	if o.base != nil {
		if bf.pol.file == "" && len(bf.pol.allow) == 0 && len(bf.pol.deny) == 0 {
			pol = o.base
		} else {
			pol = o.base.Narrow(pol)
		}
	}
	if bf.uploads != "" {
		fi, err := os.Stat(bf.uploads)
		if err != nil || !fi.IsDir() {
			return nil, withHint(fmt.Errorf("--uploads %s is not a directory", bf.uploads), "create it and put the files the agent may upload in it")
		}
	}
	sb, err := sandbox.New(ctx, sandbox.Config{
		Env:              sandbox.EnvFrom(cli.Getenv),
		Connect:          bf.connect,
		CDP:              bf.cdp,
		Headful:          bf.headful,
		Policy:           pol,
		DisableOSSandbox: bf.noOSBox,
		Logger:           cli.Logger,
	})
	if err != nil {
		return nil, err
	}
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{UploadsDir: bf.uploads, DownloadsDir: bf.downloads})
	if err != nil {
		sb.Close()
		return nil, err
	}
	cfg := o.surf
	cfg.Session = sess
	cfg.Policy = pol
	cfg.TokenBudget = bf.budget
	cfg.Model = o.model
	cfg.Logger = cli.Logger
	surf, err := websurfer.New(ctx, cfg)
	if err != nil {
		sess.Close()
		sb.Close()
		return nil, err
	}
	return &browser{sb: sb, sess: sess, surf: surf, pol: pol, bf: bf}, nil
}

// Close closes everything the browser opened.
func (b *browser) Close() {
	b.surf.Close()
	b.sess.Close()
	b.sb.Close()
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

// saveImage writes an observation's image: PNG when the path ends in .png,
// else the JPEG as sent to the model.
func saveImage(path string, obs *websurfer.Observation) error {
	data := obs.Image
	if strings.EqualFold(filepath.Ext(path), ".png") {
		img, err := jpeg.Decode(bytes.NewReader(obs.Image))
		if err != nil {
			return fmt.Errorf("converting the screenshot: %w", err)
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			return err
		}
		data = buf.Bytes()
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(path, data, 0o644)
}
