package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
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

// httpOptions are the HTTP server's options with --http, whether surf
// made the token and where to write it ("" for the default file).
func (f *serveFlags) httpOptions(c *command, cli *CLI) (o mcpserver.HTTPOptions, madeToken bool, writeToken string, err error) {
	if f.httpAddr == "" {
		return o, false, "", nil
	}
	o, madeToken, writeToken, err = f.tf.options(c, f.fs, cli, f.httpAddr)
	if err != nil {
		return o, false, "", err
	}
	o.AllowRemote, o.PublicHost = f.allowRemote, f.publicHost
	if len(o.Principals) > 0 && f.state.Path != "" {
		return o, false, "", usagef(c, "--state is one identity, and --tokens has several principals: give each its own with --state-dir (session_open's state argument)")
	}
	if err := mcpserver.CheckBind(f.httpAddr, o); err != nil {
		return o, false, "", &exitError{code: 2, err: err}
	}
	return o, madeToken, writeToken, nil
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
	httpOpts, madeToken, writeToken, err := f.httpOptions(c, cli)
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
		if httpOpts.UI, boardPage, stopUI, err = startServeUI(ctx, cli, &scfg, httpOpts, scfg.Metrics); err != nil {
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
		err = srv.ServeTransport(ctx, &mcp.IOTransport{Reader: readCloser(cli.Stdin), Writer: nopWriteCloser{cli.Stdout}, MaxLineLength: mcpserver.MaxRequestBytes})
	} else {
		err = serveHTTP(ctx, cli, srv, f.httpAddr, httpOpts, madeToken, writeToken, scfg.Live != nil, boardPage)
	}
	if ctx.Err() != nil || errors.Is(err, io.EOF) {
		return nil // interrupted, or the client went away: a normal end
	}
	return err
}

// serveHTTP serves srv at addr, writing the token surf made first.
func serveHTTP(ctx context.Context, cli *CLI, srv *mcpserver.Server, addr string, o mcpserver.HTTPOptions, madeToken bool, writeToken string, withUI, boardPage bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	if madeToken {
		path, werr := writeTokenFile(cli, writeToken, ln.Addr(), o.Token)
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

// options reads the tokens of an HTTP server: $SURF_MCP_TOKEN, an
// existing --token-file, the principals of --tokens, or none with
// --no-token. On loopback without any, it makes one (made): the caller
// writes it to writeTo (or the default file) once it listens.
func (tf *serveTokenFlags) options(c *command, flags *pflag.FlagSet, cli *CLI, addr string) (o mcpserver.HTTPOptions, made bool, writeTo string, err error) {
	if flags.Changed("token") {
		return o, false, "", errTokenFlag(c, "--token", "set SURF_MCP_TOKEN, or put the token in a file only you can read and pass --token-file FILE")
	}
	env := strings.TrimSpace(cli.Getenv("SURF_MCP_TOKEN"))
	if *tf.tokens != "" {
		if env != "" || *tf.tokenFile != "" || *tf.noToken {
			return o, false, "", usagef(c, "--tokens excludes another token (--token-file, SURF_MCP_TOKEN) and --no-token")
		}
		o.Principals, err = mcpserver.ReadPrincipals("--tokens", *tf.tokens)
		return o, false, "", err
	}
	if *tf.noToken {
		if env != "" || *tf.tokenFile != "" {
			return o, false, "", usagef(c, "--no-token excludes a token (--token-file, SURF_MCP_TOKEN)")
		}
		o.NoToken = true
		return o, false, "", nil
	}
	o.Token = env
	if o.Token == "" && *tf.tokenFile != "" {
		if _, serr := os.Lstat(*tf.tokenFile); serr == nil {
			o.Token, err = mcpserver.ReadTokenFile("--token-file", *tf.tokenFile)
			return o, false, "", err
		} else if !errors.Is(serr, fs.ErrNotExist) {
			return o, false, "", fmt.Errorf("--token-file: %w", serr)
		}
		// No file yet: surf makes the token and writes it there.
		o.Token = mcpserver.GenerateToken()
		return o, true, *tf.tokenFile, nil
	}
	if o.Token == "" && mcpserver.IsLoopbackBind(addr) {
		// Loopback is open to every local user: a token by default.
		// (Other addresses need one given: CheckBind says so.)
		o.Token = mcpserver.GenerateToken()
		return o, true, "", nil
	}
	return o, false, "", nil
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
		fmt.Fprintf(cli.Stderr, "surf: this server's live view at %s%s (from the board's page)\n", strings.TrimSuffix(loginURL(addr, mcpserver.HTTPOptions{PublicHost: o.PublicHost}), "/"), serveLivePath)
	}
}

// writeTokenFile writes the HTTP server's bearer token to path, or by
// default to serve-PORT.token in the runtime directory (0700, this user's
// only), with mode 0600 (mcpserver.WriteTokenFile), and returns the path.
func writeTokenFile(cli *CLI, path string, addr net.Addr, token string) (string, error) {
	if path == "" {
		dir := daemon.RuntimeDir(cli.Getenv)
		if err := daemon.EnsureDir(dir); err != nil {
			return "", withHint(err, "set SURF_RUNTIME_DIR to a directory of your own with mode 0700, or pass --token-file")
		}
		port := 0
		if ta, ok := addr.(*net.TCPAddr); ok {
			port = ta.Port
		}
		path = filepath.Join(dir, fmt.Sprintf("serve-%d.token", port))
	}
	if err := mcpserver.WriteTokenFile(path, token); err != nil {
		return "", err
	}
	return path, nil
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

// readCloser is stdin for the MCP transport: closing it (when the server
// stops) unblocks a pending read when it is a file.
func readCloser(r io.Reader) io.ReadCloser {
	if rc, ok := r.(io.ReadCloser); ok {
		return rc
	}
	return io.NopCloser(r)
}

// nopWriteCloser keeps stdout open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
