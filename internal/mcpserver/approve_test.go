package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/policy"
)

// askBuy is a policy on which clicking the shop's Buy button needs
// approval.
func askBuy(t *testing.T, f *fixture) *policy.Policy {
	return sitePolicy(t, f, policy.Config{Actions: []policy.ActionRule{{
		Rule: "confirm-purchase", Tools: []string{"click"}, Role: "button", Name: "^Buy$", Verdict: policy.Ask,
	}}})
}

// buy opens the shop and clicks Buy; it returns the click's result.
func buy(t *testing.T, cs *mcp.ClientSession, f *fixture) *mcp.CallToolResult {
	t.Helper()
	res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	id := elementID(t, text(res), "button", "Buy")
	return call(t, cs, "click", map[string]any{"target_id": id})
}

// TestElicitation puts an Ask decision (a click on "Buy") to the client's
// user through elicitation: approving lets the click through (the order
// reaches the site), declining or unchecking stops it.
func TestElicitation(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.Policy = askBuy(t, f) })
	endpoint := serveHTTP(t, s, HTTPOptions{})

	cases := []struct {
		name    string
		reply   *mcp.ElicitResult
		ordered bool
		want    string
	}{
		{"approve", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, true, "Thank you for your order"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, false, "denied by the approver"},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, false, "denied by the approver"},
		{"unchecked", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, false, "denied by the approver"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mu sync.Mutex
			var asked []string
			cs := connect(t, endpoint, &mcp.ClientOptions{
				ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params.Message)
					mu.Unlock()
					return c.reply, nil
				},
			}, nil)
			before := len(f.Orders())
			res := buy(t, cs, f)
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 {
				t.Fatalf("the client was asked %d times, want once", len(asked))
			}
			if !strings.Contains(asked[0], `click on button "Buy"`) || !strings.Contains(asked[0], "confirm-purchase") {
				t.Errorf("the question does not say what is asked: %q", asked[0])
			}
			ordered := len(f.Orders()) > before
			if ordered != c.ordered {
				t.Errorf("the order reached the site: %v, want %v (orders %v)", ordered, c.ordered, f.Orders())
			}
			if res.IsError == c.ordered || !strings.Contains(text(res), c.want) {
				t.Errorf("click result: IsError=%v %q, want %q", res.IsError, firstLine(text(res), 300), c.want)
			}
		})
	}
}

// TestElicitationFails: a client that fails to answer denies the action
// with a tool error, and the session goes on in the same context.
func TestElicitationFails(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.Policy = askBuy(t, f) })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the user interface is gone")
		},
	}, nil)
	before := len(f.Orders())
	res := buy(t, cs, f)
	if !res.IsError || !strings.Contains(text(res), "could not be asked for approval") {
		t.Errorf("click result: IsError=%v %q", res.IsError, firstLine(text(res), 300))
	}
	if len(f.Orders()) != before {
		t.Errorf("the order went through")
	}
	res = mustCall(t, cs, "read_page", map[string]any{})
	if strings.Contains(text(res), "note:") || !strings.Contains(text(res), "blue kettle") {
		t.Errorf("the session did not go on in the same context:\n%s", text(res))
	}
}

// TestApprovalWithoutElicitation: a client that cannot be asked gets the
// server's fallback: the policy's deny by default, or --approve allow.
func TestApprovalWithoutElicitation(t *testing.T) {
	f := serveFixture(t)
	t.Run("deny", func(t *testing.T) {
		s := newServer(t, f, func(c *Config) { c.Policy = askBuy(t, f) })
		cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
		before := len(f.Orders())
		res := buy(t, cs, f)
		if !res.IsError || !strings.Contains(text(res), "no approver is configured") {
			t.Errorf("click result: IsError=%v %q", res.IsError, firstLine(text(res), 300))
		}
		if len(f.Orders()) != before {
			t.Errorf("the order went through without approval")
		}
	})
	t.Run("allow", func(t *testing.T) {
		s := newServer(t, f, func(c *Config) { c.Policy = askBuy(t, f); c.Approver = policy.AllowAll() })
		cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
		before := len(f.Orders())
		res := buy(t, cs, f)
		if res.IsError || !strings.Contains(text(res), "Thank you for your order") {
			t.Errorf("click result: IsError=%v %q", res.IsError, firstLine(text(res), 300))
		}
		if len(f.Orders()) != before+1 {
			t.Errorf("the approved order did not reach the site")
		}
	})
	t.Run("elicitation off", func(t *testing.T) {
		s := newServer(t, f, func(c *Config) { c.Policy = askBuy(t, f); c.DisableElicitation = true })
		var asked atomic.Bool
		cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked.Store(true)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
			},
		}, nil)
		res := buy(t, cs, f)
		if asked.Load() || !res.IsError {
			t.Errorf("with elicitation off the client was asked (%v) or the click ran (IsError=%v)", asked.Load(), res.IsError)
		}
	})
}
