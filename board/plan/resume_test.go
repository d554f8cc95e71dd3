package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// plannerChild is the planner process of TestPlanResumesAfterSIGKILL: it
// runs plan $SURF_PLAN_CHILD on the board in $SURF_PLAN_DIR with the
// model at $SURF_PLAN_MODEL, until it is killed.
func plannerChild() int {
	ctx := context.Background()
	b, err := board.Open(ctx, board.Config{Dir: os.Getenv("SURF_PLAN_DIR")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer b.Close()
	m, err := llmClient(os.Getenv("SURF_PLAN_MODEL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := plan.New(plan.Config{Board: b, Model: m, ModelName: "test-model"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for _, err := range p.Run(ctx, os.Getenv("SURF_PLAN_CHILD")) {
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// TestPlanResumesAfterSIGKILL (issue 33, acceptance 3): the planner
// process is killed (SIGKILL) once its first round's tasks are on the
// board; Run on the same plan in another process finishes it: the first
// round is not asked again, no task is added or run twice.
func TestPlanResumesAfterSIGKILL(t *testing.T) {
	ctx := testCtx(t)
	srv := site(t)
	dir := t.TempDir()
	b := openBoard(t, ctx, dir) // this process runs the board's server
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "plan", Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("update_ledger", ledgerArgs), call("add_tasks", addTasks(srv.URL, "/c"))}}},
		fakeopenai.Turn{Name: "progress", Expect: fakeopenai.Expect{UserContains: []string{"Task total: done", "total 60 EUR", "Facts to derive:\n- the total"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("finish", `{"answer": "60 EUR in all.", "sources": ["total"]}`)}}},
	))
	model := client(t, fake.URL())
	p, err := plan.New(plan.Config{Board: b, Model: model, ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(ctx, plan.Request{ID: "p3", Request: "What do A, B and C cost together?"}); err != nil {
		t.Fatal(err)
	}
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "SURF_PLAN_CHILD=p3", "SURF_PLAN_DIR="+dir, "SURF_PLAN_MODEL="+fake.URL())
	var stderr strings.Builder
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// no worker runs yet: the child's plan waits on its tasks once its
	// first round is recorded and its tasks added
	for {
		pl, err := plan.Get(ctx, b, "p3")
		if err != nil {
			t.Fatal(err)
		}
		if pl.State == plan.Running {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the child's plan never ran its tasks: %s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("the killed planner made %d model requests, want 1", n)
	}
	counted := startWorkers(t, ctx, b)
	evs, err := collect(t, ctx, p, "p3")
	if err != nil {
		t.Fatal(err)
	}
	if end := evs[len(evs)-1]; end.Kind != plan.PlanDone || end.Plan.Answer != "60 EUR in all." {
		t.Fatalf("the resumed plan ended %s: %+v", end.Kind, end.Plan)
	}
	for _, ev := range evs {
		if ev.Kind == plan.TaskAdded {
			t.Errorf("the resumed plan added %s again", ev.Task.Task.ID)
		}
	}
	got, _ := plan.Get(ctx, b, "p3")
	if len(got.Rounds) != 2 {
		t.Errorf("rounds: %+v", got.Rounds)
	}
	for _, id := range []string{"p3-A", "p3-B", "p3-C", "p3-total"} {
		if n := counted.count(id); n != 1 {
			t.Errorf("task %s ran %d times", id, n)
		}
	}
}

// TestPlanResumesADecidedRound: a planner that stopped after recording
// its round's decision, and after only part of its tasks were on the
// board, is resumed: the rest are added, the model is not asked that
// round again.
func TestPlanResumesADecidedRound(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx, t.TempDir())
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "progress", Expect: fakeopenai.Expect{UserContains: []string{"Task x: done", "answer of p4-x", "Task y: done", "answer of p4-y"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("finish", `{"answer": "both", "sources": ["x", "y"]}`)}}},
	))
	p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Start(ctx, plan.Request{ID: "p4", Request: "Find x and y."}); err != nil {
		t.Fatal(err)
	}
	// the record as a planner left it: round 1 decided, not yet added
	data, rev, err := b.GetPlan(ctx, "p4")
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	json.Unmarshal(data, &rec)
	rec["rounds"] = []plan.Round{{N: 1, Decision: "add", Tasks: []plan.TaskSpec{{ID: "x", Instruction: "find x"}, {ID: "y", Instruction: "find y from {{x.answer}}", After: []string{"x"}}}}}
	data, _ = json.Marshal(rec)
	if _, err := b.PutPlan(ctx, "p4", data, rev); err != nil {
		t.Fatal(err)
	}
	// and only x was added
	if _, err := b.Add(ctx, board.Task{ID: "p4-x", Instruction: "find x", Labels: map[string]string{"plan": "p4", "plan_task": "x"}}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Work(wctx, board.WorkConfig{Run: func(_ context.Context, c *board.Claim) (*board.Result, error) {
			return &board.Result{Answer: "answer of " + c.Task.ID}, nil
		}})
	}()
	defer func() { stop(); <-done }()
	evs, err := collect(t, ctx, p, "p4")
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, ev := range evs {
		if ev.Kind == plan.TaskAdded {
			added = append(added, ev.Task.Task.ID)
		}
	}
	if strings.Join(added, ",") != "p4-y" {
		t.Errorf("added on resume: %v, want only p4-y", added)
	}
	y, err := b.Get(ctx, "p4-y")
	if err != nil || y.Task.Instruction != "find y from {{p4-x.answer}}" || strings.Join(y.Task.After, ",") != "p4-x" {
		t.Errorf("task y: %+v %v", y.Task, err)
	}
	if got, _ := plan.Get(ctx, b, "p4"); got.State != plan.Done || got.Answer != "both" {
		t.Errorf("the plan: %+v", got)
	}
}
