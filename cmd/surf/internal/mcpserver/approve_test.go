package mcpserver

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/textcut"
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
				t.Errorf("click result: IsError=%v %q, want %q", res.IsError, textcut.Line(text(res), 300), c.want)
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
		t.Errorf("click result: IsError=%v %q", res.IsError, textcut.Line(text(res), 300))
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
			t.Errorf("click result: IsError=%v %q", res.IsError, textcut.Line(text(res), 300))
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
			t.Errorf("click result: IsError=%v %q", res.IsError, textcut.Line(text(res), 300))
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

// askHost serves a page on 127.0.0.2, a host the policy marks ask, and
// counts its requests.
func askHost(t *testing.T) (url string, hits *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	hits = new(atomic.Int64)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		page(w, "Harbour ledger", "<p>berth 7 is free on Tuesday</p>")
	}))
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// TestApprovedAskHostOverMCP: a visit_url to an ask host that the client's
// user approves (through elicitation, or the server's --approve allow)
// returns the real page, not surf's block page; a declined one is an
// error result and the host is never reached.
func TestApprovedAskHostOverMCP(t *testing.T) {
	f := serveFixture(t)
	askRule, err := policy.ParseHostRule("127.0.0.2")
	if err != nil {
		t.Fatal(err)
	}
	pol := sitePolicy(t, f, policy.Config{Ask: []policy.HostRule{askRule}})
	reply := func(r *mcp.ElicitResult) *mcp.ClientOptions {
		return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if !strings.Contains(req.Params.Message, "opens 127.0.0.2 (that host only)") {
				t.Errorf("the question does not say what an approval opens: %q", req.Params.Message)
			}
			return r, nil
		}}
	}
	cases := []struct {
		name     string
		approver policy.Approver
		client   *mcp.ClientOptions
		approved bool
	}{
		{"elicitation accept", nil, reply(&mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}), true},
		{"elicitation decline", policy.AllowAll(), reply(&mcp.ElicitResult{Action: "decline"}), false},
		{"approve allow", policy.AllowAll(), nil, true},
		{"approve deny", policy.DenyAll(), nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, hits := askHost(t)
			s := newServer(t, f, func(cfg *Config) { cfg.Policy = pol; cfg.Approver = c.approver })
			cs := connect(t, serveHTTP(t, s, HTTPOptions{}), c.client, nil)
			res := call(t, cs, "visit_url", map[string]any{"url": u + "/"})
			got := text(res)
			if c.approved {
				if res.IsError || strings.Contains(got, "Blocked by surf") || !strings.Contains(got, "berth 7 is free on Tuesday") {
					t.Fatalf("approved: IsError=%v, want the page:\n%s", res.IsError, got)
				}
				// Later calls see the host open, with no new question.
				res = mustCall(t, cs, "refresh_page", map[string]any{})
				if strings.Contains(text(res), "Blocked by surf") {
					t.Errorf("refreshing the approved page:\n%s", text(res))
				}
				return
			}
			if !res.IsError || !strings.Contains(got, "denied by the approver") {
				t.Errorf("declined: IsError=%v %q", res.IsError, textcut.Line(got, 300))
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("the host was reached %d times without approval", n)
			}
		})
	}
}
