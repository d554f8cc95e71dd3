package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// TestPlanTypeScriptClient (issue 33, acceptance 5): a real MCP client
// (the official TypeScript SDK) calls board_plan on "surf serve --board"
// and gets the answer and its sources, with a progress notification as
// each task ends. The planner is a scripted model; the tasks are run by a
// "surf work" process on the same board, in a real browser.
func TestPlanTypeScriptClient(t *testing.T) {
	node := needMCPClient(t)
	data := t.TempDir()
	const token = "plan-ts-client-token-0123456789ab"
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	planner := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "plan", Expect: fakeopenai.Expect{UserContains: []string{"Request: What are the titles?"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
				{Name: "update_ledger", Arguments: `{"facts_given": [], "facts_to_lookup": ["the titles"], "facts_to_derive": ["whether they agree"], "guesses": [], "plan": "- three looks\n- one comparison"}`},
				{Name: "add_tasks", Arguments: `{"tasks": [{"id": "A", "instruction": "Answer the title."}, {"id": "B", "instruction": "Answer the title."}, {"id": "C", "instruction": "Answer the title."}, {"id": "D", "instruction": "Answer the title again.", "after": ["A", "B", "C"]}]}`},
			}}},
		fakeopenai.Turn{Name: "progress", Expect: fakeopenai.Expect{UserContains: []string{"Task D: done", "seen: Riverside Library"}},
			Reply: fakeopenai.CallTool("finish", `{"answer": "All four saw Riverside Library.", "sources": ["D", "A"]}`).Reply},
	))
	url, _ := startServeHTTP(t, token, true, "--image", "none", "--board", "--data", data, "--base-url", planner.URL(), "--model", "test-model")

	modelURL, stopModel, err := startWorkModel(&workModel{steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopModel)
	work := surfCmd("work", "--workers", "2", "--name", "plan-work", "--data", data, "--allow", site.Host, "--model", "test-model")
	work.Env = append(work.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
	var workOut syncBuffer
	work.Stdout, work.Stderr = &workOut, &workOut
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		work.Process.Signal(os.Interrupt)
		if err := work.Wait(); err != nil {
			t.Errorf("surf work: %v", err)
		}
		if t.Failed() {
			t.Logf("surf work's output:\n%s", workOut.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, node, "plan.mjs", "--url", url, "--token", token, "--request", "What are the titles?", "--start-url", site.URL+"/")
	run.Dir = mcpClientDir
	var out, errOut bytes.Buffer
	run.Stdout, run.Stderr = &out, &errOut
	if err := run.Run(); err != nil {
		t.Fatalf("node plan.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, errOut.String(), out.String())
	}
	var sum struct {
		Tools    []string `json:"tools"`
		Progress []struct {
			Progress float64 `json:"progress"`
			Message  string  `json:"message"`
		} `json:"progress"`
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
		Result  struct {
			Plan    string   `json:"plan"`
			State   string   `json:"state"`
			Answer  string   `json:"answer"`
			Sources []string `json:"sources"`
			Rounds  []string `json:"rounds"`
			Tasks   []struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"tasks"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("plan.mjs printed no JSON summary: %v\n%s", err, out.String())
	}
	if !slices.Contains(sum.Tools, "board_plan") {
		t.Errorf("the client does not see board_plan: %v", sum.Tools)
	}
	r := sum.Result
	if sum.IsError || r.State != "done" || r.Answer != "All four saw Riverside Library." || strings.Join(r.Sources, ",") != "D,A" || len(r.Tasks) != 4 {
		t.Fatalf("board_plan's result: %s", sum.Text)
	}
	for _, tk := range r.Tasks {
		if tk.State != "done" || !strings.HasPrefix(tk.ID, r.Plan+"-") {
			t.Errorf("task %+v", tk)
		}
	}
	ended := 0
	for i, p := range sum.Progress {
		t.Logf("progress %v: %s", p.Progress, p.Message)
		if i > 0 && p.Progress <= sum.Progress[i-1].Progress {
			t.Errorf("progress did not rise at %d", i)
		}
		if strings.Contains(p.Message, ": done     "+r.Plan+"-") {
			ended++
		}
	}
	if ended != 4 {
		t.Errorf("%d progress notifications of a task done, want 4", ended)
	}
}
