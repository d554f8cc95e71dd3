package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu   sync.Mutex
	msgs []*mcp.ProgressNotificationParams
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, req.Params)
}

func (p *progressLog) take() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.msgs
	p.msgs = nil
	return out
}

// callWithToken calls a tool with a progress token.
func callWithToken(t *testing.T, cs *mcp.ClientSession, token any, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	p.SetProgressToken(token)
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("%s returned an error result: %s", name, text(res))
	}
	return res
}

// checkProgress checks notifications: all with token, progress rising,
// and, in order, a message containing each of want.
func checkProgress(t *testing.T, got []*mcp.ProgressNotificationParams, token any, want ...string) {
	t.Helper()
	var msgs []string
	last := 0.0
	for _, p := range got {
		msgs = append(msgs, p.Message)
		if p.ProgressToken != token {
			t.Errorf("a notification has the token %v, want %v", p.ProgressToken, token)
		}
		if p.Progress <= last {
			t.Errorf("progress %v after %v: it must rise", p.Progress, last)
		}
		last = p.Progress
	}
	i := 0
	for _, m := range msgs {
		if i < len(want) && strings.Contains(m, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("no progress message with %q (in order) among:\n%s", want[i], strings.Join(msgs, "\n"))
	}
}

// TestWebsurferProgress: a websurfer call with a progress token gets
// progress notifications for each step (asking the model, the action),
// and the page loads within them; a call without a token gets none. An
// action call with a token gets its own (the page loading).
func TestWebsurferProgress(t *testing.T) {
	s, site, fake := agentServer(t, "harbour.yaml")
	log := &progressLog{}
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{ProgressNotificationHandler: log.handler}, nil)
	callWithToken(t, cs, "run-1", WebsurferTool, map[string]any{
		"instruction": "When does the Harbour Branch open on Saturdays?",
		"start_url":   site.URL + "/",
	})
	fake.Check(t)
	checkProgress(t, log.take(), "run-1",
		"loading "+site.URL+"/",
		"step 1: asking the model",
		"step 1: input_text 4",
		"step 2: asking the model",
		"step 2: click 4",
		"step 2: waiting for the page to settle",
		"step 3: asking the model",
		"step 3: stop_action",
	)

	// Without a token, no notification. (Those of a call come on its own
	// stream, before its result.)
	mustCall(t, cs, "visit_url", map[string]any{"url": site.URL + "/"})
	if got := log.take(); len(got) != 0 {
		t.Errorf("a call without a progress token got %d progress notifications", len(got))
	}
	callWithToken(t, cs, "visit-2", "visit_url", map[string]any{"url": site.URL + "/branch"})
	checkProgress(t, log.take(), "visit-2", "loading "+site.URL+"/branch", "waiting for "+site.URL+"/branch to load", "reading the page")
}
