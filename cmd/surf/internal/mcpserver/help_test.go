package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRequestHelpByElicitation: without a live view, the websurfer tool's
// request_help asks the client's user through elicitation, and their
// answer reaches the model; a client that cannot be asked is not offered
// the tool.
func TestRequestHelpByElicitation(t *testing.T) {
	s, site, fake := agentServer(t, "help.yaml")
	var mu sync.Mutex
	var asked []string
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{helpDone: true, helpNote: " the code is 4711 "}}, nil
		},
	}, nil)
	res := mustCall(t, cs, WebsurferTool, map[string]any{"instruction": "Log in.", "start_url": site.URL + "/"})
	if !strings.Contains(text(res), "answer: done") {
		t.Errorf("the run did not end as scripted:\n%s", text(res))
	}
	fake.Check(t)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || !strings.Contains(asked[0], "type the code sent to your phone") {
		t.Errorf("the client's user was asked %q; want once, with the reason", asked)
	}

	// A client without elicitation: the agent is not offered the tool.
	s2, site2, fake2 := agentServer(t, "harbour.yaml")
	cs2 := connect(t, serveHTTP(t, s2, HTTPOptions{}), nil, nil)
	mustCall(t, cs2, WebsurferTool, map[string]any{"instruction": "When does the Harbour Branch open on Saturdays?", "start_url": site2.URL + "/"})
	for _, r := range fake2.Requests() {
		for _, tl := range r.Chat.Tools {
			if tl.Function != nil && tl.Function.Name == "request_help" {
				t.Fatal("request_help was offered with nobody to ask")
			}
		}
	}
}

func TestElicitHumanAnswers(t *testing.T) {
	for _, c := range []struct {
		name  string
		reply *mcp.ElicitResult
		want  string
	}{
		{"done", &mcp.ElicitResult{Action: "accept", Content: map[string]any{helpDone: true}}, "The person says it is done."},
		{"not done", &mcp.ElicitResult{Action: "accept", Content: map[string]any{helpDone: false, helpNote: "no phone"}}, "The person could not do it, and writes: no phone"},
		{"declined", &mcp.ElicitResult{Action: "decline"}, "The person declined to help"},
		{"cancelled", &mcp.ElicitResult{Action: "cancel"}, "The person declined to help"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := serveFixture(t)
			s := newServer(t, f, nil)
			cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return c.reply, nil },
			}, nil)
			_ = cs
			var ss *mcp.ServerSession
			for x := range s.mcp.Sessions() {
				ss = x
			}
			if ss == nil {
				t.Fatal("no server session")
			}
			got, err := (&elicitHuman{ss: ss, log: s.log}).Help(context.Background(), "solve the CAPTCHA")
			if err != nil || !strings.HasPrefix(got, c.want) {
				t.Errorf("Help = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}
