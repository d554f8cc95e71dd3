package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// Named sessions. One MCP connection may drive several isolated browser
// sessions at once (two accounts, two sites side by side): every browser
// tool takes an optional session argument, and session_open, session_list,
// session_close and session_save manage them. Each named session has its
// own browser context, surfer, policy narrowing, downloads directory and
// state file, and runs its calls one at a time; different sessions run
// concurrently. A call naming a session that is not open is an error
// result: opening one silently on a typo would act, logged out, in a fresh
// context.

// DefaultSession is the name of a connection's own session, the one tool
// calls without a session argument use.
const DefaultSession = "default"

// SessionArg is the argument of every browser tool that names the session
// to act in.
const SessionArg = "session"

// maxNamedSessions bounds the sessions of one connection. Their browser
// contexts count against Config.MaxSessions like any other.
const maxNamedSessions = 32

// sessionName is what session and state names look like: a file name
// under StateDir too, never a path.
var sessionName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

const sessionNamePattern = `^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`

func checkName(what, name string) error {
	if !sessionName.MatchString(name) {
		return fmt.Errorf("%s %q is not valid: use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", what, name)
	}
	return nil
}

// withSessionArg adds the session argument to a browser tool's schema.
func withSessionArg(s *jsonschema.Schema) *jsonschema.Schema {
	props := make(map[string]*jsonschema.Schema, len(s.Properties)+1)
	for k, v := range s.Properties {
		props[k] = v
	}
	props[SessionArg] = &jsonschema.Schema{
		Type:        "string",
		Pattern:     sessionNamePattern,
		Description: "Which of this connection's named sessions to act in (see session_open); default: the connection's own.",
	}
	s.Properties = props
	return s
}

// sessionArg takes the session argument out of a call's arguments, which
// the tool's registry would refuse as unknown. It returns DefaultSession
// when there is none.
func sessionArg(args json.RawMessage) (string, json.RawMessage, error) {
	if !bytes.Contains(args, []byte(`"`+SessionArg+`"`)) {
		return DefaultSession, args, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil {
		return DefaultSession, args, nil // not an object: the registry says what is wrong
	}
	raw, ok := m[SessionArg]
	if !ok {
		return DefaultSession, args, nil
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		return "", nil, fmt.Errorf("the %s argument must be a string naming one of this connection's sessions", SessionArg)
	}
	if err := checkName("session name", name); err != nil {
		return "", nil, err
	}
	delete(m, SessionArg)
	out, err := json.Marshal(m)
	if err != nil {
		return "", nil, err
	}
	return name, out, nil
}

// session returns the client's session with a name, making the default one
// on its first use.
func (cl *client) session(name string) (*session, error) {
	s := cl.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	if se := cl.sessions[name]; se != nil {
		return se, nil
	}
	if name == DefaultSession {
		se := cl.newSession(DefaultSession, s.cfg.State, nil)
		cl.sessions[name] = se
		return se, nil
	}
	return nil, fmt.Errorf("this connection has no session named %q (open: %s); session_open makes one", name, cl.names())
}

// names lists the client's open sessions; the caller holds s.mu.
func (cl *client) names() string {
	var names []string
	for n := range cl.sessions {
		names = append(names, n)
	}
	if len(names) == 0 {
		return "none yet"
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (cl *client) newSession(name string, state sandbox.StateFile, r *policy.Restriction) *session {
	log := cl.log
	if name != DefaultSession {
		log = log.With("name", name)
	}
	return &session{srv: cl.srv, cl: cl, name: name, log: log, turn: make(chan struct{}, 1), quit: newStopper(), state: state, restrict: r, used: time.Now()}
}

// The session tools' inputs.
type (
	// SessionOpenArgs is the input of session_open.
	SessionOpenArgs struct {
		Name  string   `json:"name" jsonschema:"The new session's name: 1 to 64 letters, digits, '_', '.' or '-'. Pass it as the session argument of the browser tools to act in this session." schema:"minLength=1,maxLength=64"`
		State string   `json:"state,omitempty" jsonschema:"A saved identity to load at open and save at close: the name of a state file the server keeps (a name, not a path). Its cookies and local storage are loaded when the session opens, and saved when it closes, is evicted or on session_save. Absent: the session starts empty and forgets everything." schema:"maxLength=64"`
		Allow []string `json:"allow,omitempty" jsonschema:"Host patterns (example.com, *.example.com) that this session alone may reach: it narrows the server's browsing policy for this session, never widens it." schema:"maxItems=64,items.maxLength=253"`
		Deny  []string `json:"deny,omitempty" jsonschema:"Host patterns this session may not reach, besides what the server's policy denies." schema:"maxItems=64,items.maxLength=253"`
	}
	// SessionCloseArgs is the input of session_close.
	SessionCloseArgs struct {
		Name string `json:"name" jsonschema:"The session to close; default closes the browser context of this connection's own session (its next call opens a new one)." schema:"minLength=1,maxLength=64"`
		Save bool   `json:"save,omitempty" jsonschema:"Save the session's state file as it closes (when it has one). Default true." schema:"default=true"`
	}
	// SessionNameArgs is the input of session_save.
	SessionNameArgs struct {
		Name string `json:"name" jsonschema:"The session." schema:"minLength=1,maxLength=64"`
	}
	// SessionListArgs is the input of session_list.
	SessionListArgs struct{}
)

// clientKey carries a session tool's client in its context.
type clientKey struct{}

// sessionTools is the registry of the session tools.
func (s *Server) sessionTools() *tools.Registry {
	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		panic(err) // the zero config cannot fail
	}
	withClient := func(ctx context.Context) *client { return ctx.Value(clientKey{}).(*client) }
	reg.Add(
		tools.New("session_open", "Open a named browser session in this connection: an isolated browser context (its own cookies, storage, tabs and downloads), optionally loaded from a saved identity (state) and with a narrower browsing policy (allow, deny). Then pass session: NAME to the browser tools to act in it; sessions run side by side.",
			func(ctx context.Context, in SessionOpenArgs) (*tools.Result, error) {
				return withClient(ctx).open(ctx, in)
			}),
		tools.New("session_list", "List this connection's sessions: for each, whether its browser context is open, its page, tabs, how long it has been idle, whether it has a state file, and its calls.",
			func(ctx context.Context, _ SessionListArgs) (*tools.Result, error) {
				return withClient(ctx).list(), nil
			}),
		tools.New("session_close", "Close a named session of this connection: its browser context closes, its state file (if any) is saved unless save is false, and its name is free again. The other sessions go on.",
			func(ctx context.Context, in SessionCloseArgs) (*tools.Result, error) {
				return withClient(ctx).close(ctx, in.Name, in.Save)
			}),
		tools.New("session_save", "Save a session's state file (its cookies and local storage) now. Reports counts only.",
			func(ctx context.Context, in SessionNameArgs) (*tools.Result, error) {
				return withClient(ctx).save(ctx, in.Name)
			}),
	)
	return reg
}

// sessionToolSchema gives the name arguments their pattern.
func sessionToolSchema(s *jsonschema.Schema) *jsonschema.Schema {
	for _, k := range []string{"name", "state"} {
		if p := s.Properties[k]; p != nil {
			p.Pattern = sessionNamePattern
		}
	}
	return s
}

func sessionToolAnnotations(name string) *mcp.ToolAnnotations {
	closed := false
	a := &mcp.ToolAnnotations{OpenWorldHint: &closed, ReadOnlyHint: name == "session_list"}
	if !a.ReadOnlyHint {
		a.DestructiveHint = &closed
	}
	return a
}

// ctlHandler is the MCP handler of a session tool.
func (s *Server) ctlHandler(name string) mcp.ToolHandler {
	return s.guarded(name, "", func(ctx context.Context, _ *mcp.CallToolRequest, cl *client, args json.RawMessage) *mcp.CallToolResult {
		// The call ends with its client, and after the call timeout.
		cctx, cancel := context.WithTimeout(context.WithValue(ctx, clientKey{}, cl), s.cfg.CallTimeout)
		defer cancel()
		go func() {
			select {
			case <-cl.quit.c:
				cancel()
			case <-cctx.Done():
			}
		}()
		box := &evictionBox{}
		out, err := s.ctl.Call(context.WithValue(cctx, evictionKey{}, box), name, args, s.ctl.Names()...)
		if err != nil {
			return errorResult(fmt.Sprintf("%s failed: %v", name, err))
		}
		r := tools.MCPResult(out)
		box.ev.report(r)
		return r
	})
}

// evictionKey carries, in session_open's context, the box its eviction
// report goes in.
type evictionKey struct{}

type evictionBox struct{ ev *eviction }

// open is session_open: it makes the session and opens its browser
// context, making room as a tool call does.
func (cl *client) open(ctx context.Context, in SessionOpenArgs) (*tools.Result, error) {
	s := cl.srv
	if err := checkName("session name", in.Name); err != nil {
		return nil, tools.Errorf("%v", err)
	}
	if in.Name == DefaultSession {
		return nil, tools.Errorf("%q is this connection's own session: it opens on the first browser tool call without a session argument", DefaultSession)
	}
	var state sandbox.StateFile
	if in.State != "" {
		if err := checkName("state name", in.State); err != nil {
			return nil, tools.Errorf("%v; it names a state file the server keeps, it is not a path", err)
		}
		if s.cfg.StateDir == "" {
			return nil, tools.Errorf("this server keeps no state files (it was started without a state directory, surf serve --state-dir), so a session cannot have one")
		}
		state = s.cfg.State
		dir := s.cfg.StateDir
		if cl.principal != "" {
			// Each principal's states are its own.
			dir = filepath.Join(dir, cl.principal)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return nil, tools.Errorf("making the principal's state directory: %v", err)
			}
		}
		state.Path = filepath.Join(dir, in.State+".json")
	}
	var r *policy.Restriction
	if len(in.Allow)+len(in.Deny) > 0 {
		r = &policy.Restriction{}
		for _, h := range in.Allow {
			hr, err := policy.ParseHostRule(h)
			if err != nil {
				return nil, tools.Errorf("allow %q: %v", h, err)
			}
			r.Allow = append(r.Allow, hr)
		}
		for _, h := range in.Deny {
			hr, err := policy.ParseHostRule(h)
			if err != nil {
				return nil, tools.Errorf("deny %q: %v", h, err)
			}
			r.Deny = append(r.Deny, hr)
		}
	}

	s.mu.Lock()
	if cl.gone {
		s.mu.Unlock()
		return nil, tools.Errorf("this MCP session has ended")
	}
	if cl.sessions[in.Name] != nil {
		s.mu.Unlock()
		return nil, tools.Errorf("this connection already has a session named %q: use it, or session_close it first", in.Name)
	}
	if n := len(cl.sessions); n >= maxNamedSessions {
		s.mu.Unlock()
		return nil, tools.Errorf("this connection has %d sessions, the most it may have; session_close one first", n)
	}
	for _, o := range cl.sessions {
		if state.Path != "" && o.state.Path == state.Path {
			s.mu.Unlock()
			return nil, tools.Errorf("the session %q of this connection already uses the state %q; two sessions saving one file would overwrite each other", o.name, in.State)
		}
	}
	se := cl.newSession(in.Name, state, r)
	se.busy++ // not idle, so not evicted, before its context is open
	cl.sessions[in.Name] = se
	s.mu.Unlock()

	b, ev, err := se.start(ctx)
	if err != nil {
		s.mu.Lock()
		if cl.sessions[in.Name] == se {
			delete(cl.sessions, in.Name)
		}
		s.mu.Unlock()
		se.log.Warn("session_open", "err", err)
		reportEviction(ctx, ev)
		return nil, tools.Errorf("opening session %q: %v", in.Name, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "opened session %q: an isolated browser context", in.Name)
	if r != nil {
		fmt.Fprintf(&sb, ", its policy narrowed (allow %v, deny %v)", in.Allow, in.Deny)
	}
	if state.Path != "" {
		sum := b.sess.StateLoaded()
		fmt.Fprintf(&sb, "; state %q: loaded %s and %s", in.State, plural(sum.Cookies, "cookie"), plural(sum.Origins, "local-storage origin"))
		if sum.DroppedCookies+sum.DroppedOrigins > 0 {
			sb.WriteString(leftOut(sum))
		}
	}
	fmt.Fprintf(&sb, ". Pass session: %q to the browser tools to act in it; start with visit_url.", in.Name)
	reportEviction(ctx, ev)
	return tools.Text(sb.String()), nil
}

// reportEviction hands an eviction to ctlHandler, which reports it.
func reportEviction(ctx context.Context, ev *eviction) {
	if box, ok := ctx.Value(evictionKey{}).(*evictionBox); ok {
		box.ev = ev
	}
}

// start opens the browser context of a session session_open made, with a
// turn at the browser as a tool call has; it ends the busy mark open set.
func (se *session) start(ctx context.Context) (*browser, *eviction, error) {
	defer se.idleLater()
	ctx, stop := se.callContext(ctx)
	defer stop()
	give, err := se.take(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer give()
	_, turn, refused := se.admit(ctx, "session_open")
	if refused != nil {
		return nil, nil, errors.New(refused.Content[0].(*mcp.TextContent).Text)
	}
	defer turn.Drop()
	b, _, ev, err := se.open(ctx)
	return b, ev, err
}

// list is session_list.
func (cl *client) list() *tools.Result {
	s := cl.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(cl.sessions))
	for n := range cl.sessions {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		switch {
		case a == DefaultSession:
			return -1
		case b == DefaultSession:
			return 1
		}
		return strings.Compare(a, b)
	})
	data := SessionList{Sessions: []SessionInfo{}, Open: s.open, Max: s.cfg.MaxSessions}
	var b strings.Builder
	fmt.Fprintf(&b, "%s in this connection; the server has %d of its %d browser contexts open\n", plural(len(names), "session"), s.open, s.cfg.MaxSessions)
	if len(names) == 0 {
		b.WriteString("(none yet: the default session opens on the first browser tool call; session_open opens a named one)\n")
	}
	for _, n := range names {
		se := cl.sessions[n]
		data.Sessions = append(data.Sessions, se.info())
		fmt.Fprintf(&b, "- %s", n)
		if n == DefaultSession {
			b.WriteString(" (default)")
		}
		if se.b != nil {
			b.WriteString(": open")
		} else {
			b.WriteString(": closed (its next call opens a new browser context)")
		}
		if se.page.url != "" {
			// The page's words, quoted and cut as in an observation.
			fmt.Fprintf(&b, ", at %s %s, %s", perception.Quote(se.page.url, 200), perception.Quote(se.page.title, 120), plural(se.page.tabs, "tab"))
		}
		if se.busy > 0 {
			b.WriteString(", busy")
		} else {
			fmt.Fprintf(&b, ", idle for %s", time.Since(se.used).Round(time.Second))
		}
		if se.state.Path != "" {
			fmt.Fprintf(&b, ", state file %s", filepath.Base(se.state.Path))
		} else {
			b.WriteString(", no state file")
		}
		fmt.Fprintf(&b, ", %s\n", plural(se.calls, "call"))
	}
	res := tools.Text(strings.TrimRight(b.String(), "\n"))
	res.Data = data
	return res
}

// info is the session in session_list's data. The caller holds s.mu.
func (se *session) info() SessionInfo {
	i := SessionInfo{Name: se.name, Default: se.name == DefaultSession, Open: se.b != nil, URL: se.page.url, Title: se.page.title, Tabs: se.page.tabs, Busy: se.busy > 0, Calls: se.calls}
	if !i.Busy {
		i.IdleSeconds = time.Since(se.used).Round(time.Millisecond).Seconds()
	}
	if se.state.Path != "" {
		i.StateFile = filepath.Base(se.state.Path)
	}
	return i
}

// lookup finds a session of the client for a session tool.
func (cl *client) lookup(name string) (*session, error) {
	if err := checkName("session name", name); err != nil {
		return nil, tools.Errorf("%v", err)
	}
	s := cl.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	se := cl.sessions[name]
	if se == nil {
		return nil, tools.Errorf("this connection has no session named %q (open: %s)", name, cl.names())
	}
	return se, nil
}

// close is session_close.
func (cl *client) close(ctx context.Context, name string, save bool) (*tools.Result, error) {
	se, err := cl.lookup(name)
	if err != nil {
		return nil, err
	}
	s := cl.srv
	if name == DefaultSession {
		// The connection's own session stays; its browser context closes.
		give, err := se.take(ctx)
		if err != nil {
			return nil, err
		}
		defer give()
		s.mu.Lock()
		b := se.detach("")
		s.mu.Unlock()
		if b == nil {
			return tools.Text("the default session has no browser context open"), nil
		}
		saved := se.discardOrSave(b, save)
		return tools.Textf("closed the default session's browser context%s; its next call opens a new one", saved), nil
	}
	s.mu.Lock()
	if cl.sessions[name] != se {
		s.mu.Unlock()
		return nil, tools.Errorf("the session %q was closed meanwhile", name)
	}
	delete(cl.sessions, name)
	se.closed = true
	se.quit.stop() // its calls end now
	s.mu.Unlock()
	// Wait for its calls to return before closing the context.
	give, err := se.take(ctx)
	if err != nil {
		return nil, err
	}
	defer give()
	s.mu.Lock()
	b := se.shut()
	s.mu.Unlock()
	saved := ""
	if b != nil {
		saved = se.discardOrSave(b, save)
	}
	se.log.Info("session closed")
	return tools.Textf("closed session %q%s; the other sessions go on", name, saved), nil
}

// take waits for the session's turn, marking it busy meanwhile (so that it
// is not evicted); the caller calls give once done.
func (se *session) take(ctx context.Context) (give func(), err error) {
	s := se.srv
	s.mu.Lock()
	se.busy++
	s.mu.Unlock()
	select {
	case se.turn <- struct{}{}:
		return func() { <-se.turn; se.idleLater() }, nil
	case <-ctx.Done():
		se.idleLater()
		return nil, fmt.Errorf("waiting for the session's running call: %w", ctx.Err())
	}
}

// discardOrSave closes a detached browser context, saving its state file
// unless save is false, and says what became of the file.
func (se *session) discardOrSave(b *browser, save bool) string {
	if se.state.Path == "" {
		se.finish(b)
		return ""
	}
	if !save {
		b.sess.DetachState()
	}
	if err := se.finish(b); err != nil {
		return fmt.Sprintf(" (closing it failed, and its state file %s may not be saved)", filepath.Base(se.state.Path))
	}
	if !save {
		return fmt.Sprintf(" without saving its state file %s", filepath.Base(se.state.Path))
	}
	return fmt.Sprintf(" and saved its state file %s", filepath.Base(se.state.Path))
}

// save is session_save.
func (cl *client) save(ctx context.Context, name string) (*tools.Result, error) {
	se, err := cl.lookup(name)
	if err != nil {
		return nil, err
	}
	if se.state.Path == "" {
		return nil, tools.Errorf("the session %q has no state file: open a session with session_open and a state name to keep one", name)
	}
	give, err := se.take(ctx)
	if err != nil {
		return nil, err
	}
	defer give()
	s := cl.srv
	s.mu.Lock()
	b := se.b
	s.mu.Unlock()
	if b == nil {
		return tools.Textf("the session %q has no browser context open: its state file %s was saved when the last one closed", name, filepath.Base(se.state.Path)), nil
	}
	sum, err := b.sess.SaveState(ctx)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		return nil, tools.Errorf("saving the state file %s: %v", filepath.Base(se.state.Path), err)
	}
	enc := ""
	if sum.Encrypted {
		enc = ", encrypted"
	}
	return tools.Textf("saved the state of session %q to %s%s: %s, %s", name, filepath.Base(se.state.Path), enc, plural(sum.Cookies, "cookie"), plural(sum.Origins, "local-storage origin")), nil
}
