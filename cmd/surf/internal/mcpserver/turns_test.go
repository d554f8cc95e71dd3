package mcpserver

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/textcut"
)

// TestWebsurferTakesTurns: with room for one call at the browser, a
// websurfer run waits for its turn before it drives the browser, and lets
// the turn go while its model thinks: another session's call runs then.
func TestWebsurferTakesTurns(t *testing.T) {
	s, site, fake := agentServer(t, "slow.yaml", func(c *Config) {
		c.MaxActive = 1
		c.QueueTimeout = 30 * time.Second // a call kept waiting fails instead of hanging the test
		c.Image = ImageNone
	})
	endpoint := serveHTTP(t, s, HTTPOptions{})
	a, b := connect(t, endpoint, nil, nil), connect(t, endpoint, nil, nil)

	// Hold the only turn: the run must wait for it.
	if _, err := s.admit.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ran := make(chan *mcp.CallToolResult, 1)
	go func() {
		ran <- call(t, a, WebsurferTool, map[string]any{"instruction": "What is this site?", "start_url": site.URL + "/"})
	}()
	waitFor(t, "the run to wait for its turn", time.Minute, func() bool { return s.admit.Waiting() == 1 })
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times before the run had its turn", n)
	}
	s.admit.Release()

	// The model thinks (its reply is 4 s late): the turn is free.
	waitFor(t, "the run's first model call", time.Minute, func() bool { return len(fake.Requests()) == 1 })
	if n := s.admit.Active(); n != 0 {
		t.Errorf("%d turns out while the run's model thinks, want 0", n)
	}
	res := call(t, b, "visit_url", map[string]any{"url": site.URL + "/"})
	if res.IsError {
		t.Fatalf("another session's call while the run's model thinks: %s", textcut.Line(text(res), 300))
	}
	if len(ran) != 0 {
		t.Error("the run ended before the other session's call; the test proves nothing")
	}
	out := <-ran
	if out.IsError || !strings.Contains(text(out), "answer: It is the Riverside Library.") {
		t.Fatalf("the run: IsError=%v\n%s", out.IsError, text(out))
	}
	fake.Check(t)
	if n := s.admit.Active(); n != 0 {
		t.Errorf("%d turns out after every call ended, want 0", n)
	}
}

// TestApprovalLetsTurnGo: a call waiting for its client's user to approve
// an action lets its turn at the browser go; another session's call runs
// meanwhile, and the approved action then goes through.
func TestApprovalLetsTurnGo(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) {
		c.Policy = askBuy(t, f)
		c.MaxActive = 1
		c.QueueTimeout = 30 * time.Second
		c.Image = ImageNone
	})
	endpoint := serveHTTP(t, s, HTTPOptions{})
	asked := make(chan struct{}, 1)
	answer := make(chan struct{})
	a := connect(t, endpoint, &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- struct{}{}
			select {
			case <-answer:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		},
	}, nil)
	var once sync.Once
	letGo := func() { once.Do(func() { close(answer) }) }
	bought := make(chan *mcp.CallToolResult, 1)
	boughtDone := make(chan struct{})
	// Before the client closes, even when the test failed: the user
	// answers and the click ends (a client closing while it answers
	// leaves the server asking).
	t.Cleanup(func() {
		letGo()
		select {
		case <-boughtDone:
		case <-time.After(time.Minute):
		}
	})
	b := connect(t, endpoint, nil, nil)

	go func() {
		defer close(boughtDone)
		bought <- buy(t, a, f)
	}()
	<-asked
	if n := s.admit.Active(); n != 0 {
		t.Errorf("%d turns out while the user decides, want 0", n)
	}
	res := call(t, b, "visit_url", map[string]any{"url": f.URL + "/"})
	if res.IsError {
		t.Fatalf("another session's call while a user decides: %s", textcut.Line(text(res), 300))
	}
	letGo()
	if res := <-bought; res.IsError || !strings.Contains(text(res), "Thank you for your order") {
		t.Fatalf("the approved click: IsError=%v %s", res.IsError, textcut.Line(text(res), 300))
	}
	if n := s.admit.Active(); n != 0 {
		t.Errorf("%d turns out after every call ended, want 0", n)
	}
}
