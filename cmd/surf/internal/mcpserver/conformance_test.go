package mcpserver

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// conformanceDir holds the official MCP conformance suite, pinned by its
// package-lock.json; make setup installs its node_modules.
var conformanceDir = filepath.Join("..", "..", "..", "..", "testdata", "mcpconformance")

// conformanceScenarios are the suite's server scenarios that apply to
// surf. The others test tools, resources, prompts and completions of the
// suite's own reference server (test_simple_text, test_image_content,
// ...), which surf does not have.
var conformanceScenarios = []string{
	"server-initialize", "logging-set-level", "ping", "tools-list",
	"server-sse-polling", "server-sse-multiple-streams",
	"resources-list", "prompts-list", "dns-rebinding-protection",
}

// TestConformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance) against surf's HTTP handler: every
// scenario that applies passes with no warning. server-sse-polling checks
// that a call's event stream starts with a priming event (an id, no data)
// and a retry delay, and that a client whose stream is closed mid-call
// gets the result when it reconnects with Last-Event-ID: what a websurfer
// run or a board_wait needs when a connection drops. Its tool,
// test_reconnection, is the suite's: the test adds it, and it closes its
// own stream as a dropped connection would.
func TestConformance(t *testing.T) {
	node := needConformance(t)
	f := serveFixture(t)
	s := newServer(t, f, nil)
	s.MCP().AddTool(&mcp.Tool{Name: "test_reconnection", Description: "closes its stream, then answers", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Extra == nil || req.Extra.CloseSSEStream == nil {
				return errorResult("no stream to close"), nil
			}
			req.Extra.CloseSSEStream(mcp.CloseSSEStreamArgs{RetryAfter: RetryDelay})
			// The result comes after the stream is gone: only resumption
			// delivers it.
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "answered after the reconnection"}}}, nil
		})
	endpoint := serveHTTP(t, s, HTTPOptions{NoToken: true})
	summary := regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)
	for _, sc := range conformanceScenarios {
		t.Run(sc, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--import", "./node20.mjs", filepath.Join("node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
				"server", "--url", endpoint, "--scenario", sc)
			cmd.Dir = conformanceDir
			cmd.Env = append(os.Environ(), "NO_COLOR=1", "FORCE_COLOR=0")
			out, err := cmd.CombinedOutput()
			m := summary.FindStringSubmatch(string(out))
			if err != nil || m == nil || m[1] != m[2] || m[3] != "0" || m[4] != "0" {
				t.Errorf("scenario %s: %v\n%s", sc, err, out)
			}
		})
	}
}

// needConformance returns node's path, when node and the suite's
// node_modules are there. Without them the test fails in CI (CI=true) and
// is skipped elsewhere, saying to run make setup.
func needConformance(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(conformanceDir, "node_modules", "@modelcontextprotocol", "conformance", "package.json"))
	}
	if err != nil {
		msg := "the MCP conformance suite is not installed (" + err.Error() + "): run make setup (it runs npm ci --prefix testdata/mcpconformance)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}
