package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/live"
)

// heldServer is a server with a live view, a client with a page open, and
// that client's session in the live view.
func heldServer(t *testing.T, edit func(*Config)) (*fixture, *mcp.ClientSession, *progressLog, *live.Hub, *live.Session) {
	t.Helper()
	f := serveFixture(t)
	hub := live.New(live.Config{})
	t.Cleanup(hub.Close)
	s := newServer(t, f, func(c *Config) {
		c.Live = hub
		c.Image = ImageNone
		if edit != nil {
			edit(c)
		}
	})
	log := &progressLog{}
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{ProgressNotificationHandler: log.handler}, nil)
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	list := hub.List()
	if len(list) != 1 {
		t.Fatalf("the live view lists %d sessions, want 1", len(list))
	}
	ls, ok := hub.Get(list[0].ID)
	if !ok {
		t.Fatal("the session is not in the live view")
	}
	return f, cs, log, hub, ls
}

// callHeld calls a tool with a progress token in the background.
func callHeld(cs *mcp.ClientSession, token any, name string, args any) <-chan *mcp.CallToolResult {
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		p.SetProgressToken(token)
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			res = errorResult("the call failed: " + err.Error())
		}
		done <- res
	}()
	return done
}

// TestTakeoverHoldsCalls: while a person holds a session in the live
// view, a direct call on it waits (with a progress notification) and does
// not move the page; after the hand-back it runs, and carries the
// hand-back note.
func TestTakeoverHoldsCalls(t *testing.T) {
	f, cs, log, hub, ls := heldServer(t, nil)
	if err := ls.TakeOver("tester"); err != nil {
		t.Fatal(err)
	}
	done := callHeld(cs, "held-1", "visit_url", map[string]any{"url": f.URL + "/about.html"})
	awaitProgress(t, log, "held-1", "a person has taken this session over")
	select {
	case res := <-done:
		t.Fatalf("visit_url ran during the takeover: %s", text(res))
	default:
	}
	if u := hub.List()[0].URL; strings.HasSuffix(u, "/about.html") {
		t.Fatalf("the page moved under the person's hands: %s", u)
	}
	if err := ls.HandBack(""); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.IsError || !strings.Contains(text(res), "about.html") {
		t.Fatalf("visit_url after the hand-back: %s", text(res))
	}
	if !strings.Contains(text(res), "note: The user took over the browser") {
		t.Errorf("the result does not carry the hand-back note: %s", text(res))
	}
}

// TestTakeoverRefusesCallsPastTimeout: a call kept waiting by a person
// longer than its timeout is refused, saying why, and has done nothing.
func TestTakeoverRefusesCallsPastTimeout(t *testing.T) {
	f, cs, _, hub, ls := heldServer(t, func(c *Config) { c.CallTimeout = 10 * time.Second })
	if err := ls.TakeOver("tester"); err != nil {
		t.Fatal(err)
	}
	res := <-callHeld(cs, "held-2", "visit_url", map[string]any{"url": f.URL + "/about.html"})
	if !res.IsError || !strings.Contains(text(res), "did not run: a person has held this session") {
		t.Fatalf("visit_url while a person holds the session past its timeout: IsError=%v %s", res.IsError, text(res))
	}
	if u := hub.List()[0].URL; strings.HasSuffix(u, "/about.html") {
		t.Fatalf("the page moved: %s", u)
	}
}

// TestSingleCallsAreSteps: a session driven by single MCP tool calls
// (no run) has them in the live view's timeline, numbered in order, each
// with the picture of the page it left, labelled "after"; a failed call is
// a failed step. A message left at hand-back reaches the next call as the
// person's words.
func TestSingleCallsAreSteps(t *testing.T) {
	f, cs, _, _, ls := heldServer(t, func(c *Config) { c.Image = ImageSOM })
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/about.html"})
	res := call(t, cs, "click", map[string]any{"target_id": 9999})
	if !res.IsError {
		t.Fatalf("a click on a missing element: %s", text(res))
	}
	steps := ls.Snapshot().Steps
	if len(steps) != 3 {
		t.Fatalf("the timeline has %d steps after three calls: %+v", len(steps), steps)
	}
	for i, st := range steps {
		if st.N != i+1 {
			t.Errorf("step %d is numbered %d", i+1, st.N)
		}
	}
	if st := steps[1]; st.Tool != "visit_url" || !strings.HasSuffix(st.Target, "/about.html") || !st.Image || st.Picture != "after" || st.IsError {
		t.Errorf("the visit's step: %+v", st)
	}
	if _, _, err := ls.StepImage(2); err != nil {
		t.Errorf("the visit's picture: %v", err)
	}
	if st := steps[2]; st.Tool != "click" || !st.IsError || st.Result == "" {
		t.Errorf("the failed click's step: %+v", st)
	}

	if err := ls.TakeOver("tester"); err != nil {
		t.Fatal(err)
	}
	if err := ls.HandBack("I logged in; the code was 1234"); err != nil {
		t.Fatal(err)
	}
	res = mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	if !strings.Contains(text(res), `The user's message to you, in their words: "I logged in; the code was 1234"`) {
		t.Errorf("the next call does not carry the person's message: %s", text(res))
	}
}
