package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/cmd/surf/internal/webguard"
)

// TestServeBoardPage: with --board and --http, surf serve's / is the
// board's page (surf board ui's), driven here in surf's own Chromium: it
// lists a task added to the board and serve's own running session (an
// MCP client's, announced over the board's NATS like a worker's), with
// its live picture; it links to serve's own live view, now at /live/,
// whose list and session pages work there. A POST from another origin
// is refused, on the board's page and on the live view, and stops
// nothing.
func TestServeBoardPage(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const token = "board-page-token-0123456789abcdef"
	cmd := surfCmd("serve", "--http", "127.0.0.1:0", "--board", "--data", dir, "--allow", site.Host, "--image", "none")
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token)
	p := start(t, cmd)
	endpoint := p.await(t, regexp.MustCompile(`^surf: serving MCP \(streamable HTTP\) at (\S+)$`))
	pageURL := p.await(t, regexp.MustCompile(`^surf: board's page at (http://\S+/\?token=\S+)$`))
	liveURL := p.await(t, regexp.MustCompile(`^surf: this server's live view at (http://\S+/live/) `))
	base := strings.TrimSuffix(endpoint, "/mcp")

	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx, board.Task{ID: "tide", Instruction: "Read the tide table.", StartURL: site.URL + "/"}); err != nil {
		t.Fatal(err)
	}

	// a running session of serve's: an MCP client's
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	visit := func() {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
		if err != nil || res.IsError {
			t.Fatalf("visit_url: %v %v", res, err)
		}
	}
	visit()
	host, _ := os.Hostname()
	worker := "serve@" + host

	// the person's browser: surf's own Chromium
	page := personPage(ctx, t)
	resp, err := page.Goto(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	if csp, _ := resp.HeaderValue("Content-Security-Policy"); csp != webguard.CSP {
		t.Errorf("the board's page's CSP is %q, want %q", csp, webguard.CSP)
	}
	if err := page.Locator(`#tasks details[data-id="tide"]`).WaitFor(); err != nil {
		t.Fatalf("the task added to the board on serve's /: %v", err)
	}
	row := page.Locator(fmt.Sprintf(`#sessions tr[data-worker=%q]`, worker))
	if err := row.WaitFor(); err != nil {
		t.Fatalf("serve's running session on serve's /: %v", err)
	}
	id, err := row.GetAttribute("data-session")
	if err != nil || id == "" {
		t.Fatalf("serve's session's row names no session: %q %v", id, err)
	}
	// its live picture, over NATS
	if err := row.Locator("button.watch").Click(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "a frame of serve's session on the board's page", func() bool {
		v, err := row.Locator("img.live").Evaluate("img => img.naturalWidth", nil)
		n, _ := v.(int)
		return err == nil && n > 0
	})
	if err := row.Locator("button.watch").Click(); err != nil {
		t.Fatal(err)
	}

	// serve's own live view, linked from the page, at /live/
	if err := page.Locator(`header nav.links a[href="/live/"]`).Click(); err != nil {
		t.Fatal(err)
	}
	link := page.Locator(fmt.Sprintf(`#sessions tr[data-id=%q] a`, id))
	if err := link.Click(); err != nil {
		t.Fatalf("serve's session in its live view at %s: %v", liveURL, err)
	}
	waitUntil(t, ctx, "the live view's session page at /live/s/ID", func() bool {
		s, err := page.Locator("#state").TextContent()
		return err == nil && strings.TrimSpace(s) != "" && strings.HasSuffix(page.URL(), "/live/s/"+id)
	})
	// its events and its live picture come from paths beside the page
	waitUntil(t, ctx, "the session's page and picture at /live/s/ID", func() bool {
		u, err := page.Locator("#url").TextContent()
		if err != nil || u != site.URL+"/" {
			return false
		}
		v, err := page.Locator("#live").Evaluate("img => img.naturalWidth", nil)
		n, _ := v.(int)
		return err == nil && n > 0
	})

	// a POST from another origin (another loopback port: the guard lets
	// it in, the page's same-origin check does not) changes nothing
	bus, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	var bridge string
	waitUntil(t, ctx, "serve's bridge on the bus", func() bool {
		s, ok := findSession(bus, worker, id)
		bridge = s.Bridge
		return ok
	})
	for _, path := range []string{"/s/" + bridge + "/" + id + "/stop", "/live/s/" + id + "/stop"} {
		for _, origin := range []string{site.URL, "http://evil.example"} {
			rq, _ := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader("{}"))
			rq.Header.Set("Authorization", "Bearer "+token)
			rq.Header.Set("Content-Type", "application/json")
			rq.Header.Set("Origin", origin)
			resp, err := http.DefaultClient.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("POST %s from %s: %d, want 403", path, origin, resp.StatusCode)
			}
		}
	}
	visit() // the session was not stopped
	if _, ok := findSession(bus, worker, id); !ok {
		t.Error("serve's session left the bus after the refused POSTs")
	}

	// an interrupt ends serve cleanly, the board's page with it
	cs.Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.exited:
		if !cmd.ProcessState.Success() {
			t.Errorf("surf serve --board ended %v after an interrupt, want a clean exit", cmd.ProcessState)
		}
	case <-ctx.Done():
		t.Error("surf serve --board did not end after an interrupt")
	}
}

// findSession finds a worker's live session on the bus.
func findSession(bus *livebus.Follower, worker, id string) (livebus.Remote, bool) {
	for _, s := range bus.Sessions() {
		if s.Worker == worker && s.ID == id {
			return s, true
		}
	}
	return livebus.Remote{}, false
}
