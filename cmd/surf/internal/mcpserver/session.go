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
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/internal/away"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// teardownTimeout bounds closing one session's browser context.
const teardownTimeout = 15 * time.Second

// client is one MCP session (a connection): its approver and its browser
// sessions, by name. The default one, DefaultSession, opens on the first
// tool call without a session argument; the others with session_open.
type client struct {
	srv      *Server
	ss       *mcp.ServerSession
	id       int
	log      *slog.Logger
	approver *approver
	quit     *stopper // stops the client's calls (cancel.go)
	// principal is who the client is (HTTPOptions.Principals): its state
	// files and board tasks are its own. "" on stdio and for a server
	// with one token.
	principal string

	// Guarded by srv.mu.
	gone     bool                // the MCP session ended
	sessions map[string]*session // by name
}

// session is one named browser session of a client: its browser context,
// when open, its state file and policy. Its calls run one at a time
// (turn); the sessions of a client run concurrently.
type session struct {
	srv   *Server
	cl    *client
	name  string
	log   *slog.Logger
	turn  chan struct{} // holds a token while a call runs
	quit  *stopper      // stops the session's calls when session_close ends it
	state sandbox.StateFile
	// restrict, when set, narrows the server's policy for this session.
	restrict *policy.Restriction

	// Guarded by srv.mu.
	b       *browser      // nil until the first call, and after the idle timeout or an eviction
	busy    int           // calls running or waiting for their turn
	timer   *time.Timer   // the idle timer, armed while no call runs
	closed  bool          // session_close ended it
	note    string        // told with the next call's result
	calls   int           // tool calls made
	used    time.Time     // when the last call started or ended
	closing chan struct{} // closed once the last browser context is closed (and its state saved)
	page    pageInfo      // where the last call left it, for session_list
	runs    int           // websurfer runs started, for their journals' names
}

// pageInfo is where a session's last call left it.
type pageInfo struct {
	url, title string
	tabs       int
}

// browser is a session's open browser context and surfer.
type browser struct {
	sess *sandbox.Session
	surf *websurfer.Surfer
	reg  *tools.Registry
	live *live.Session // in the live view, when the server has one
}

func (b *browser) close() error {
	if b.live != nil {
		b.live.Close()
	}
	err := b.surf.Close()
	return errors.Join(err, b.sess.Close())
}

// call runs one tool call in the session and returns its MCP result.
func (se *session) call(ctx context.Context, name string, args json.RawMessage) (out *mcp.CallToolResult) {
	s := se.srv
	s.mu.Lock()
	se.busy++
	se.calls++
	se.used = time.Now()
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
	queued, turn, refused := se.admit(ctx, name)
	if refused != nil {
		return refused
	}
	defer turn.Drop()
	ctx = admit.WithTurn(ctx, turn)
	started := time.Now()
	defer func() { timed(out, queued, time.Since(started)) }()

	timeout := s.cfg.CallTimeout
	if name == WebsurferTool {
		timeout = s.cfg.RunTimeout + time.Minute // the run ends itself first
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	// A call that outlives its timeout (stuck on a page) does not keep
	// its turn from the other sessions.
	defer turn.DropWhenDone(ctx)()

	if name == WebsurferTool {
		// before a browser context is opened for a call that cannot run
		sch, rest, err := takeOutputSchema(args)
		if err != nil {
			return errorResult(fmt.Sprintf("invalid arguments for %s: %v", name, err))
		}
		args, ctx = rest, context.WithValue(ctx, schemaKey{}, sch)
	}
	if notActions[name] && name != WebsurferTool {
		// observe and screenshot look at the page there is: they open
		// no browser context for it.
		if res := se.noPage(name); res != nil {
			return res
		}
	}
	b, note, ev, err := se.open(ctx)
	if err != nil {
		se.log.Warn("opening a browser session", "err", err)
		out = errorResult(err.Error())
		ev.report(out)
		return out
	}
	if b.live != nil {
		// A person holding the session in the live view has the browser
		// to themselves: the call waits for the hand-back (at most its
		// own timeout), and then has its whole timeout.
		back, waited, refused := waitHandBack(parent, b.live, name, timeout)
		if refused != "" {
			out = errorResult(refused)
			ev.report(out)
			return out
		}
		if waited {
			cancel()
			var again context.CancelFunc
			ctx, again = context.WithTimeout(parent, timeout)
			defer again()
		}
		if back = strings.TrimSpace(b.sess.Policy().Redact(back)); back != "" {
			note = strings.TrimSpace(note + " " + back)
		}
	}
	// Only tools this server lists: the surfer offers stop_action, which
	// an MCP client does not have.
	offered := append(slices.DeleteFunc(b.surf.Offered(), func(n string) bool { return slices.Contains(hidden, n) }), WebsurferTool, ObserveTool, ScreenshotTool)
	if b.live != nil {
		ctx = websurfer.WithProgress(ctx, liveProgress(ctx, b.live))
		end := b.live.Begin()
		defer end()
	}
	before := b.surf.Last()
	t0 := time.Now()
	res, err := b.reg.Call(ctx, name, args, offered...)
	took := time.Since(t0)
	se.log.Debug("call", "tool", name, "ms", took.Milliseconds(), "err", err)
	if b.live != nil && name != WebsurferTool {
		// A single call is a step of the session's timeline, as a run's
		// steps are, with the page it left when it looked at it.
		after := b.surf.Last()
		if after == before {
			after = nil
		}
		text, isErr := callOutcome(res, err)
		b.live.Call(name, args, text, isErr, took, after)
		b.live.Observed(after)
	}
	if o := b.surf.Last(); o != nil {
		s.mu.Lock()
		se.page = pageInfo{url: o.URL, title: o.Title, tabs: len(o.Tabs)}
		s.mu.Unlock()
	}
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
		out = errorResult(fmt.Sprintf("%s failed: %v. This session's browser context was closed; the next call opens a new one%s.", name, err, se.reopens()))
	}
	if note != "" {
		out.Content = append([]mcp.Content{&mcp.TextContent{Text: "note: " + note}}, out.Content...)
	}
	ev.report(out)
	return out
}

// noPage is the error result of a call that looks at the page (observe,
// screenshot) in a session without a browser context open: it has no
// page, and opening a context would only show a blank one. Nil when the
// session has a context.
func (se *session) noPage(name string) *mcp.CallToolResult {
	s := se.srv
	s.mu.Lock()
	open, note := se.b != nil, se.note
	s.mu.Unlock()
	if open {
		return nil
	}
	msg := errNoPage(name).Error()
	if note != "" {
		msg += " (" + note + ")"
	}
	return errorResult(msg)
}

// open makes room for the session's browser context if it has none and
// the server is full, then returns it, opened if needed (see browser).
func (se *session) open(ctx context.Context) (*browser, string, *eviction, error) {
	ev := se.srv.makeRoom(se)
	b, note, ev2, err := se.browser(ctx)
	if ev2 != nil {
		ev = ev2
	}
	if ev != nil {
		ev.open = se.srv.Sessions()
	}
	return b, note, ev, err
}

// reopens tells how the session's next browser context starts.
func (se *session) reopens() string {
	if se.state.Path != "" {
		return ", loaded from its state file"
	}
	return ", empty"
}

// browser returns the session's browser, opening it if needed: when every
// slot is taken it closes the least recently used idle browser context of
// any client first (ev says which), and fails only when all are busy.
// note says why a new one was opened after an earlier one closed.
func (se *session) browser(ctx context.Context) (b *browser, note string, ev *eviction, err error) {
	s := se.srv
	s.mu.Lock()
	if se.cl.gone || s.closed {
		s.mu.Unlock()
		return nil, "", nil, errors.New("this MCP session has ended")
	}
	if se.closed {
		s.mu.Unlock()
		return nil, "", nil, fmt.Errorf("the session %q was closed", se.name)
	}
	if se.b != nil && !lost(se.b.sess.Sandbox()) {
		b := se.b
		s.mu.Unlock()
		return b, "", nil, nil
	}
	if se.b != nil {
		// The browser under this context went away.
		go se.finish(se.detach("the browser had gone away and was relaunched; this session's browser context is new" + se.reopens()))
	}
	var victim *session
	var victimB *browser
	if s.open >= s.cfg.MaxSessions {
		victim = s.leastRecentlyUsed()
		if victim == nil {
			s.mu.Unlock()
			return nil, "", nil, fmt.Errorf("%w: this server allows %d browser sessions at once and all are busy; try again when another call ends or a client disconnects, or start surf serve with a higher --max-sessions", ErrTooManySessions, s.cfg.MaxSessions)
		}
		ev = &eviction{cap: s.cfg.MaxSessions, name: victim.name, same: victim.cl == se.cl, idle: time.Since(victim.used), state: victim.state.Path != ""}
		victimB = victim.detach(fmt.Sprintf("this session's browser context was closed to make room for another (the server's cap of %d browser sessions was reached and it was the least recently used idle one, idle for %s); this is a new one", s.cfg.MaxSessions, ev.idle.Round(time.Second)) + victim.reopens())
		victim.log.Info("evicted: closing the idle browser session to make room", "for_client", se.cl.id, "for_session", se.name, "idle", ev.idle.Round(time.Millisecond))
	}
	s.open++
	note = se.note
	se.note = ""
	closing := se.closing
	s.mu.Unlock()

	if victimB != nil {
		ev.saveErr = victim.finish(victimB)
	}
	if closing != nil && se.state.Path != "" {
		// The previous context may still be saving its state file, which
		// this one loads.
		select {
		case <-closing:
		case <-ctx.Done():
		}
	}
	if err = ctx.Err(); err == nil {
		b, err = se.openBrowser(ctx)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && (se.cl.gone || s.closed || se.closed) {
		go b.close()
		err = errors.New("this session has ended")
	}
	if err != nil {
		s.open--
		se.note = note
		return nil, "", ev, err
	}
	se.b = b
	if sum := b.sess.StateLoaded(); se.state.Path != "" {
		loaded := fmt.Sprintf("loaded %s and %s from its state file", plural(sum.Cookies, "cookie"), plural(sum.Origins, "local-storage origin")) + leftOut(sum)
		if note != "" {
			loaded = note + "; " + loaded
		}
		note = loaded
	}
	se.log.Info("browser session opened", "open", s.open)
	return b, note, ev, nil
}

// leftOut says what a state file held that the policy kept out, if
// anything.
func leftOut(sum sandbox.StateSummary) string {
	if sum.DroppedCookies+sum.DroppedOrigins == 0 {
		return ""
	}
	return fmt.Sprintf(" (left out %s and %s the policy denies)", plural(sum.DroppedCookies, "cookie"), plural(sum.DroppedOrigins, "origin"))
}

// leastRecentlyUsed is the idle session with a browser context, of any
// client, that has gone longest without a call; nil when all are busy.
// The caller holds s.mu.
func (s *Server) leastRecentlyUsed() *session {
	var lru *session
	for _, cl := range s.clients {
		for _, se := range cl.sessions {
			if se.b == nil || se.busy > 0 {
				continue
			}
			if lru == nil || se.used.Before(lru.used) {
				lru = se
			}
		}
	}
	return lru
}

// detach takes the session's browser context away to close it, and leaves
// a note for its next call; the caller holds s.mu and then calls finish
// with the result, outside the lock. The session's next context waits for
// that close (and its state file's save).
func (se *session) detach(note string) *browser {
	b := se.b
	if b == nil {
		return nil
	}
	se.b = nil
	se.srv.open--
	se.note = note
	if se.timer != nil {
		se.timer.Stop()
	}
	se.closing = make(chan struct{})
	return b
}

// finish closes a browser context detach took away, and tells the
// session's next context it may open.
func (se *session) finish(b *browser) error {
	if b == nil {
		return nil
	}
	s := se.srv
	s.mu.Lock()
	closing := se.closing
	s.mu.Unlock()
	err := se.closeBrowser(b)
	s.mu.Lock()
	if se.state.Path != "" && se.note != "" {
		// Its next call learns whether what it reloads is up to date.
		if err == nil {
			se.note += " (its state was saved to the file as the old one closed)"
		} else {
			se.note += " (saving its state file as the old one closed failed, so it may be out of date)"
		}
	}
	if closing != nil && se.closing == closing {
		se.closing = nil
	}
	s.mu.Unlock()
	if closing != nil {
		close(closing)
	}
	return err
}

// openBrowser opens a browser context and a surfer for the session.
func (se *session) openBrowser(ctx context.Context) (*browser, error) {
	s := se.srv
	scfg := s.cfg.Session
	scfg.Policy = s.cfg.Policy
	scfg.State = se.state
	if scfg.Logger == nil {
		scfg.Logger = se.log
	}
	if scfg.DownloadsDir != "" {
		sub := fmt.Sprintf("session-%d", se.cl.id)
		if se.name != DefaultSession {
			sub += "-" + se.name
		}
		dir := filepath.Join(scfg.DownloadsDir, sub)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("making the session's downloads directory: %w", err)
		}
		scfg.DownloadsDir = dir
	}
	sb, err := s.sandbox(ctx)
	if err != nil {
		return nil, err
	}
	if se.restrict != nil {
		base := scfg.Policy
		if base == nil {
			base = sb.Policy()
		}
		if scfg.Policy, err = base.Restrict(*se.restrict); err != nil {
			return nil, fmt.Errorf("narrowing the policy for session %q: %w", se.name, err)
		}
	}
	sess, err := sb.NewSession(ctx, scfg)
	if err != nil {
		return nil, fmt.Errorf("opening a browser session: %w", err)
	}
	cfg := s.cfg.Surfer
	cfg.Session = sess
	cfg.Policy = scfg.Policy
	if se.cl.approver.asks() {
		cfg.Approver = se.cl.approver
	} // else nil: the policy's "approval is required and no approver is configured"
	var ls *live.Session
	if s.cfg.Live != nil {
		// In the live view: its Approve and Deny race the client's
		// elicitation (or, without one, answer alone), and request_help
		// waits for a takeover there.
		if ls, err = s.cfg.Live.Open(live.SessionOptions{Owner: se.owner(), Redact: sess.Policy().Redact}); err != nil {
			sess.Close()
			return nil, err
		}
		var other policy.Approver
		if cfg.Approver != nil {
			other = cfg.Approver
		}
		// A person answers there: the call's turn serves others meanwhile.
		cfg.Approver, cfg.Human = away.Approver(ls.Approver(other)), away.Human(ls)
	} else if a := se.cl.approver; a.elicit && canElicit(a.ss) {
		// No live view: request_help asks the client's user.
		cfg.Human = away.Human(&elicitHuman{ss: a.ss, log: se.log})
	}
	cfg.Logger = se.log
	cfg.Image = s.cfg.Image.kind()
	if s.cfg.Model != nil {
		// read_page and answer_question ask it: the turn serves others
		// while it thinks
		cfg.Model, cfg.ModelName = away.Model(s.cfg.Model), s.cfg.ModelName
	}
	surf, err := websurfer.New(ctx, cfg)
	if err != nil {
		if ls != nil {
			ls.Close()
		}
		sess.Close()
		return nil, fmt.Errorf("opening a browser session: %w", err)
	}
	if ls != nil {
		ls.Attach(surf, live.SandboxDenials(sess))
	}
	reg := surf.Tools()
	reg.Add(websurferSpec.Bind(func(ctx context.Context, in WebsurferArgs) (*tools.Result, error) {
		return se.run(ctx, surf, sess.Policy(), ls, in)
	}))
	reg.Add(pageTools(surf)...)
	return &browser{sess: sess, surf: surf, reg: reg, live: ls}, nil
}

// owner names the session in the live view: "mcp client NAME", with the
// session's name when it is not the default one.
func (se *session) owner() string {
	name := "?"
	if p := se.cl.ss.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
		name = p.ClientInfo.Name
	}
	o := fmt.Sprintf("mcp client %s #%d", name, se.cl.id)
	if se.name != DefaultSession {
		o += " session " + se.name
	}
	return o
}

// idleLater marks a call done and, when none is left, arms the idle
// timer.
func (se *session) idleLater() {
	s := se.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	se.busy--
	se.used = time.Now()
	if se.busy > 0 || se.cl.gone || se.b == nil {
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
	b := se.detach(fmt.Sprintf("the previous browser context of this session was closed after %s without a call; this is a new one", s.cfg.IdleTimeout) + se.reopens())
	s.mu.Unlock()
	se.log.Info("idle: closing the browser session")
	se.finish(b)
}

// reset closes the session's browser after a runtime error.
func (se *session) reset() {
	s := se.srv
	s.mu.Lock()
	b := se.detach("the browser context of this session was closed after an error; this is a new one" + se.reopens())
	s.mu.Unlock()
	se.finish(b)
}

// shut ends a session for good (session_close, or its client's end): its
// calls are stopped and its browser context closed, its state file saved
// unless discard. The caller holds s.mu and calls finish with the result.
func (se *session) shut() *browser {
	se.closed = true
	se.quit.stop()
	if se.timer != nil {
		se.timer.Stop()
	}
	return se.detach("")
}

// end releases everything of a client whose MCP connection ended (or
// whose server is closing).
func (cl *client) end() error {
	s := cl.srv
	s.mu.Lock()
	if cl.gone {
		s.mu.Unlock()
		return nil
	}
	cl.gone = true
	cl.stop()
	type closing struct {
		se *session
		b  *browser
	}
	var all []closing
	for _, se := range cl.sessions {
		if b := se.shut(); b != nil {
			all = append(all, closing{se, b})
		}
	}
	delete(s.clients, cl.ss)
	s.mu.Unlock()
	if len(all) == 0 {
		return nil
	}
	cl.log.Info("closing the browser sessions", "n", len(all))
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.se.finish(c.b)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
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

// callOutcome is a call's result for the live view's timeline: its text
// (the first line of an observation is enough) and whether it failed.
func callOutcome(res *tools.Result, err error) (string, bool) {
	switch {
	case err != nil:
		return err.Error(), true
	case res == nil:
		return "", false
	}
	return res.Text, res.IsError
}
