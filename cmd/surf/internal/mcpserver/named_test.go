package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/journal"
)

// loginSite is a loopback site with a tiny cookie login: /login shows a
// form that posts user and pass and sets a session cookie; /account says
// "Signed in as USER" or "Signed out"; /slow answers once release is
// closed (or the request ends).
type loginSite struct {
	*fixture
	release chan struct{}

	mu     sync.Mutex
	tokens map[string]string // session cookie value -> user
	slow   int               // /slow requests received
}

func serveLoginSite(t *testing.T) *loginSite {
	t.Helper()
	ls := &loginSite{release: make(chan struct{}), tokens: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			page(w, "Log in", `<form method="post" action="/login">
<label>User <input name="user" type="text"></label>
<label>Password <input name="pass" type="password"></label>
<button type="submit">Sign in</button></form>`)
			return
		}
		r.ParseForm()
		user := r.Form.Get("user")
		if user == "" || r.Form.Get("pass") != "pw-"+user {
			page(w, "Log in failed", "<p>wrong user or password</p>")
			return
		}
		b := make([]byte, 16)
		rand.Read(b)
		tok := hex.EncodeToString(b)
		ls.mu.Lock()
		ls.tokens[tok] = user
		ls.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: tok, Path: "/", HttpOnly: true, Expires: time.Now().Add(time.Hour)})
		http.Redirect(w, r, "/account", http.StatusSeeOther)
	})
	mux.HandleFunc("/account", func(w http.ResponseWriter, r *http.Request) {
		user := ""
		if c, err := r.Cookie("sid"); err == nil {
			ls.mu.Lock()
			user = ls.tokens[c.Value]
			ls.mu.Unlock()
		}
		if user == "" {
			page(w, "Account", "<p>Signed out</p>")
			return
		}
		page(w, "Account", "<p>Signed in as "+html.EscapeString(user)+"</p>")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		ls.mu.Lock()
		ls.slow++
		ls.mu.Unlock()
		select {
		case <-ls.release:
		case <-r.Context().Done():
		}
		page(w, "Slow", "<p>at last</p>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	ls.fixture = &fixture{URL: srv.URL, Host: strings.TrimPrefix(srv.URL, "http://")}
	return ls
}

func (ls *loginSite) slowRequests() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.slow
}

// inSession adds the session argument to a call's arguments.
func inSession(name string, args map[string]any) map[string]any {
	out := map[string]any{"session": name}
	for k, v := range args {
		out[k] = v
	}
	return out
}

// logIn logs user in through the form, in a session of cs ("" for the
// default one), and returns the account page's observation.
func logIn(t *testing.T, cs *mcp.ClientSession, ls *loginSite, session, user string) string {
	t.Helper()
	in := func(args map[string]any) map[string]any {
		if session == "" {
			return args
		}
		return inSession(session, args)
	}
	obs := text(mustCall(t, cs, "visit_url", in(map[string]any{"url": ls.URL + "/login"})))
	mustCall(t, cs, "input_text", in(map[string]any{"input_field_id": elementID(t, obs, "textbox", "User"), "text_value": user, "press_enter": false}))
	mustCall(t, cs, "input_text", in(map[string]any{"input_field_id": elementID(t, obs, "textbox", "Password"), "text_value": "pw-" + user, "press_enter": false}))
	obs = text(mustCall(t, cs, "click", in(map[string]any{"target_id": elementID(t, obs, "button", "Sign in")})))
	if !strings.Contains(obs, "Signed in as "+user) {
		t.Fatalf("logging in %s did not reach the account page:\n%s", user, obs)
	}
	return obs
}

// account visits /account in a session and returns the observation.
func account(t *testing.T, cs *mcp.ClientSession, ls *loginSite, session string) string {
	t.Helper()
	args := map[string]any{"url": ls.URL + "/account"}
	if session != "" {
		args = inSession(session, args)
	}
	return text(mustCall(t, cs, "visit_url", args))
}

// TestNamedSessions: one connection opens two named sessions, logs into
// one, and the other stays logged out; both are listed; closing one
// leaves the other working, and a call to the closed one errs clearly.
func TestNamedSessions(t *testing.T) {
	ls := serveLoginSite(t)
	s := newServer(t, ls.fixture, nil)
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)

	// The browser tools take a session argument; the session tools are
	// listed.
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	listedTools := map[string]*mcp.Tool{}
	for _, tool := range lt.Tools {
		listedTools[tool.Name] = tool
	}
	for _, n := range []string{"session_open", "session_list", "session_close", "session_save"} {
		if listedTools[n] == nil {
			t.Errorf("%s is not listed", n)
		}
	}
	for _, n := range []string{"visit_url", "click", WebsurferTool} {
		schema, _ := json.Marshal(listedTools[n].InputSchema)
		if !strings.Contains(string(schema), `"session":{`) || !strings.Contains(string(schema), sessionNamePattern) {
			t.Errorf("%s's schema has no session argument: %s", n, schema)
		}
	}

	for _, n := range []string{"alice", "bob"} {
		res := mustCall(t, cs, "session_open", map[string]any{"name": n})
		if !strings.Contains(text(res), fmt.Sprintf("opened session %q", n)) {
			t.Errorf("session_open %s: %s", n, text(res))
		}
	}
	if n := s.Sessions(); n != 2 {
		t.Errorf("%d browser contexts after opening two sessions, want 2", n)
	}
	logIn(t, cs, ls, "alice", "alice")
	if got := account(t, cs, ls, "bob"); !strings.Contains(got, "Signed out") {
		t.Errorf("bob sees alice's login:\n%s", got)
	}
	if got := account(t, cs, ls, ""); !strings.Contains(got, "Signed out") {
		t.Errorf("the default session sees alice's login:\n%s", got)
	}
	if got := account(t, cs, ls, "alice"); !strings.Contains(got, "Signed in as alice") {
		t.Errorf("alice is not signed in any more:\n%s", got)
	}

	list := text(mustCall(t, cs, "session_list", nil))
	for _, want := range []string{
		"3 sessions in this connection",
		"- default (default): open, at \"" + ls.URL + "/account\"",
		"- alice: open, at \"" + ls.URL + "/account\" \"Account\", 1 tab, idle for",
		"- bob: open",
		"no state file, 5 calls\n- bob", // alice: the login's four calls and a visit
	} {
		if !strings.Contains(list, want) {
			t.Errorf("session_list lacks %q:\n%s", want, list)
		}
	}
	if strings.Index(list, "- default") > strings.Index(list, "- alice") || strings.Index(list, "- alice") > strings.Index(list, "- bob") {
		t.Errorf("session_list is not in order (default first, then by name):\n%s", list)
	}

	res := mustCall(t, cs, "session_close", map[string]any{"name": "bob"})
	if !strings.Contains(text(res), `closed session "bob"`) {
		t.Errorf("session_close bob: %s", text(res))
	}
	if n := s.Sessions(); n != 2 {
		t.Errorf("%d browser contexts after closing bob, want 2", n)
	}
	if got := account(t, cs, ls, "alice"); !strings.Contains(got, "Signed in as alice") || strings.Contains(got, "note:") {
		t.Errorf("alice after bob closed:\n%s", got)
	}
	res = call(t, cs, "visit_url", inSession("bob", map[string]any{"url": ls.URL + "/account"}))
	if got := text(res); !res.IsError || !strings.Contains(got, `no session named "bob"`) || !strings.Contains(got, "open: alice, default") || !strings.Contains(got, "session_open") {
		t.Errorf("a call to the closed session: IsError=%v %q", res.IsError, got)
	}
	if list := text(mustCall(t, cs, "session_list", nil)); strings.Contains(list, "bob") {
		t.Errorf("session_list still lists bob:\n%s", list)
	}
	// The name is free again: a new bob starts logged out.
	mustCall(t, cs, "session_open", map[string]any{"name": "bob"})
	if got := account(t, cs, ls, "bob"); !strings.Contains(got, "Signed out") {
		t.Errorf("the new bob:\n%s", got)
	}
}

// TestNamedSessionsRunConcurrently: a call blocked in one named session
// does not hold up another session of the same connection.
func TestNamedSessionsRunConcurrently(t *testing.T) {
	ls := serveLoginSite(t)
	s := newServer(t, ls.fixture, func(c *Config) { c.MaxActive = 4 })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "session_open", map[string]any{"name": "slow"})
	mustCall(t, cs, "session_open", map[string]any{"name": "quick"})
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "visit_url", Arguments: inSession("slow", map[string]any{"url": ls.URL + "/slow"})})
		if err != nil {
			res = errorResult(err.Error())
		}
		done <- res
	}()
	waitFor(t, "the slow page to be requested", time.Minute, func() bool { return ls.slowRequests() == 1 })
	if got := account(t, cs, ls, "quick"); !strings.Contains(got, "Signed out") {
		t.Errorf("the quick session:\n%s", got)
	}
	select {
	case res := <-done:
		t.Fatalf("the slow call returned before the page was released: %s", text(res))
	default:
	}
	close(ls.release)
	if res := <-done; res.IsError || !strings.Contains(text(res), "at last") {
		t.Errorf("the slow call: IsError=%v %s", res.IsError, text(res))
	}
}

// TestSessionBadInput: bad names, an unknown session, a second open of one
// name, a state that is a path, state without a state directory: each is
// a clear error result, and nothing else changes.
func TestSessionBadInput(t *testing.T) {
	ls := serveLoginSite(t)
	dir := t.TempDir()
	s := newServer(t, ls.fixture, func(c *Config) { c.StateDir = dir })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "session_open", map[string]any{"name": "alice"})

	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"visit_url", inSession("nobody", map[string]any{"url": ls.URL + "/account"}), `visit_url did not run: this connection has no session named "nobody" (open: alice); session_open makes one`},
		{"visit_url", inSession("../x", map[string]any{"url": ls.URL + "/account"}), `session name "../x" is not valid`},
		{"visit_url", inSession("", map[string]any{"url": ls.URL + "/account"}), `session name "" is not valid`},
		{"visit_url", map[string]any{"session": 7, "url": ls.URL + "/account"}, "the session argument must be a string"},
		{"session_open", map[string]any{"name": "alice"}, `already has a session named "alice"`},
		{"session_open", map[string]any{"name": "a b"}, `session name "a b" is not valid`},
		{"session_open", map[string]any{"name": "default"}, `"default" is this connection's own session`},
		{"session_open", map[string]any{"name": "eve", "state": "../evil"}, `state name "../evil" is not valid`},
		{"session_open", map[string]any{"name": "eve", "state": "/etc/passwd"}, `state name "/etc/passwd" is not valid`},
		{"session_open", map[string]any{"name": "eve", "allow": []string{"http://["}}, `allow "http://["`},
		{"session_close", map[string]any{"name": "nobody"}, `no session named "nobody" (open: alice)`},
		{"session_save", map[string]any{"name": "alice"}, `the session "alice" has no state file`},
	} {
		res := call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s(%v): IsError=%v %q, want an error with %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
	if n := s.Sessions(); n != 1 {
		t.Errorf("%d browser contexts, want alice's only", n)
	}
	list := text(mustCall(t, cs, "session_list", nil))
	if !strings.Contains(list, "1 session in this connection") || strings.Contains(list, "eve") {
		t.Errorf("session_list after the bad calls:\n%s", list)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the state directory has %d files, want none", len(entries))
	}

	// Without a state directory, a session cannot have a state file.
	s2 := newServer(t, ls.fixture, nil)
	cs2 := connect(t, serveHTTP(t, s2, HTTPOptions{}), nil, nil)
	res := call(t, cs2, "session_open", map[string]any{"name": "eve", "state": "eve"})
	if !res.IsError || !strings.Contains(text(res), "keeps no state files") {
		t.Errorf("a state without a state directory: IsError=%v %q", res.IsError, text(res))
	}
	if n := s2.Sessions(); n != 0 {
		t.Errorf("%d browser contexts, want none", n)
	}
}

// TestSessionPolicyNarrowed: session_open's allow and deny narrow the
// server's policy for that session only, and cannot widen it.
func TestSessionPolicyNarrowed(t *testing.T) {
	ls := serveLoginSite(t)
	s := newServer(t, ls.fixture, nil)
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "session_open", map[string]any{"name": "narrow", "deny": []string{ls.Host}})
	mustCall(t, cs, "session_open", map[string]any{"name": "elsewhere", "allow": []string{"example.com"}})
	// Allowing a host the server's policy denies does not widen it.
	mustCall(t, cs, "session_open", map[string]any{"name": "wide", "allow": []string{ls.Host, "127.0.0.2"}})
	for _, n := range []string{"narrow", "elsewhere"} {
		res := call(t, cs, "visit_url", inSession(n, map[string]any{"url": ls.URL + "/account"}))
		if !res.IsError || !strings.Contains(text(res), "denied") {
			t.Errorf("visiting the site in %s: IsError=%v %q, want a denial", n, res.IsError, text(res))
		}
	}
	if got := account(t, cs, ls, "wide"); !strings.Contains(got, "Signed out") {
		t.Errorf("the wide session cannot reach the site:\n%s", got)
	}
	res := call(t, cs, "visit_url", inSession("wide", map[string]any{"url": strings.Replace(ls.URL, "127.0.0.1", "127.0.0.2", 1) + "/account"}))
	if !res.IsError || !strings.Contains(text(res), "denied") {
		t.Errorf("the wide session reached a host the server denies: IsError=%v %q", res.IsError, text(res))
	}
	if got := account(t, cs, ls, ""); !strings.Contains(got, "Signed out") {
		t.Errorf("the default session is narrowed too:\n%s", got)
	}
}

// rawClient is an MCP client over bare HTTP requests: it initializes,
// calls tools, and never ends its session (no DELETE, no stream).
type rawClient struct {
	t        *testing.T
	endpoint string
	id       string // the Mcp-Session-Id
	version  string
	next     int
}

func rawConnect(t *testing.T, endpoint string) *rawClient {
	t.Helper()
	c := &rawClient{t: t, endpoint: endpoint}
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	c.post("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}, &init)
	c.version = init.ProtocolVersion
	c.post("notifications/initialized", nil, nil)
	return c
}

// callTool calls a tool; it returns the result's text and _meta.
func (c *rawClient) callTool(name string, args map[string]any) (isError bool, text string, meta map[string]any) {
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		Meta map[string]any `json:"_meta"`
	}
	c.post("tools/call", map[string]any{"name": name, "arguments": args}, &res)
	var b strings.Builder
	for _, ct := range res.Content {
		b.WriteString(ct.Text)
	}
	return res.IsError, b.String(), res.Meta
}

// post sends a JSON-RPC request (a notification when out is nil) and
// decodes its result into out.
func (c *rawClient) post(method string, params any, out any) {
	t := c.t
	t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if out != nil {
		c.next++
		msg["id"] = c.next
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest(http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if c.id != "" {
		req.Header.Set(sessionIDHeader, c.id)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: HTTP %s: %s", method, resp.Status, b)
	}
	if id := resp.Header.Get(sessionIDHeader); id != "" {
		c.id = id
	}
	if out == nil {
		return
	}
	// The answer is JSON or an event stream whose data is the response.
	var raw []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(d, `"id"`) {
				raw = []byte(d)
				break
			}
		}
	} else {
		raw, _ = io.ReadAll(resp.Body)
	}
	var rpc struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &rpc); err != nil {
		t.Fatalf("%s: bad response %q: %v", method, raw, err)
	}
	if rpc.Error != nil {
		t.Fatalf("%s: %s", method, rpc.Error.Message)
	}
	if err := json.Unmarshal(rpc.Result, out); err != nil {
		t.Fatalf("%s: bad result %s: %v", method, rpc.Result, err)
	}
}

// TestShortLivedClientsNeverRefused: 40 HTTP clients in a row, each
// initializing, visiting a page and going away without ending its
// session, all get served with the default cap; from the one past the
// cap on, each result reports the eviction that made room. Every fourth
// client is an SDK client that kept an event stream open (and is released
// as a gone client); the others send bare requests (and are evicted as
// the least recently used idle sessions).
func TestShortLivedClientsNeverRefused(t *testing.T) {
	ls := serveLoginSite(t)
	s := newServer(t, ls.fixture, func(c *Config) { c.DisconnectGrace = time.Hour })
	endpoint := serveHTTP(t, s, HTTPOptions{})
	const clients = 40
	url := ls.URL + "/account"
	kinds := map[any]int{}
	goneHolding := 0 // SDK clients gone with their context open
	for i := range clients {
		var isError bool
		var got string
		var meta map[string]any
		gone := goneHolding // when this client's call made room
		if i%4 == 3 {
			goneHolding++ // once it has gone, below
			cs := connect(t, endpoint, nil, noDelete())
			res := call(t, cs, "visit_url", map[string]any{"url": url})
			isError, got, meta = res.IsError, text(res), res.Meta
			id := cs.ID()
			cs.Close()

			// Wait until the server has seen its stream close, so that the
			// next client finds it gone.
			waitFor(t, "the server to see the client go", time.Minute, func() bool {
				s.conns.mu.Lock()
				defer s.conns.mu.Unlock()
				st := s.conns.byID[id]
				return st != nil && st.open == 0 && !st.goneAt.IsZero()
			})
		} else {
			isError, got, meta = rawConnect(t, endpoint).callTool("visit_url", map[string]any{"url": url})
		}
		if isError || !strings.Contains(got, "Signed out") {
			t.Fatalf("client %d was not served: %s", i, got)
		}
		evicted, _ := meta[MetaEvicted].(map[string]any)
		if i < DefaultMaxSessions {
			if evicted != nil || strings.Contains(got, "cap of") {
				t.Errorf("client %d, under the cap, reports an eviction: %v\n%s", i, meta, got)
			}
			continue
		}
		if !strings.Contains(got, fmt.Sprintf("note: the server's cap of %d browser sessions was reached: ", DefaultMaxSessions)) || evicted == nil {
			t.Errorf("client %d does not report the eviction: _meta %v\n%s", i, meta, got)
			continue
		}
		if meta[MetaCap] != float64(DefaultMaxSessions) || meta[MetaOpen] != float64(DefaultMaxSessions) {
			t.Errorf("client %d: _meta %v, want cap and open %d", i, meta, DefaultMaxSessions)
		}
		kinds[evicted["client"]]++
		// Gone clients go first, then the least recently used idle one.
		if want := "other"; gone > 0 && evicted["client"] != "gone" {
			t.Errorf("client %d, with %d gone clients holding a context: evicted %v, want a gone client's session released", i, gone, evicted)
		} else if gone == 0 && evicted["client"] != want {
			t.Errorf("client %d, with no gone client holding a context: evicted %v, want the least recently used idle session", i, evicted)
		}
		if evicted["client"] == "gone" {
			goneHolding--
		}
		switch evicted["client"] {
		case "other":
			if !strings.Contains(got, `closed the idle session "default" of another client, idle for`) || evicted["session"] != DefaultSession {
				t.Errorf("client %d: %v\n%s", i, evicted, got)
			}
		case "gone":
			if !strings.Contains(got, "released the 1 session of a client that went away") || evicted["sessions"] != float64(1) {
				t.Errorf("client %d: %v\n%s", i, evicted, got)
			}
		default:
			t.Errorf("client %d: evicted %v", i, evicted)
		}
	}
	if n := s.Sessions(); n != DefaultMaxSessions {
		t.Errorf("%d browser sessions open, want the cap %d", n, DefaultMaxSessions)
	}
	t.Logf("evictions by kind: %v", kinds)
}

// TestEvictedSessionKeepsState: a named session with a state file, logged
// in, is evicted for another client's session (its state saved); its next
// call gets a fresh context loaded from the file, still logged in, and is
// told so.
func TestEvictedSessionKeepsState(t *testing.T) {
	ls := serveLoginSite(t)
	dir := t.TempDir()
	s := newServer(t, ls.fixture, func(c *Config) { c.MaxSessions = 1; c.StateDir = dir })
	endpoint := serveHTTP(t, s, HTTPOptions{})
	a := connect(t, endpoint, nil, nil)
	res := mustCall(t, a, "session_open", map[string]any{"name": "alice", "state": "alice"})
	if !strings.Contains(text(res), `state "alice": loaded 0 cookies`) {
		t.Errorf("session_open with a new state: %s", text(res))
	}
	logIn(t, a, ls, "alice", "alice")
	res = mustCall(t, a, "session_save", map[string]any{"name": "alice"})
	if !strings.Contains(text(res), `saved the state of session "alice" to alice.json: 1 cookie, 0 local-storage origins`) {
		t.Errorf("session_save: %s", text(res))
	}

	b := connect(t, endpoint, nil, nil)
	res = mustCall(t, b, "visit_url", map[string]any{"url": ls.URL + "/account"})
	got := text(res)
	if !strings.Contains(got, `note: the server's cap of 1 browser sessions was reached: closed the idle session "alice" of another client, idle for`) || !strings.Contains(got, "its state file was saved") || !strings.Contains(got, "Signed out") {
		t.Errorf("the call that evicted alice:\n%s", got)
	}
	if ev, _ := res.Meta[MetaEvicted].(map[string]any); ev == nil || ev["session"] != "alice" || ev["state_saved"] != true || res.Meta[MetaCap] != float64(1) || res.Meta[MetaOpen] != float64(1) {
		t.Errorf("_meta of the evicting call: %v", res.Meta)
	}
	if info, err := os.Stat(dir + "/alice.json"); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("alice's state file: %v %v", info, err)
	}

	got = account(t, a, ls, "alice")
	for _, want := range []string{
		"note: this session's browser context was closed to make room for another",
		"loaded from its state file (its state was saved to the file as the old one closed)",
		"loaded 1 cookie and 0 local-storage origins from its state file",
		"Signed in as alice",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("alice's call after the eviction lacks %q:\n%s", want, got)
		}
	}
	list := text(mustCall(t, a, "session_list", nil))
	if !strings.Contains(list, "state file alice.json") {
		t.Errorf("session_list:\n%s", list)
	}
	closed := text(mustCall(t, a, "session_close", map[string]any{"name": "alice"}))
	if !strings.Contains(closed, `closed session "alice" and saved its state file alice.json`) {
		t.Errorf("session_close: %s", closed)
	}
	// No result carries the session cookie.
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for tok := range ls.tokens {
		for _, out := range []string{got, list, closed} {
			if strings.Contains(out, tok) {
				t.Errorf("a result carries the session cookie's value:\n%s", out)
			}
		}
	}
}

// TestSessionCloseWithoutSave: session_close saves a session's state file
// by default, and leaves it unwritten with save false.
func TestSessionCloseWithoutSave(t *testing.T) {
	ls := serveLoginSite(t)
	dir := t.TempDir()
	s := newServer(t, ls.fixture, func(c *Config) { c.StateDir = dir })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	for _, n := range []string{"kept", "dropped"} {
		mustCall(t, cs, "session_open", map[string]any{"name": n, "state": n})
		logIn(t, cs, ls, n, n)
	}
	if got := text(mustCall(t, cs, "session_close", map[string]any{"name": "kept"})); !strings.Contains(got, "and saved its state file kept.json") {
		t.Errorf("session_close kept: %s", got)
	}
	if got := text(mustCall(t, cs, "session_close", map[string]any{"name": "dropped", "save": false})); !strings.Contains(got, "without saving its state file dropped.json") {
		t.Errorf("session_close dropped: %s", got)
	}
	if _, err := os.Stat(dir + "/kept.json"); err != nil {
		t.Errorf("the state file of the session closed with save: %v", err)
	}
	if _, err := os.Stat(dir + "/dropped.json"); !os.IsNotExist(err) {
		t.Errorf("the session closed without save wrote its state file: %v", err)
	}
	// Reopened, kept is still signed in and dropped is not.
	for n, want := range map[string]string{"kept": "Signed in as kept", "dropped": "Signed out"} {
		mustCall(t, cs, "session_open", map[string]any{"name": n, "state": n})
		if got := account(t, cs, ls, n); !strings.Contains(got, want) {
			t.Errorf("%s reopened: want %q:\n%s", n, want, got)
		}
	}
}

// TestMaxSessions: when every browser context is busy, a call that
// needs another is refused, saying so; once one is idle it is evicted
// instead.
func TestMaxSessions(t *testing.T) {
	ls := serveLoginSite(t)
	s := newServer(t, ls.fixture, func(c *Config) { c.MaxSessions = 2; c.MaxActive = 3 })
	endpoint := serveHTTP(t, s, HTTPOptions{})
	a, b, c := connect(t, endpoint, nil, nil), connect(t, endpoint, nil, nil), connect(t, endpoint, nil, nil)
	var wg sync.WaitGroup
	for _, cs := range []*mcp.ClientSession{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": ls.URL + "/slow"}})
		}()
	}
	waitFor(t, "both slow pages to be requested", time.Minute, func() bool { return ls.slowRequests() == 2 })
	res := call(t, c, "visit_url", map[string]any{"url": ls.URL + "/account"})
	if !res.IsError || !strings.Contains(text(res), "too many browser sessions") || !strings.Contains(text(res), "all are busy") || !strings.Contains(text(res), "--max-sessions") {
		t.Errorf("a third session while two are busy: IsError=%v %q, want the limit's error", res.IsError, text(res))
	}
	close(ls.release)
	wg.Wait()
	res = mustCall(t, c, "visit_url", map[string]any{"url": ls.URL + "/account"})
	if !strings.Contains(text(res), "closed the idle session") {
		t.Errorf("the third session once the others are idle:\n%s", text(res))
	}
	if n := s.Sessions(); n != 2 {
		t.Errorf("%d sessions, want 2", n)
	}
}

// TestWebsurferToolInNamedSession: the websurfer tool runs in the named
// session it is given, and the tools go on there; the default session is
// never opened.
func TestWebsurferToolInNamedSession(t *testing.T) {
	jdir := t.TempDir()
	// An earlier server's run is there (a server started again with the
	// same directory): the new run must not replace it.
	for id := range 10 {
		d := filepath.Join(jdir, fmt.Sprintf("client-%d", id), "agent")
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "run-1.jsonl"), []byte("earlier\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, site, fake := agentServer(t, "harbour.yaml", func(c *Config) { c.JournalDir = jdir })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "session_open", map[string]any{"name": "agent"})
	res := mustCall(t, cs, WebsurferTool, inSession("agent", map[string]any{
		"instruction": "When does the Harbour Branch open on Saturdays?",
		"start_url":   site.URL + "/",
	}))
	if got := text(res); !strings.Contains(got, "answer: On Saturdays from 10:00 to 14:00.") {
		t.Errorf("the run in the named session:\n%s", got)
	}
	fake.Check(t)
	// The run's journal is the named session's own.
	runs, _ := filepath.Glob(filepath.Join(jdir, "client-*", "agent", "run-2.jsonl"))
	if len(runs) != 1 {
		all, _ := filepath.Glob(filepath.Join(jdir, "client-*", "agent", "run-*.jsonl"))
		t.Fatalf("journals of the named session: %v, want one run-2 beside the earlier server's run-1", all)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(runs[0]), "run-1.jsonl")); err != nil || string(b) != "earlier\n" {
		t.Errorf("the earlier server's journal was changed: %q, %v", b, err)
	}
	if !strings.Contains(text(res), "journal: "+runs[0]) {
		t.Errorf("the result does not name its journal %s:\n%s", runs[0], text(res))
	}
	entries, err := journal.Read(runs[0])
	if err != nil || len(entries) < 2 || entries[len(entries)-1].EndReason != journal.EndAnswered {
		t.Errorf("the named session's journal: %d entries, %v", len(entries), err)
	}
	if others, _ := filepath.Glob(filepath.Join(jdir, "client-*", "default")); len(others) != 0 {
		t.Errorf("the default session got a journal it did not run: %v", others)
	}
	if got := text(mustCall(t, cs, "read_page", inSession("agent", map[string]any{}))); !strings.Contains(got, "Saturday") {
		t.Errorf("read_page in the named session after the run:\n%s", got)
	}
	if list := text(mustCall(t, cs, "session_list", nil)); strings.Contains(list, "default") || !strings.Contains(list, `- agent: open, at "`+site.URL+"/branch") {
		t.Errorf("session_list after the run:\n%s", list)
	}
	if n := s.Sessions(); n != 1 {
		t.Errorf("%d browser contexts, want the named session's only", n)
	}
}

// TestSessionListQuotesThePage: session_list gives the page's URL and
// title quoted and cut, as an observation does: page text never reads as
// surf's own.
func TestSessionListQuotesThePage(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.Image = ImageNone })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	long := strings.Repeat("x", 300)
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/cookie?set=" + long})
	list := text(mustCall(t, cs, "session_list", nil))
	if !strings.Contains(list, `, at "`+f.URL+"/cookie?set=") {
		t.Errorf("session_list does not quote the URL:\n%s", list)
	}
	if strings.Contains(list, strings.Repeat("x", 200)) {
		t.Errorf("session_list gives the page's title or URL uncut:\n%s", list)
	}
}
