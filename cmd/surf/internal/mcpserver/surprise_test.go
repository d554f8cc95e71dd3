package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReasoningOnlyOnActions: the browser actions list the reasoning
// argument; the session, board, websurfer, observe and screenshot tools,
// which do nothing with it, do not.
func TestReasoningOnlyOnActions(t *testing.T) {
	f := serveFixture(t)
	bf := newBoardFixture(t)
	s := newServer(t, f, func(c *Config) { c.Board = bf.b })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, tool := range res.Tools {
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var sch struct {
			Properties map[string]any `json:"properties"`
		}
		json.Unmarshal(b, &sch)
		_, has := sch.Properties["reasoning"]
		notAction := tool.Name == WebsurferTool || tool.Name == ObserveTool || tool.Name == ScreenshotTool || strings.HasPrefix(tool.Name, "session_") || strings.HasPrefix(tool.Name, "board_")
		seen[tool.Name] = true
		if notAction && has {
			t.Errorf("%s lists a reasoning argument it does nothing with", tool.Name)
		}
		if !notAction && !has {
			t.Errorf("the action %s lost its reasoning argument", tool.Name)
		}
	}
	for _, name := range []string{WebsurferTool, ObserveTool, ScreenshotTool, "session_open", "session_list", "session_close", BoardAddTool, BoardWaitTool, "visit_url", "click"} {
		if !seen[name] {
			t.Errorf("tools/list has no %s", name)
		}
	}
	// A reasoning sent anyway is accepted, and dropped.
	mustCall(t, cs, "session_list", map[string]any{"reasoning": "looking"})
}

// TestUnknownToolListsTools: calling a tool the server does not have is a
// JSON-RPC error (the MCP specification makes unknown tools a protocol
// error), whose message names the tool and lists the server's tools.
func TestUnknownToolListsTools(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, nil)
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_page", Arguments: map[string]any{"url": f.URL}})
	if err == nil {
		t.Fatal("an unknown tool ran")
	}
	for _, want := range []string{`unknown tool "visit_page"`, "visit_url", "click", "session_open", WebsurferTool} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not name %q", err, want)
		}
	}
}
