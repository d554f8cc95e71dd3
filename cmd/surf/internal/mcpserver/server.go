// Package mcpserver is surf as an MCP server.
//
// It offers surf's action space (visit_url, click, input_text, ...) and a
// websurfer tool that runs the whole agent loop, over the official MCP Go
// SDK on stdio or streamable HTTP. Every MCP session gets its own isolated
// browser session (a sandbox.Session and a websurfer.Surfer) in one shared
// browser, opened on the session's first tool call and closed when the
// client goes away or after an idle timeout; it may open more, named ones
// (session_open, and a session argument on every browser tool: named.go).
// Browser contexts are capped (MaxSessions) over all clients; when a new
// one would pass the cap, the server releases the sessions of clients that
// went away, then closes the least recently used idle context of any
// client (saving its state file), and refuses only when every context is
// busy; the caller's result says what was closed (release.go). Calls go through the same registry (validation,
// offered set, panic recovery) and policy gate as the agent loop; actions
// the policy marks Ask are put to the client's user through MCP elicitation
// when the client supports it. With a task board (Config.Board), it also
// offers board tools that put batches of web tasks with dependencies on
// the board, wait for them with progress notifications and read their
// results (board.go). The HTTP transport binds to loopback unless told
// otherwise, and checks Host, Origin and a bearer token.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/telemetry"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
	"go.opentelemetry.io/otel/trace"
)

// Defaults of Config's zero values.
const (
	DefaultMaxSessions = 8
	DefaultIdleTimeout = 10 * time.Minute
	DefaultCallTimeout = 2 * time.Minute
	DefaultRunTimeout  = websurfer.DefaultMaxTime
	// DefaultRunSteps bounds a websurfer tool run whose call gives no
	// max_steps.
	DefaultRunSteps = websurfer.DefaultMaxSteps
)

// ImageMode chooses the image an action's result carries.
type ImageMode int

const (
	// ImageSOM is the set-of-mark screenshot: the element ids of the text
	// drawn on the page (the default).
	ImageSOM ImageMode = iota
	// ImagePlain is a screenshot without marks.
	ImagePlain
	// ImageNone sends no image: text only.
	ImageNone
)

// ParseImageMode reads "som", "plain" or "none".
func ParseImageMode(s string) (ImageMode, error) {
	switch s {
	case "som", "":
		return ImageSOM, nil
	case "plain":
		return ImagePlain, nil
	case "none":
		return ImageNone, nil
	}
	return 0, fmt.Errorf("image mode must be som, plain or none, not %q", s)
}

// kind is the surfer's image kind for the mode.
func (m ImageMode) kind() websurfer.ImageKind {
	switch m {
	case ImagePlain:
		return websurfer.ImagePlain
	case ImageNone:
		return websurfer.ImageNone
	}
	return websurfer.ImageMarks
}

func (m ImageMode) String() string {
	switch m {
	case ImageSOM:
		return "som"
	case ImagePlain:
		return "plain"
	case ImageNone:
		return "none"
	}
	return fmt.Sprintf("ImageMode(%d)", int(m))
}

// Config configures a Server. Sandbox is required; every other zero value
// is a documented default.
type Config struct {
	// Sandbox is the browser every session opens its context in. The
	// server does not close it.
	Sandbox *sandbox.Sandbox
	// Relaunch, if set, replaces the sandbox once its browser has gone
	// away (crashed, killed, disconnected): sessions then reopen their
	// contexts in the new one, and say so. The sandboxes it returns belong
	// to the server, which closes them when they are replaced and on
	// Close. Nil means a lost browser stays lost, and every call gets an
	// error result.
	Relaunch func(ctx context.Context) (*sandbox.Sandbox, error)
	// Session is the template of each session's browser context
	// (viewport, uploads, downloads, replay). Its Policy is replaced by
	// Policy below, and a DownloadsDir gets one subdirectory per session
	// so sessions do not see each other's files.
	Session sandbox.SessionConfig
	// Surfer is the template of each session's surfer (token budget,
	// search engine, model for summarize_page and answer_question). Its
	// Session, Policy, Approver and Logger are set by the server.
	Surfer websurfer.Config
	// Policy narrows the sandbox's policy for every session; nil means
	// the sandbox's policy as it is.
	Policy *policy.Policy

	// State, when its Path is set, is the saved identity of each
	// connection's default session: loaded when it opens, saved when it
	// closes (and when evicted). Its key (Passphrase, IdentityFile) also
	// opens the files of StateDir.
	State sandbox.StateFile
	// JournalDir, when set, keeps a journal of every websurfer tool run,
	// one directory per client and session:
	// JournalDir/client-ID/SESSION/run-N.jsonl (images beside it). Empty
	// means runs are not journaled.
	JournalDir string
	// StateDir, when set, holds the state files of named sessions opened
	// with a state name: NAME.json, encrypted with State's key when it has
	// one; for a client with a principal (HTTPOptions.Principals),
	// PRINCIPAL/NAME.json, so that principals do not open each other's.
	// Empty means named sessions cannot keep state.
	StateDir string

	// Model runs the websurfer tool (and answers summarize_page and
	// answer_question). Nil makes the websurfer tool return an error
	// result saying so (ModelError, if set, says why there is none), and
	// leaves summarize_page and answer_question out of the tool list.
	Model websurfer.Model
	// ModelName is sent with each model request.
	ModelName string
	// ModelError explains a missing Model to the websurfer tool's caller,
	// e.g. the client configuration error.
	ModelError error

	// Image is the image action results carry; the zero value is the
	// set-of-mark screenshot.
	Image ImageMode
	// Approver answers actions the policy marks Ask for clients that do
	// not support elicitation (and when an elicitation is not possible);
	// nil denies them, as the policy's default does. Clients that support
	// elicitation are asked instead, unless DisableElicitation is set.
	Approver policy.Approver
	// DisableElicitation never asks the client: Approver decides.
	DisableElicitation bool

	// MaxSessions bounds the browser contexts open at once, over all
	// clients and named sessions. A context that must open beyond it first
	// takes the slot of a client that went away, else of the least
	// recently used idle context of any client (which is closed, its state
	// file saved, and reopened on its next call); only when every context
	// is busy does the call get an error result. Zero means
	// DefaultMaxSessions.
	MaxSessions int
	// IdleTimeout closes a session's browser context after this long
	// without a tool call (the next call opens a fresh one, and says so).
	// Zero means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxActive bounds the tool calls that drive the browser at once,
	// across sessions; the others wait their turn in first-come,
	// first-served order, and each result's _meta reports the wait
	// (queued_ms) apart from the call's own time (action_ms). Zero means
	// DefaultMaxActive(). websurfer runs are not queued as a whole.
	MaxActive int
	// QueueTimeout bounds a call's wait for its turn; zero means
	// DefaultQueueTimeout.
	QueueTimeout time.Duration
	// CallTimeout bounds one tool call once it has its turn (the wait is
	// not counted); zero means DefaultCallTimeout.
	CallTimeout time.Duration
	// RunTimeout bounds one websurfer tool run; zero means
	// DefaultRunTimeout.
	RunTimeout time.Duration
	// DisconnectGrace is how long an HTTP session whose client kept an
	// event stream open, and now has no connection open, is kept for the
	// client to come back; then it is closed with its browser context.
	// Zero means DefaultDisconnectGrace. (See release.go for the rule.)
	DisconnectGrace time.Duration

	// Board, when set, adds the board tools (board_add, board_status,
	// board_wait, board_result, board_file, board_cancel: board.go) on this task
	// board. A task added through them carries its client's principal in
	// the PrincipalLabel label, and a client sees and acts on only the
	// tasks of its own principal (those without the label for the
	// unnamed principal, ""). The server does not close it. Nil means no
	// board tools.
	Board *board.Board

	// Live, when set, registers every session's browser in this live
	// view hub while it is open: its websurfer runs and single actions
	// are shown there, "ask" actions are put to the live view as well as
	// to elicitation (the first answer wins; without elicitation the live
	// view alone answers them, unless Approver decides first), and
	// request_help waits for a takeover there. Nil means no live view.
	Live *live.Hub

	// Metrics counts the tool calls by tool and outcome, and reads the
	// sessions open and the calls waiting for a turn; nil records
	// nothing. (The surfers count their actions through
	// Surfer.Metrics.)
	Metrics *telemetry.Metrics
	// TracerProvider makes a span per tool call, a child of the trace
	// context in the request's _meta (traceparent, tracestate) when the
	// client sent one; nil means otel's global provider.
	TracerProvider trace.TracerProvider

	// Name and Version identify the server to clients; empty means "surf"
	// and "dev".
	Name    string
	Version string
	// Logger receives session and call logs; nil discards them.
	Logger *slog.Logger
}

// ErrTooManySessions is the error of a call that needs a browser context
// when MaxSessions are open and every one is busy.
var ErrTooManySessions = errors.New("too many browser sessions")

// ErrClosed is returned by a closed server.
var ErrClosed = errors.New("mcpserver: the server is closed")

// Server is surf's MCP server. It is safe for concurrent use: sessions run
// concurrently, and the calls of one session one at a time.
type Server struct {
	cfg  Config
	log  *slog.Logger
	mcp  *mcp.Server
	defs *tools.Registry // tool definitions for tools/list
	list []string        // the tool names listed

	admit *admit.Queue // browser work admitted at once

	sbMu sync.Mutex // serializes relaunches
	sb   *sandbox.Sandbox

	ctl    *tools.Registry // the session tools (named.go)
	boards *tools.Registry // the board tools (board.go), when there is a board

	mu      sync.Mutex
	clients map[*mcp.ServerSession]*client
	open    int // sessions with an open browser context, over all clients
	nextID  int
	closed  bool

	conns   conns       // the HTTP connections of each session (release.go)
	cancels httpCancels // the requests each HTTP session cancelled (cancelled.go)
}

// New makes a server. It opens no browser context until a client calls a
// tool.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Sandbox == nil {
		return nil, errors.New("mcpserver: Config.Sandbox is required")
	}
	if cfg.MaxSessions < 0 || cfg.IdleTimeout < 0 || cfg.CallTimeout < 0 || cfg.RunTimeout < 0 || cfg.DisconnectGrace < 0 || cfg.MaxActive < 0 || cfg.QueueTimeout < 0 {
		return nil, errors.New("mcpserver: limits cannot be negative")
	}
	if cfg.Image < ImageSOM || cfg.Image > ImageNone {
		return nil, fmt.Errorf("mcpserver: unknown image mode %d", cfg.Image)
	}
	if cfg.MaxSessions == 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.MaxActive == 0 {
		cfg.MaxActive = DefaultMaxActive()
	}
	if cfg.QueueTimeout == 0 {
		cfg.QueueTimeout = DefaultQueueTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.CallTimeout == 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = DefaultRunTimeout
	}
	if cfg.DisconnectGrace == 0 {
		cfg.DisconnectGrace = DefaultDisconnectGrace
	}
	if cfg.Name == "" {
		cfg.Name = "surf"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Surfer.Metrics == nil {
		cfg.Surfer.Metrics = cfg.Metrics
	}
	if cfg.Surfer.TracerProvider == nil {
		cfg.Surfer.TracerProvider = cfg.TracerProvider
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg, log: log, sb: cfg.Sandbox, clients: map[*mcp.ServerSession]*client{}, admit: admit.New(cfg.MaxActive)}
	cfg.Metrics.Sessions(func() (int, int) { return s.Sessions(), s.admit.Waiting() })
	s.defs = definitions()
	s.list = listed(s.defs, cfg.Model != nil)
	instr := instructions
	if cfg.Board != nil {
		instr += boardInstructions
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: cfg.Name, Title: "surf web browser", Version: cfg.Version}, &mcp.ServerOptions{
		Instructions: instr,
		Logger:       log,
		// 2026-07-28 is sessionless: it has no session to hang a browser
		// context on, and no server-initiated elicitation. Clients that
		// speak it fall back to the newest of these.
		SupportedProtocolVersions: legacyVersions(),
		Capabilities:              &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.mcp.AddReceivingMiddleware(s.unknownToolMiddleware)
	s.addTools(s.defs, s.list, withSessionArg, annotations, s.handler)
	s.ctl = s.sessionTools()
	s.addTools(s.ctl, s.ctl.Names(), sessionToolSchema, sessionToolAnnotations, s.ctlHandler)
	s.list = append(s.list, s.ctl.Names()...)
	if cfg.Board != nil {
		s.boards = s.boardTools()
		s.addTools(s.boards, s.boards.Names(), boardSchema, boardAnnotations, s.boardHandler)
		s.list = append(s.list, s.boards.Names()...)
	}
	return s, nil
}

// addTools lists the tools of reg with these names to MCP clients.
func (s *Server) addTools(reg *tools.Registry, names []string, schema func(*jsonschema.Schema) *jsonschema.Schema, annotate func(string) *mcp.ToolAnnotations, handler func(string) mcp.ToolHandler) {
	for _, name := range names {
		t, _ := reg.Lookup(name)
		in := schema(t.Schema())
		if _, action := s.defs.Lookup(name); !action || notActions[name] {
			in = withoutReasoning(in)
		}
		if name == WebsurferTool {
			in = withOutputSchemaArg(in)
		}
		tool := &mcp.Tool{
			Name:        name,
			Description: t.Description(),
			InputSchema: in,
			Annotations: annotate(name),
		}
		if out := outputSchema(name); out != nil {
			tool.OutputSchema = out // not a typed nil: the SDK refuses that
		}
		s.mcp.AddTool(tool, handler(name))
	}
}

// notActions are the tools of the definitions that are not page actions.
var notActions = map[string]bool{WebsurferTool: true, ObserveTool: true, ScreenshotTool: true}

// withoutReasoning takes the reasoning argument, which the tools registry
// gives every tool, out of a listed schema. Only the browser actions list
// it: a client's reasoning is about one page action. The session, board
// and websurfer tools are not
// page actions, and nothing reads a reasoning given to them: listing it
// would ask a model for words that go nowhere. (One sent anyway is still
// accepted, and dropped.)
func withoutReasoning(s *jsonschema.Schema) *jsonschema.Schema {
	if s == nil || s.Properties[tools.ReasoningField] == nil {
		return s
	}
	c := *s
	c.Properties = maps.Clone(s.Properties)
	delete(c.Properties, tools.ReasoningField)
	c.PropertyOrder = slices.DeleteFunc(slices.Clone(s.PropertyOrder), func(k string) bool { return k == tools.ReasoningField })
	c.Required = slices.DeleteFunc(slices.Clone(s.Required), func(k string) bool { return k == tools.ReasoningField })
	return &c
}

// instructions tell clients how the tools work.
const instructions = `surf drives a sandboxed Chromium. Each MCP session has its own isolated browser context (cookies, storage, tabs), opened on the first tool call. To work in several isolated contexts at once (two accounts, two sites), open named sessions with session_open and pass session: NAME to the browser tools; session_list and session_close manage them.
Start with visit_url. Every action returns the page as text: the title and URL, the elements you can act on, numbered, and the visible text, followed by a screenshot with the same numbers drawn on it. Use those numbers as target_id / input_field_id; they are valid only for the latest observation. observe shows the current page again without acting (its structuredContent lists the elements as data); screenshot takes a plain screenshot.
tools/list names every tool, but only those that make sense on the current page run (page_up only when the page can scroll up, switch_tab only with several tabs, ...); calling another returns an error listing the ones available now.
A browsing policy decides what may be visited and done; a denial comes back as an error result. The websurfer tool runs a whole task with surf's own model and returns the answer with a step summary.`

func legacyVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v < "2026-07-28" {
			out = append(out, v)
		}
	}
	return out
}

// readOnly are the tools that do not change the page.
var readOnly = map[string]bool{"read_page": true, "summarize_page": true, "answer_question": true, "sleep": true, ObserveTool: true, ScreenshotTool: true}

func annotations(name string) *mcp.ToolAnnotations {
	open := true
	a := &mcp.ToolAnnotations{OpenWorldHint: &open, ReadOnlyHint: readOnly[name]}
	if !a.ReadOnlyHint {
		destructive := false
		if name == WebsurferTool {
			destructive = true // a run may do anything the policy allows
		}
		a.DestructiveHint = &destructive
	}
	return a
}

// MCP is the underlying MCP server, for callers that run it on their own
// transport.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Tools returns the names of the tools listed to clients, in order.
func (s *Server) Tools() []string { return append([]string(nil), s.list...) }

// ServeStdio serves one client on stdin and stdout until it disconnects
// or ctx ends. Nothing else may write to stdout meanwhile.
func (s *Server) ServeStdio(ctx context.Context) error {
	return s.ServeTransport(ctx, &mcp.StdioTransport{MaxLineLength: MaxRequestBytes})
}

// ServeIO serves one client on r and w, newline-delimited JSON like
// stdio (for a program whose stdin and stdout are not os.Stdin and
// os.Stdout), until it disconnects or ctx ends. When the server stops it
// closes r if r is an io.Closer (which unblocks a pending read of a
// file), never w.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	rc, ok := r.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(r)
	}
	return s.ServeTransport(ctx, &mcp.IOTransport{Reader: rc, Writer: nopWriteCloser{w}, MaxLineLength: MaxRequestBytes})
}

// nopWriteCloser keeps a writer open when the transport closes.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ServeTransport serves one client on t until it disconnects or ctx ends.
func (s *Server) ServeTransport(ctx context.Context, t mcp.Transport) error {
	if s.isClosed() {
		return ErrClosed
	}
	err := s.serve(ctx, cancelTransport{t})
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return ctx.Err()
	}
	if frameTooLarge(err) {
		return fmt.Errorf("the client sent a message over %d bytes, the limit, and the connection was closed: %w", MaxRequestBytes, err)
	}
	return err
}

// Sessions reports how many browser sessions are open now.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// Close closes every session's browser context and MCP connection. The
// sandbox stays open: it belongs to the caller. Close is safe to call more
// than once.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	var all []*client
	for _, cl := range s.clients {
		all = append(all, cl)
		cl.stop() // before anything waits for their calls
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(all))
	for i, cl := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = cl.end()
			cl.ss.Close()
		}()
	}
	wg.Wait()
	s.sbMu.Lock()
	if s.sb != s.cfg.Sandbox {
		errs = append(errs, s.sb.Close())
	}
	s.sbMu.Unlock()
	return errors.Join(errs...)
}

// sandbox returns the browser to open sessions in, relaunching it first if
// it is gone and the server can.
func (s *Server) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	s.sbMu.Lock()
	defer s.sbMu.Unlock()
	if !lost(s.sb) || s.cfg.Relaunch == nil {
		return s.sb, nil
	}
	s.log.Warn("the browser is gone; relaunching it")
	sb, err := s.cfg.Relaunch(ctx)
	if err != nil {
		return nil, fmt.Errorf("the browser is gone and relaunching it failed: %w", err)
	}
	if old := s.sb; old != s.cfg.Sandbox {
		go old.Close()
	}
	s.sb = sb
	return sb, nil
}

// lost reports whether a sandbox's browser has gone away.
func lost(sb *sandbox.Sandbox) bool {
	b := sb.Browser()
	return b != nil && !b.IsConnected()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// handler is the MCP handler of one tool: it finds the caller's session
// (the session argument, or the client's own) and runs the call there. It
// never returns a protocol error for a failed call: failures are error
// results.
func (s *Server) handler(name string) mcp.ToolHandler {
	return s.guarded(name, "; look at the page before retrying", func(ctx context.Context, req *mcp.CallToolRequest, cl *client, args json.RawMessage) *mcp.CallToolResult {
		sname, args, err := sessionArg(args)
		if err != nil {
			return errorResult(fmt.Sprintf("%s did not run: %v", name, err))
		}
		se, err := cl.session(sname)
		if err != nil {
			return errorResult(fmt.Sprintf("%s did not run: %v", name, err))
		}
		return se.call(s.withProgress(ctx, req), name, args)
	})
}

// guarded runs a tool call with its client and arguments, recovering a
// panic into an error result (whose text ends with hint).
func (s *Server) guarded(name, hint string, run func(ctx context.Context, req *mcp.CallToolRequest, cl *client, args json.RawMessage) *mcp.CallToolResult) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("mcpserver: panic in a call", "tool", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				res, err = errorResult(fmt.Sprintf("internal error in surf while running %s%s", name, hint)), nil
			}
		}()
		if req == nil || req.Session == nil {
			return errorResult("no MCP session"), nil
		}
		var args []byte
		if req.Params != nil {
			args = req.Params.Arguments
		}
		ctx, done := s.observeCall(ctx, req, name)
		defer func() { done(res) }()
		cl, err := s.client(req.Session, callPrincipal(req))
		if err != nil {
			return errorResult(err.Error()), nil
		}
		return run(ctx, req, cl, args), nil
	}
}

// client returns the state of an MCP session, making it on its first
// call, for principal. (The SDK refuses a session's requests from
// another principal than the one that opened it.)
func (s *Server) client(ss *mcp.ServerSession, principal string) (*client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the server is shutting down")
	}
	if cl, ok := s.clients[ss]; ok {
		return cl, nil
	}
	s.nextID++
	cl := &client{srv: s, ss: ss, id: s.nextID, quit: newStopper(), sessions: map[string]*session{}, principal: principal}
	cl.log = s.log.With("session", cl.id)
	cl.approver = &approver{ss: ss, fallback: s.cfg.Approver, elicit: !s.cfg.DisableElicitation, log: cl.log}
	s.clients[ss] = cl
	go func() {
		// The MCP session ends when the client disconnects (stdio EOF, an
		// HTTP DELETE or the HTTP session's idle timeout).
		ss.Wait()
		cl.log.Debug("mcp session ended")
		cl.end()
	}()
	return cl, nil
}

// errorResult is an MCP error result with text.
func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}
