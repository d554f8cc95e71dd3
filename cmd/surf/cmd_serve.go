package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// serveUsage is the usage text of surf serve.
var serveUsage = helpText("serve")

func init() {
	c := &command{
		name:    "serve",
		summary: "serve surf's browser tools over MCP (stdio, or streamable HTTP with --http)",
		usage:   serveUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runServe(ctx, cli, c, args) }
	register(c)
}

// serveFlags are surf serve's flags.
type serveFlags struct {
	fs                                           *pflag.FlagSet
	httpAddr, publicHost, imageMode, approve     string
	stateDir, journalDir, metrics                string
	allowRemote, noUI, noElicit, withBoard       bool
	approvalTTL, idle, callTimeout, queueTimeout time.Duration
	maxTime                                      time.Duration
	maxSessions, maxActive                       int
	tf                                           *serveTokenFlags
	mf                                           *modelFlags
	bf                                           *browserFlags
	sf                                           *stateFlags
	bdf                                          *boardFlags
	// From the flags' values:
	img      mcpserver.ImageMode
	approver policy.Approver
	state    sandbox.StateFile
}

func addServeFlags(c *command) *serveFlags {
	fs := newFlags(c)
	f := &serveFlags{fs: fs}
	fs.StringVar(&f.httpAddr, "http", "", "")
	fs.BoolVar(&f.allowRemote, "allow-remote", false, "")
	f.tf = addServeTokenFlags(fs)
	fs.BoolVar(&f.noUI, "no-ui", false, "")
	fs.StringVar(&f.publicHost, "public-host", "", "")
	fs.StringVar(&f.imageMode, "image", "som", "")
	fs.StringVar(&f.approve, "approve", "", "")
	fs.DurationVar(&f.approvalTTL, "approval-ttl", 0, "")
	fs.BoolVar(&f.noElicit, "no-elicit", false, "")
	fs.IntVar(&f.maxSessions, "max-sessions", 0, "")
	fs.DurationVar(&f.idle, "idle", 0, "")
	fs.DurationVar(&f.callTimeout, "call-timeout", 0, "")
	fs.IntVar(&f.maxActive, "max-active", 0, "")
	fs.DurationVar(&f.queueTimeout, "queue-timeout", 0, "")
	fs.DurationVar(&f.maxTime, "max-time", 0, "")
	f.mf = addModelFlags(fs)
	f.bf = addBrowserFlags(fs)
	f.sf = addStateFlags(fs)
	fs.StringVar(&f.stateDir, "state-dir", "", "")
	fs.StringVar(&f.journalDir, "journal-dir", "", "")
	fs.BoolVar(&f.withBoard, "board", false, "")
	fs.StringVar(&f.metrics, "metrics", "", "")
	f.bdf = addBoardFlags(fs)
	return f
}

// parse parses args and checks the flags' values.
func (f *serveFlags) parse(c *command, cli *CLI, args []string) error {
	fs := f.fs
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "serve takes no arguments, got %q", fs.Arg(0))
	}
	if f.maxSessions < 0 || f.idle < 0 || f.callTimeout < 0 || f.maxTime < 0 || f.approvalTTL < 0 || f.maxActive < 0 || f.queueTimeout < 0 {
		return usagef(c, "limits cannot be negative")
	}
	var err error
	if f.img, err = mcpserver.ParseImageMode(f.imageMode); err != nil {
		return usagef(c, "--image: %v", err)
	}
	switch f.approve {
	case "":
	case "allow":
		f.approver = policy.AllowAll()
	case "deny":
		f.approver = policy.DenyAll()
	default:
		return usagef(c, "--approve must be allow or deny, not %q", f.approve)
	}
	if !f.withBoard && slices.ContainsFunc(boardFlagNames, fs.Changed) {
		return usagef(c, "--data, --nats, --creds, --tls-* and --nkey name the task board of --board")
	}
	if f.bf.recordHAR != "" {
		return usagef(c, "--record-har is not supported by serve: its sessions would write one recording each over the same file")
	}
	if f.state, err = f.sf.serveFile(f.stateDir, cli.Getenv); err != nil {
		return err
	}
	if f.httpAddr == "" && (f.allowRemote || f.publicHost != "" || f.tf.given(fs)) {
		return usagef(c, "--allow-remote, --token-file, --tokens, --no-token and --public-host apply to --http only")
	}
	if f.httpAddr == "" && f.noUI {
		return usagef(c, "--no-ui applies to --http only")
	}
	return nil
}

// httpTokens are the HTTP server's tokens and options with --http, and
// whether surf made the token (then serveHTTP writes it to a file).
func (f *serveFlags) httpTokens(c *command, cli *CLI) (mcpserver.Tokens, error) {
	if f.httpAddr == "" {
		return mcpserver.Tokens{}, nil
	}
	t, err := f.tf.read(c, f.fs, cli, f.httpAddr)
	if err != nil {
		return t, err
	}
	o := &t.Options
	o.AllowRemote, o.PublicHost = f.allowRemote, f.publicHost
	if len(o.Principals) > 0 && f.state.Path != "" {
		return t, usagef(c, "--state is one identity, and --tokens has several principals: give each its own with --state-dir (session_open's state argument)")
	}
	if err := mcpserver.CheckBind(f.httpAddr, *o); err != nil {
		return t, &exitError{code: 2, err: err}
	}
	return t, nil
}

// model is the websurfer tool's model. It is optional: without one the
// tool says so (modelErr), unless model flags were given.
func (f *serveFlags) model(ctx context.Context, cli *CLI) (model websurfer.Model, name string, modelErr, err error) {
	f.mf.redact = f.bf.redact
	m, name, err := f.mf.client(ctx, cli)
	if err == nil {
		return m, name, nil, nil
	}
	if modelFlagsGiven(f.fs.Changed) {
		return nil, "", nil, err
	}
	if cli.Getenv("OPENAI_API_KEY") != "" || cli.Getenv("OPENAI_BASE_URL") != "" {
		fmt.Fprintf(cli.Stderr, "surf: warning: the websurfer tool is off: %v\n", err)
	}
	return nil, "", err, nil
}

// serverConfig is the MCP server's configuration, but for its sandbox,
// live view, board and model.
func (f *serveFlags) serverConfig(sbCfg sandbox.Config, cli *CLI) mcpserver.Config {
	bf := f.bf
	return mcpserver.Config{
		Relaunch:           func(ctx context.Context) (*sandbox.Sandbox, error) { return sandbox.New(ctx, sbCfg) },
		Session:            sandbox.SessionConfig{UploadsDir: bf.uploads, DownloadsDir: bf.downloads, ReplayHAR: bf.replayHAR},
		Surfer:             websurfer.Config{TokenBudget: bf.budget, SearchURL: bf.searchURL, ApprovalTTL: f.approvalTTL},
		State:              f.state,
		StateDir:           f.stateDir,
		JournalDir:         f.journalDir,
		Image:              f.img,
		Approver:           f.approver,
		DisableElicitation: f.noElicit,
		MaxSessions:        f.maxSessions,
		IdleTimeout:        f.idle,
		CallTimeout:        f.callTimeout,
		MaxActive:          f.maxActive,
		QueueTimeout:       f.queueTimeout,
		RunTimeout:         f.maxTime,
		Version:            version(),
		Logger:             cli.Logger,
	}
}

// runServe is surf serve.
func runServe(ctx context.Context, cli *CLI, c *command, args []string) error {
	f := addServeFlags(c)
	if err := f.parse(c, cli, args); err != nil {
		return err
	}
	tokens, err := f.httpTokens(c, cli)
	if err != nil {
		return err
	}
	model, modelName, modelErr, err := f.model(ctx, cli)
	if err != nil {
		return err
	}
	pol, err := f.bf.pol.policy(cli.Getenv)
	if err != nil {
		return err
	}
	f.bf.loaded.Store(pol)
	sbCfg, err := f.bf.sandboxConfig(cli, pol)
	if err != nil {
		return err
	}
	scfg := f.serverConfig(sbCfg, cli)
	scfg.Model, scfg.ModelName, scfg.ModelError, scfg.TracerProvider = model, modelName, modelErr, cli.Tracer
	if scfg.Metrics, err = cli.serveMetrics(ctx, f.metrics); err != nil {
		return err
	}
	if f.withBoard {
		if scfg.Board, err = f.bdf.open(ctx, cli, nil); err != nil {
			return err
		}
		defer scfg.Board.Close()
	}
	if scfg.Sandbox, err = sandbox.New(ctx, sbCfg); err != nil {
		return err
	}
	defer scfg.Sandbox.Close()
	var boardPage bool
	if f.httpAddr != "" && !f.noUI {
		var stopUI func()
		if tokens.Options.UI, boardPage, stopUI, err = startServeUI(ctx, cli, &scfg, tokens.Options, scfg.Metrics); err != nil {
			return err
		}
		defer stopUI()
	}
	srv, err := mcpserver.New(ctx, scfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if f.httpAddr == "" {
		err = srv.ServeIO(ctx, cli.Stdin, cli.Stdout)
	} else {
		err = serveHTTP(ctx, cli, srv, f.httpAddr, tokens, scfg.Live != nil, boardPage)
	}
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil // interrupted, or the client went away: a normal end
	}
	return err
}

// serveHTTP serves srv at addr, writing the token surf made first.
func serveHTTP(ctx context.Context, cli *CLI, srv *mcpserver.Server, addr string, t mcpserver.Tokens, withUI, boardPage bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	o := t.Options
	if t.Made {
		path, werr := writeTokenFile(cli, t, ln.Addr())
		if werr != nil {
			ln.Close()
			return werr
		}
		defer os.Remove(path)
		fmt.Fprintf(cli.Stderr, "surf: the bearer token is in %s (mode 0600): clients send \"Authorization: Bearer TOKEN\"\n", path)
	}
	announceHTTP(cli, ln.Addr(), o, withUI, boardPage)
	return srv.Serve(ctx, ln, o)
}

// serveTokenFlags are serve's token flags.
type serveTokenFlags struct {
	token     *string // refused: see errTokenFlag
	tokenFile *string
	tokens    *string
	noToken   *bool
}

func addServeTokenFlags(fs *pflag.FlagSet) *serveTokenFlags {
	tf := &serveTokenFlags{
		token:     fs.String("token", "", ""),
		tokenFile: fs.String("token-file", "", ""),
		tokens:    fs.String("tokens", "", ""),
		noToken:   fs.Bool("no-token", false, ""),
	}
	fs.Lookup("token").Hidden = true
	return tf
}

// given reports whether any token flag is on the command line.
func (tf *serveTokenFlags) given(fs *pflag.FlagSet) bool {
	return fs.Changed("token") || fs.Changed("token-file") || fs.Changed("tokens") || fs.Changed("no-token")
}

// read reads the tokens of an HTTP server (mcpserver.ReadTokens):
// $SURF_MCP_TOKEN, an existing --token-file, the principals of --tokens,
// or none with --no-token. On loopback without any, surf makes one, and
// serveHTTP writes it to --token-file's file or the default one.
func (tf *serveTokenFlags) read(c *command, flags *pflag.FlagSet, cli *CLI, addr string) (mcpserver.Tokens, error) {
	if flags.Changed("token") {
		return mcpserver.Tokens{}, errTokenFlag(c, "--token", "set SURF_MCP_TOKEN, or put the token in a file only you can read and pass --token-file FILE")
	}
	t, err := mcpserver.ReadTokens(mcpserver.TokenSources{Env: cli.Getenv("SURF_MCP_TOKEN"), File: *tf.tokenFile,
		PrincipalsFile: *tf.tokens, NoToken: *tf.noToken, FileWhat: "--token-file", PrincipalsWhat: "--tokens"}, addr)
	switch {
	case !errors.Is(err, mcpserver.ErrTokenSources):
		return t, err
	case *tf.tokens != "":
		return t, usagef(c, "--tokens excludes another token (--token-file, SURF_MCP_TOKEN) and --no-token")
	default:
		return t, usagef(c, "--no-token excludes a token (--token-file, SURF_MCP_TOKEN)")
	}
}

// announceHTTP says on stderr where the server is, and for the live view
// (and the board's page) the address that logs a browser in.
func announceHTTP(cli *CLI, addr net.Addr, o mcpserver.HTTPOptions, ui, boardPage bool) {
	if o.NoToken {
		fmt.Fprintf(cli.Stderr, "surf: WARNING: --no-token: every user of this machine can drive this browser through http://%s%s\n", addr, mcpserver.HTTPPath)
	}
	fmt.Fprintf(cli.Stderr, "surf: serving MCP (streamable HTTP) at http://%s%s\n", addr, mcpserver.HTTPPath)
	if !ui {
		return
	}
	what, login := "live view", loginURL(addr, o)
	if boardPage {
		what = "board's page"
	}
	if len(o.Principals) > 0 {
		login = loginURL(addr, mcpserver.HTTPOptions{PublicHost: o.PublicHost, Token: "TOKEN"}) + " (each principal with its own token from --tokens)"
	}
	fmt.Fprintf(cli.Stderr, "surf: %s at %s\n", what, login)
	if boardPage {
		fmt.Fprintf(cli.Stderr, "surf: this server's live view at %s%s (from the board's page)\n", strings.TrimSuffix(loginURL(addr, mcpserver.HTTPOptions{PublicHost: o.PublicHost}), "/"), boardui.LiveViewPath)
	}
}

// writeTokenFile writes the token surf made to its file, by default
// serve-PORT.token in the runtime directory (0700, this user's only),
// with mode 0600 (mcpserver.WriteTokenFile), and returns the path.
func writeTokenFile(cli *CLI, t mcpserver.Tokens, addr net.Addr) (string, error) {
	path := t.File
	if path == "" {
		dir := daemon.RuntimeDir(cli.Getenv)
		if err := daemon.EnsureDir(dir); err != nil {
			return "", withHint(err, "set SURF_RUNTIME_DIR to a directory of your own with mode 0700, or pass --token-file")
		}
		path = mcpserver.DefaultTokenFile(dir, addr)
	}
	return path, mcpserver.WriteTokenFile(path, t.Options.Token)
}

// modelFlagsGiven reports whether any model flag was set on the command
// line: then a model that cannot be set up is an error, not a tool that
// says so.
func modelFlagsGiven(changed func(string) bool) bool {
	for _, f := range []string{"model", "base-url", "header", "image-detail", "record-model", "replay-model", "retries"} {
		if changed(f) {
			return true
		}
	}
	return false
}
