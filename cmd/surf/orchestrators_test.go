package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// examplesDir holds the orchestrator examples of docs/orchestrators.md,
// each an npm package that make setup installs (npm ci --prefix).
var examplesDir = filepath.Join("..", "..", "examples")

// needExample returns node's path when node and the example's
// node_modules are there; otherwise the test fails saying how to install
// them.
func needExample(t *testing.T, name, module string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(examplesDir, name, "node_modules", filepath.FromSlash(module), "package.json"))
	}
	if err != nil {
		t.Fatalf("the %s example is not installed (%v): run make setup (it runs npm ci --prefix examples/%s; surf install --with-deps installs node and npm)", name, err, name)
	}
	return node
}

// surfLink is a path named "surf" that runs this test binary as surf (the
// binary dispatches on its name), for programs that start surf by path.
func surfLink(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "surf")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// TestOrchestratorExamples runs each example of docs/orchestrators.md, a
// JavaScript agent framework from npm that starts "surf serve" over
// stdio as its MCP server, on a small task on a loopback site. The
// framework's model is the fake OpenAI-compatible server; it calls
// visit_url, then read_page, then answers, and checks that each of surf's
// results reached it with the page in it.
func TestOrchestratorExamples(t *testing.T) {
	for _, ex := range []struct{ name, module string }{
		{"openai-agents", "@openai/agents"},
		{"vercel-ai", "@ai-sdk/mcp"},
	} {
		t.Run(ex.name, func(t *testing.T) {
			node := needExample(t, ex.name, ex.module)
			site, err := demosite.Start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(site.Close)
			const task = "What is the address of the Harbour Branch?"
			const answer = "The Harbour Branch is at 12 Quay Street."
			model := fakeopenai.Start(t, fakeopenai.NewScript(
				fakeopenai.Turn{
					Name:   "visit",
					Expect: fakeopenai.Expect{Model: "test-model", UserContains: fakeopenai.Strings{task}, ToolsInclude: fakeopenai.Strings{"visit_url", "read_page", "click"}},
					Reply:  fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "visit_url", Arguments: `{"url": "` + site.URL + `/branch/harbour"}`}}},
				},
				fakeopenai.Turn{
					Name:   "read",
					Expect: fakeopenai.Expect{ToolContains: fakeopenai.Strings{"Harbour Branch - Riverside Library", "observation 1"}},
					Reply:  fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "read_page", Arguments: `{}`}}},
				},
				fakeopenai.Turn{
					Name:   "answer",
					Expect: fakeopenai.Expect{ToolContains: fakeopenai.Strings{"12 Quay Street"}},
					Reply:  fakeopenai.Reply{Content: answer},
				},
			))

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "agent.mjs", task, "--", "--allow", site.Host, "--image", "none")
			cmd.Dir = filepath.Join(examplesDir, ex.name)
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "SURF_MCP_TOKEN=") {
					cmd.Env = append(cmd.Env, kv)
				}
			}
			cmd.Env = append(cmd.Env, "SURF="+surfLink(t), "MODEL=test-model", "OPENAI_API_KEY=fake-key", "OPENAI_BASE_URL="+model.URL())
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			err = cmd.Run()
			if err != nil {
				t.Errorf("node agent.mjs: %v", err)
			}
			model.Check(t)
			if got := strings.TrimSpace(out.String()); got != answer {
				t.Errorf("the agent answered %q, want %q", got, answer)
			}
			if t.Failed() {
				t.Logf("stderr:\n%s\nstdout:\n%s", errOut.String(), out.String())
			}
		})
	}
}
