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

// awaitProgress waits until the notifications received hold a message
// containing each of want, in order (the client hands notifications to
// its handler on their own, so the last may come after the result), and
// checks them: every one with token, progress rising.
func awaitProgress(t *testing.T, log *progressLog, token any, want ...string) {
	t.Helper()
	var got []*mcp.ProgressNotificationParams
	missing := func() string {
		log.mu.Lock()
		got = append([]*mcp.ProgressNotificationParams(nil), log.msgs...)
		log.mu.Unlock()
		i := 0
		for _, p := range got {
			if i < len(want) && strings.Contains(p.Message, want[i]) {
				i++
			}
		}
		if i < len(want) {
			return want[i]
		}
		return ""
	}
	deadline := time.Now().Add(time.Minute)
	for missing() != "" && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	var msgs []string
	for _, p := range got {
		msgs = append(msgs, p.Message)
	}
	if m := missing(); m != "" {
		t.Errorf("no progress message with %q (in order) among:\n%s", m, strings.Join(msgs, "\n"))
	}
	last := 0.0
	for _, p := range got {
		if p.ProgressToken != token {
			t.Errorf("a notification has the token %v, want %v: %q", p.ProgressToken, token, p.Message)
		}
		if p.Progress <= last {
			t.Errorf("progress %v after %v: it must rise", p.Progress, last)
		}
		last = p.Progress
	}
	log.take()
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
	awaitProgress(t, log, "run-1",
		"loading "+site.URL+"/",
		"step 1: asking the model",
		"step 1: input_text 4",
		"step 2: asking the model",
		"step 2: click 4",
		"step 2: waiting for the page to settle",
		"step 3: asking the model",
		"step 3: stop_action",
	)

	// A call without a token gets none: the notifications that come are
	// all the next call's, with its token.
	mustCall(t, cs, "visit_url", map[string]any{"url": site.URL + "/"})
	callWithToken(t, cs, "visit-2", "visit_url", map[string]any{"url": site.URL + "/branch"})
	awaitProgress(t, log, "visit-2", "loading "+site.URL+"/branch", "waiting for "+site.URL+"/branch to load", "reading the page")
}
