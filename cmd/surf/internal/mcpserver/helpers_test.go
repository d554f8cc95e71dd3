package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
)

// fixture is the loopback site the tests browse: the shop pages under
// testdata/site, /buy (which logs the order) and /cookie, which sets a
// cookie from ?set= and shows the one the browser sent.
type fixture struct {
	URL  string
	Host string // host:port, for the policy

	mu     sync.Mutex
	orders []string
}

func serveFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata/site")))
	mux.HandleFunc("/buy", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		f.mu.Lock()
		f.orders = append(f.orders, r.Method+" "+r.Form.Get("item"))
		f.mu.Unlock()
		page(w, "Thank you", "<p>Thank you for your order.</p>")
	})
	mux.HandleFunc("/cookie", func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("set"); v != "" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: v, Path: "/"})
			page(w, "Cookie set "+v, "<p>cookie set to "+html.EscapeString(v)+"</p>")
			return
		}
		got := "none"
		if c, err := r.Cookie("who"); err == nil {
			got = c.Value
		}
		page(w, "Cookie "+got, "<p>cookie is "+html.EscapeString(got)+"</p>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	f.Host = strings.TrimPrefix(srv.URL, "http://")
	return f
}

func page(w http.ResponseWriter, title, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!doctype html><html><head><title>%s</title></head><body><h1>%s</h1>%s</body></html>", html.EscapeString(title), html.EscapeString(title), body)
}

func (f *fixture) Orders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.orders...)
}

// sitePolicy allows only the fixture, plus the policy config given.
func sitePolicy(t testing.TB, f *fixture, extra policy.Config) *policy.Policy {
	t.Helper()
	r, err := policy.ParseHostRule(f.Host)
	if err != nil {
		t.Fatal(err)
	}
	extra.Allow = append(extra.Allow, r)
	p, err := policy.New(extra)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newServer makes a server on the test browser; edit adjusts its config.
func newServer(t *testing.T, f *fixture, edit func(*Config)) *Server {
	t.Helper()
	cfg := Config{Sandbox: browsertest.Sandbox(t), Policy: sitePolicy(t, f, policy.Config{})}
	if edit != nil {
		edit(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("closing the server: %v", err)
		}
	})
	return s
}

// testToken is the bearer token serveHTTP gives a server whose options
// have none (a server needs one, on loopback too); connect and post send
// it unless told otherwise.
const testToken = "surf-test-token-0123456789abcdef"

// serveHTTP serves s on a loopback port and returns the endpoint URL.
// Options without a token (and without NoToken) get testToken.
func serveHTTP(t *testing.T, s *Server, o HTTPOptions) string {
	t.Helper()
	if o.Token == "" && !o.NoToken {
		o.Token = testToken
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Errorf("Serve did not return after its context ended")
		}
	})
	return "http://" + ln.Addr().String() + HTTPPath
}

// connect opens an MCP client session to an HTTP endpoint; a nil hc
// sends testToken.
func connect(t *testing.T, endpoint string, opts *mcp.ClientOptions, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	if hc == nil {
		hc = &http.Client{Transport: bearer{testToken}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call calls a tool and fails the test on a protocol error.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	return res
}

// mustCall calls a tool that must succeed.
func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res := call(t, cs, name, args)
	if res.IsError {
		t.Fatalf("%s(%v) returned an error result: %s", name, args, text(res))
	}
	return res
}

// text is the text content of a result.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// images are the image contents of a result.
func images(res *mcp.CallToolResult) []*mcp.ImageContent {
	var out []*mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			out = append(out, ic)
		}
	}
	return out
}

// elementID finds the id of the element with role and name in an
// observation's text.
func elementID(t *testing.T, obs, role, name string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*\[?(\d+)\]?\s+` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"`)
	m := re.FindStringSubmatch(obs)
	if m == nil {
		t.Fatalf("no %s %q in the observation:\n%s", role, name, obs)
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

// waitFor polls cond until it holds or the time is up.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func jsonArgs(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}
