package mcpserver

import (
	"bytes"
	"context"
	"image/jpeg"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/tools"
)

// TestHTTPTools drives the fixture shop through the streamable HTTP
// transport with the go-sdk client: the tool list, an observation with its
// set-of-mark image, an action by element id, a gate denial and a tool
// that is not offered on this page, all as results, never a dead server.
func TestHTTPTools(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	ctx := context.Background()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema == nil {
			t.Errorf("%s has no input schema", tl.Name)
		}
	}
	for _, want := range []string{"visit_url", "click", "input_text", "page_down", "switch_tab", "read_page", WebsurferTool} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	for _, not := range []string{"stop_action", "summarize_page", "answer_question"} {
		if slices.Contains(names, not) {
			t.Errorf("tools/list has %s without a model: %v", not, names)
		}
	}
	if s.Sessions() != 0 {
		t.Errorf("%d browser sessions before any tool call, want 0 (they open lazily)", s.Sessions())
	}

	res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	obs := text(res)
	for _, want := range []string{`Fixture Shop`, `link "About the shop"`, `button "Buy"`, `One blue kettle, 24 EUR.`} {
		if !strings.Contains(obs, want) {
			t.Errorf("the observation lacks %q:\n%s", want, obs)
		}
	}
	imgs := images(res)
	if len(imgs) != 1 || imgs[0].MIMEType != "image/jpeg" {
		t.Fatalf("want one JPEG image, got %d images %v", len(imgs), imgs)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(imgs[0].Data))
	if err != nil {
		t.Fatalf("the image is not a JPEG: %v", err)
	}
	if cfg.Width < 400 || cfg.Height < 200 {
		t.Errorf("image is %dx%d", cfg.Width, cfg.Height)
	}
	if s.Sessions() != 1 {
		t.Errorf("%d browser sessions after the first call, want 1", s.Sessions())
	}

	id := elementID(t, obs, "link", "About the shop")
	res = mustCall(t, cs, "click", map[string]any{"target_id": id})
	if got := text(res); !strings.Contains(got, "sold kettles since 1999") {
		t.Errorf("after the click the page should be About:\n%s", got)
	}

	// A host outside the policy: a tool error, and the page stays.
	res = call(t, cs, "visit_url", map[string]any{"url": "http://127.0.0.2:9/"})
	if !res.IsError || !strings.Contains(text(res), "denied") {
		t.Errorf("visiting a host outside the policy: IsError=%v %q, want a denial", res.IsError, text(res))
	}
	// page_up is not offered on a page that cannot scroll.
	res = call(t, cs, "page_up", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "not available now: already at the top of the page") {
		t.Errorf("page_up on a short page: IsError=%v %q", res.IsError, text(res))
	}
	// Bad arguments are refused by the registry's validation.
	res = call(t, cs, "click", map[string]any{"target_id": "twelve"})
	if !res.IsError || !strings.Contains(text(res), "invalid arguments") {
		t.Errorf("click with a bad id: IsError=%v %q", res.IsError, text(res))
	}
	// The server is alive and the session still on the About page.
	res = mustCall(t, cs, "read_page", map[string]any{})
	if !strings.Contains(text(res), "sold kettles since 1999") {
		t.Errorf("read_page after the errors:\n%s", text(res))
	}
}

// TestImageModes checks --image plain and none.
func TestImageModes(t *testing.T) {
	f := serveFixture(t)
	for _, mode := range []ImageMode{ImagePlain, ImageNone} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newServer(t, f, func(c *Config) { c.Image = mode })
			cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
			res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
			imgs := images(res)
			if !strings.Contains(text(res), `button "Buy"`) {
				t.Errorf("the text lacks the button:\n%s", text(res))
			}
			switch mode {
			case ImageNone:
				if len(imgs) != 0 {
					t.Errorf("--image none sent %d images", len(imgs))
				}
			case ImagePlain:
				if len(imgs) != 1 {
					t.Fatalf("--image plain sent %d images, want 1", len(imgs))
				}
				if _, err := jpeg.DecodeConfig(bytes.NewReader(imgs[0].Data)); err != nil {
					t.Errorf("the plain image is not a JPEG: %v", err)
				}
			}
		})
	}
}

// TestDefinitions checks that the tool list covers the catalog (less the
// agent-only stop_action) and matches a real surfer's schemas.
func TestDefinitions(t *testing.T) {
	defs := definitions()
	for _, n := range tools.CatalogNames() {
		if _, ok := defs.Lookup(n); !ok {
			t.Errorf("catalog tool %s has no MCP definition", n)
		}
	}
	if got, want := len(defs.Names()), len(tools.CatalogNames())+3; got != want {
		t.Errorf("%d definitions, want %d (the catalog, websurfer, observe and screenshot)", got, want)
	}
	withModel := listed(defs, true)
	if slices.Contains(withModel, "stop_action") || !slices.Contains(withModel, "summarize_page") {
		t.Errorf("listed with a model: %v", withModel)
	}

	f := serveFixture(t)
	s := newServer(t, f, nil)
	cl, err := s.client(fakeSession(t, s), "")
	if err != nil {
		t.Fatal(err)
	}
	se, err := cl.session(DefaultSession)
	if err != nil {
		t.Fatal(err)
	}
	b, _, _, err := se.browser(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range b.reg.Names() {
		d, ok := defs.Lookup(n)
		if n == tools.RequestHelp.Name {
			// surf's own agent loop asks a person through the live
			// view; an MCP client has its own person to ask.
			if ok {
				t.Errorf("the agent-only tool %s is offered over MCP", n)
			}
			continue
		}
		if !ok {
			t.Errorf("the surfer's tool %s has no definition", n)
			continue
		}
		real, _ := b.reg.Lookup(n)
		if string(d.SchemaJSON()) != string(real.SchemaJSON()) || d.Description() != real.Description() {
			t.Errorf("the definition of %s differs from the surfer's tool", n)
		}
	}
}

// fakeSession connects an in-memory client so that the test has a real
// *mcp.ServerSession to hang state on.
func fakeSession(t *testing.T, s *Server) *mcp.ServerSession {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.mcp.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	deadline := time.Now().Add(5 * time.Second)
	for ss.InitializeParams() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return ss
}
