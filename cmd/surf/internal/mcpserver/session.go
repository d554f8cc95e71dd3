package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// teardownTimeout bounds closing one session's browser context.
const teardownTimeout = 15 * time.Second

// session is one MCP session's state: its browser, when open, and its
// approver. Its calls run one at a time (turn).
type session struct {
	srv      *Server
	ss       *mcp.ServerSession
	id       int
	log      *slog.Logger
	approver *approver
	turn     chan struct{} // holds a token while a call runs
	quit     *stopper      // stops the session's calls (cancel.go)

	// Guarded by srv.mu.
	b     *browser    // nil until the first call, and after the idle timeout
	busy  int         // calls running or waiting for their turn
	timer *time.Timer // the idle timer, armed while no call runs
	gone  bool        // the MCP session ended
	note  string      // told with the next call's result
}

// browser is a session's open browser context and surfer.
type browser struct {
	sess *sandbox.Session
	surf *websurfer.Surfer
	reg  *tools.Registry
}

func (b *browser) close() error {
	err := b.surf.Close()
	return errors.Join(err, b.sess.Close())
}

// call runs one tool call in the session and returns its MCP result.
func (se *session) call(ctx context.Context, name string, args json.RawMessage) (out *mcp.CallToolResult) {
	s := se.srv
	s.mu.Lock()
	se.busy++
	if se.timer != nil {
		se.timer.Stop()
	}
	s.mu.Unlock()
	defer se.idleLater()
	ctx, stop := se.callContext(ctx)
	defer stop()

	select {
	case se.turn <- struct{}{}:
		defer func() { <-se.turn }()
	case <-ctx.Done():
		return errorResult(fmt.Sprintf("%s did not run: %v while another call of this session was running", name, ctx.Err()))
	}

	// Wait for a turn at the browser; the call's timeout starts after.
	queued, release, refused := se.admit(ctx, name)
	if refused != nil {
		return refused
	}
	defer release()
	started := time.Now()
	defer func() { timed(out, queued, time.Since(started)) }()

	timeout := s.cfg.CallTimeout
	if name == WebsurferTool {
		timeout = s.cfg.RunTimeout + time.Minute // the run ends itself first
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	s.makeRoom(se)
	b, note, err := se.browser(ctx)
	if err != nil {
		se.log.Warn("opening a browser session", "err", err)
		return errorResult(err.Error())
	}
	// Only tools this server lists: the surfer offers stop_action, which
	// an MCP client does not have.
	offered := append(slices.DeleteFunc(b.surf.Offered(), func(n string) bool { return slices.Contains(hidden, n) }), WebsurferTool)
	t0 := time.Now()
	res, err := b.reg.Call(ctx, name, args, offered...)
	se.log.Debug("call", "tool", name, "ms", time.Since(t0).Milliseconds(), "err", err)
	switch {
	case err == nil:
		out = tools.MCPResult(res) // the surfer's observations carry the configured image
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil:
		out = errorResult(fmt.Sprintf("%s timed out after %s; the page may have changed, look at it again before going on", name, timeout))
	case ctx.Err() != nil:
		out = errorResult(fmt.Sprintf("%s was cancelled: %v", name, ctx.Err()))
	default:
		// A runtime error: the browser context is not usable any more
		// (the page crashed, the browser went away). Close it; the next
		// call opens a fresh one.
		se.log.Warn("runtime error; closing the session's browser context", "tool", name, "err", err)
		se.reset()
		out = errorResult(fmt.Sprintf("%s failed: %v. This session's browser context was closed; the next call opens a new, empty one.", name, err))
	}
	if note != "" {
		out.Content = append([]mcp.Content{&mcp.TextContent{Text: "note: " + note}}, out.Content...)
	}
	return out
}

// browser returns the session's browser, opening it if needed. note says
// why a new one was opened after an earlier one closed.
func (se *session) browser(ctx context.Context) (*browser, string, error) {
	s := se.srv
	s.mu.Lock()
	if se.gone || s.closed {
		s.mu.Unlock()
		return nil, "", errors.New("this MCP session has ended")
	}
	if se.b != nil && !lost(se.b.sess.Sandbox()) {
		b := se.b
		s.mu.Unlock()
		return b, "", nil
	}
	if se.b != nil {
		// The browser under this context went away.
		go se.closeBrowser(se.b)
		se.b = nil
		s.open--
		se.note = "the browser had gone away and was relaunched; this session's browser context is new and empty"
	}
	if s.open >= s.cfg.MaxSessions {
		s.mu.Unlock()
		return nil, "", fmt.Errorf("%w: this server allows %d browser sessions at once and all are in use; try again when another client disconnects, or start surf serve with a higher --max-sessions", ErrTooManySessions, s.cfg.MaxSessions)
	}
	s.open++
	note := se.note
	se.note = ""
	s.mu.Unlock()

	b, err := se.openBrowser(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && (se.gone || s.closed) {
		go b.close()
		err = errors.New("this MCP session has ended")
	}
	if err != nil {
		s.open--
		se.note = note
		return nil, "", err
	}
	se.b = b
	se.log.Info("browser session opened", "open", s.open)
	return b, note, nil
}

// openBrowser opens a browser context and a surfer for the session.
func (se *session) openBrowser(ctx context.Context) (*browser, error) {
	s := se.srv
	scfg := s.cfg.Session
	scfg.Policy = s.cfg.Policy
	if scfg.Logger == nil {
		scfg.Logger = se.log
	}
	if scfg.DownloadsDir != "" {
		dir := filepath.Join(scfg.DownloadsDir, fmt.Sprintf("session-%d", se.id))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("making the session's downloads directory: %w", err)
		}
		scfg.DownloadsDir = dir
	}
	sb, err := s.sandbox(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := sb.NewSession(ctx, scfg)
	if err != nil {
		return nil, fmt.Errorf("opening a browser session: %w", err)
	}
	cfg := s.cfg.Surfer
	cfg.Session = sess
	cfg.Policy = s.cfg.Policy
	if se.approver.asks() {
		cfg.Approver = se.approver
	} // else nil: the policy's "approval is required and no approver is configured"
	cfg.Logger = se.log
	cfg.Image = s.cfg.Image.kind()
	if s.cfg.Model != nil {
		cfg.Model, cfg.ModelName = s.cfg.Model, s.cfg.ModelName
	}
	surf, err := websurfer.New(ctx, cfg)
	if err != nil {
		sess.Close()
		return nil, fmt.Errorf("opening a browser session: %w", err)
	}
	reg := surf.Tools()
	reg.Add(websurferSpec.Bind(func(ctx context.Context, in WebsurferArgs) (*tools.Result, error) {
		return se.run(ctx, surf, in)
	}))
	return &browser{sess: sess, surf: surf, reg: reg}, nil
}

// idleLater marks a call done and, when none is left, arms the idle
// timer.
func (se *session) idleLater() {
	s := se.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	se.busy--
	if se.busy > 0 || se.gone || se.b == nil {
		return
	}
	if se.timer == nil {
		se.timer = time.AfterFunc(s.cfg.IdleTimeout, se.idle)
	} else {
		se.timer.Reset(s.cfg.IdleTimeout)
	}
}

// idle closes the browser of a session that has had no call for the idle
// timeout.
func (se *session) idle() {
	s := se.srv
	s.mu.Lock()
	if se.busy > 0 || se.b == nil {
		s.mu.Unlock()
		return
	}
	b := se.b
	se.b = nil
	s.open--
	se.note = fmt.Sprintf("the previous browser context of this session was closed after %s without a call; this is a new, empty one", s.cfg.IdleTimeout)
	s.mu.Unlock()
	se.log.Info("idle: closing the browser session")
	se.closeBrowser(b)
}

// reset closes the session's browser after a runtime error.
func (se *session) reset() {
	s := se.srv
	s.mu.Lock()
	b := se.b
	if b != nil {
		se.b = nil
		s.open--
		se.note = "the browser context of this session was closed after an error; this is a new, empty one"
	}
	s.mu.Unlock()
	if b != nil {
		se.closeBrowser(b)
	}
}

// end releases everything of a session whose MCP connection ended (or
// whose server is closing).
func (se *session) end() error {
	s := se.srv
	s.mu.Lock()
	if se.gone {
		s.mu.Unlock()
		return nil
	}
	se.gone = true
	se.stop()
	b := se.b
	se.b = nil
	if b != nil {
		s.open--
	}
	if se.timer != nil {
		se.timer.Stop()
	}
	delete(s.sessions, se.ss)
	s.mu.Unlock()
	if b == nil {
		return nil
	}
	se.log.Info("closing the browser session")
	return se.closeBrowser(b)
}

func (se *session) closeBrowser(b *browser) error {
	done := make(chan error, 1)
	go func() { done <- b.close() }()
	select {
	case err := <-done:
		if err != nil {
			se.log.Warn("closing the browser session", "err", err)
		}
		return err
	case <-time.After(teardownTimeout):
		se.log.Warn("closing the browser session timed out")
		return errors.New("closing the browser session timed out")
	}
}
