package mcpserver

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Releasing HTTP sessions whose client has gone. A streamable HTTP client
// ends its session with a DELETE, but many just go (the MCP inspector, the
// TypeScript SDK's close()): without more, such a session kept its browser
// context until the idle timeout, and enough of them kept every slot.
//
// The rule: a client that holds a standalone event stream (the GET that
// SDK clients keep open for the server's messages) is there as long as it
// has a connection open for its session, that stream or a request. Once
// its last one closes, it has DisconnectGrace to come back (SDK clients
// reopen a dropped stream at once, with the same session id); if it does
// not, the session is released: its calls are stopped, its MCP session
// closed and its browser context with it. A client that never opened a
// stream cannot be told from one between two calls, so its session waits
// for the idle timeout as before.
//
// Capacity. A session that needs a browser context when MaxSessions are
// open first takes the slot of a gone client (the one gone longest),
// without waiting for its grace to end; failing that, it closes the least
// recently used idle context (no call running or queued) of any client,
// whose state file, if it has one, is saved as it closes; only when every
// context is busy is the call refused (ErrTooManySessions). The caller's
// result says what was closed (a note, and cap, open and evicted in
// _meta); the evicted session's next call opens a new context, reloaded
// from its state file, and is told so. A client that sends bare requests
// and goes without a DELETE is thus never noticed as gone, but its idle
// context is the first to be evicted.

// sessionIDHeader is the streamable HTTP transport's session header.
const sessionIDHeader = "Mcp-Session-Id"

// DefaultDisconnectGrace is Config.DisconnectGrace's default.
const DefaultDisconnectGrace = 30 * time.Second

// conns follows the HTTP connections of each MCP session.
type conns struct {
	mu   sync.Mutex
	byID map[string]*connState
}

// connState is one session's HTTP connections.
type connState struct {
	open     int       // requests being served
	streamed bool      // the client has opened a standalone stream
	goneAt   time.Time // when the last one closed, while none is open
	timer    *time.Timer
}

// trackConns wraps the streamable HTTP handler: it counts each session's
// open requests, releases sessions whose client has gone, and stops a
// session's calls before a DELETE closes it (closing waits for them).
func (s *Server) trackConns(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		switch {
		case id == "":
			next.ServeHTTP(w, r)
		case r.Method == http.MethodDelete:
			s.forget(id)
			s.stopSessionID(id)
			next.ServeHTTP(w, r)
		default:
			s.connOpened(id, r.Method == http.MethodGet)
			defer s.connClosed(id)
			next.ServeHTTP(w, r)
		}
	})
}

func (s *Server) connOpened(id string, stream bool) {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]*connState{}
	}
	st := c.byID[id]
	if st == nil {
		st = &connState{}
		c.byID[id] = st
	}
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	st.open++
	st.goneAt = time.Time{}
	st.streamed = st.streamed || stream
}

func (s *Server) connClosed(id string) {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.byID[id]
	if st == nil {
		return // forgotten: deleted meanwhile
	}
	st.open--
	if st.open > 0 {
		return
	}
	if !st.streamed {
		delete(c.byID, id) // nothing to tell: see the rule above
		return
	}
	st.goneAt = time.Now()
	st.timer = time.AfterFunc(s.cfg.DisconnectGrace, func() {
		c.mu.Lock()
		still := c.byID[id] == st && st.open == 0 && !st.goneAt.IsZero()
		if still {
			delete(c.byID, id)
		}
		c.mu.Unlock()
		if still {
			s.log.Info("http: the client went away without ending its session; releasing it", "mcp_session", id, "grace", s.cfg.DisconnectGrace)
			s.release(id)
		}
	})
}

// forget stops following a session.
func (s *Server) forget(id string) {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	if st := c.byID[id]; st != nil {
		if st.timer != nil {
			st.timer.Stop()
		}
		delete(c.byID, id)
	}
}

// release ends the MCP session with an HTTP session id: its calls are
// stopped, then the session closed, which closes its browser context.
func (s *Server) release(id string) {
	ss := s.mcpSession(id)
	if ss == nil {
		return
	}
	s.stopSession(ss)
	ss.Close()
	// ss.Close has run the session's end (the goroutine waiting on it in
	// Server.session may not have yet): end it here so its slot is free
	// when release returns.
	s.mu.Lock()
	cl := s.clients[ss]
	s.mu.Unlock()
	if cl != nil {
		cl.end()
	}
}

// makeRoom releases the session of the client gone longest that holds a
// browser context, when se needs one and every slot is taken; it reports
// what it released, or nil.
func (s *Server) makeRoom(se *session) *eviction {
	s.mu.Lock()
	full := se.b == nil && s.open >= s.cfg.MaxSessions
	s.mu.Unlock()
	if !full {
		return nil
	}
	type gone struct {
		id string
		at time.Time
	}
	var cands []gone
	c := &s.conns
	c.mu.Lock()
	for id, st := range c.byID {
		if st.open == 0 && !st.goneAt.IsZero() {
			cands = append(cands, gone{id, st.goneAt})
		}
	}
	c.mu.Unlock()
	slices.SortFunc(cands, func(a, b gone) int { return a.at.Compare(b.at) })
	for _, g := range cands {
		ss := s.mcpSession(g.id)
		s.mu.Lock()
		n := 0
		if cl := s.clients[ss]; ss != nil && cl != nil {
			n = cl.holding()
		}
		s.mu.Unlock()
		if n == 0 || !s.forgetGone(g.id) {
			continue
		}
		s.log.Info("http: all browser sessions are in use; releasing the one of a client that went away", "mcp_session", g.id, "gone_for", time.Since(g.at).Round(time.Millisecond))
		s.release(g.id)
		return &eviction{cap: s.cfg.MaxSessions, gone: time.Since(g.at), released: n}
	}
	return nil
}

// holding counts the client's sessions with an open browser context. The
// caller holds s.mu.
func (cl *client) holding() int {
	n := 0
	for _, se := range cl.sessions {
		if se.b != nil {
			n++
		}
	}
	return n
}

// eviction is what a call closed to make room for its browser context:
// the idle session least recently used, or the sessions of a client that
// went away.
type eviction struct {
	cap, open int // the server's cap, and the contexts open after the call opened its own

	// An idle session evicted.
	name    string
	same    bool // of the caller's own client
	idle    time.Duration
	state   bool  // it has a state file, saved as it closed
	saveErr error // closing it (and saving its state) failed

	// A gone client released.
	gone     time.Duration
	released int // its sessions that held a browser context
}

// Keys of an eviction report in a result's _meta.
const (
	MetaCap     = "cap"
	MetaOpen    = "open"
	MetaEvicted = "evicted"
)

// report tells a call's result about the eviction, in a note and in _meta.
func (ev *eviction) report(out *mcp.CallToolResult) {
	if ev == nil {
		return
	}
	var note string
	evicted := map[string]any{}
	if ev.released > 0 {
		note = fmt.Sprintf("the server's cap of %d browser sessions was reached: released the %s of a client that went away %s ago, to make room", ev.cap, plural(ev.released, "session"), ev.gone.Round(time.Second))
		evicted["client"] = "gone"
		evicted["gone_ms"] = ev.gone.Milliseconds()
		evicted["sessions"] = ev.released
	} else {
		whose := "another client"
		evicted["client"] = "other"
		if ev.same {
			whose = "this client"
			evicted["client"] = "this"
		}
		note = fmt.Sprintf("the server's cap of %d browser sessions was reached: closed the idle session %q of %s, idle for %s, to make room", ev.cap, ev.name, whose, ev.idle.Round(time.Second))
		evicted["session"] = ev.name
		evicted["idle_ms"] = ev.idle.Milliseconds()
		if ev.state {
			evicted["state_saved"] = ev.saveErr == nil
			if ev.saveErr == nil {
				note += "; its state file was saved"
			} else {
				note += "; closing it and saving its state file failed"
			}
		}
	}
	out.Content = append([]mcp.Content{&mcp.TextContent{Text: "note: " + note}}, out.Content...)
	if out.Meta == nil {
		out.Meta = mcp.Meta{}
	}
	out.Meta[MetaCap] = ev.cap
	out.Meta[MetaOpen] = ev.open
	out.Meta[MetaEvicted] = evicted
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// forgetGone stops following a session whose client is still gone; it
// reports whether it was.
func (s *Server) forgetGone(id string) bool {
	c := &s.conns
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.byID[id]
	if st == nil || st.open > 0 || st.goneAt.IsZero() {
		return false
	}
	if st.timer != nil {
		st.timer.Stop()
	}
	delete(c.byID, id)
	return true
}

// mcpSession finds an MCP session by its HTTP session id.
func (s *Server) mcpSession(id string) *mcp.ServerSession {
	if id == "" {
		return nil
	}
	for ss := range s.mcp.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}
