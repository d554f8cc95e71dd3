package plan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/worker"
)

func TestMain(m *testing.M) {
	if os.Getenv("SURF_PLAN_CHILD") != "" {
		os.Exit(plannerChild())
	}
	browsertest.Main(m)
}

func llmClient(baseURL string) (*llm.Client, error) {
	return llm.New(context.Background(), llm.Config{BaseURL: baseURL, Model: "test-model", MaxRetries: -1})
}

// site is a loopback site of prices: /a, /b, /c and /c-new each say one;
// /gone is a page that is gone (404).
func site(t *testing.T) *httptest.Server {
	t.Helper()
	page := func(title string) string {
		return "<!doctype html><title>" + title + "</title><h1>" + title + "</h1>"
	}
	mux := http.NewServeMux()
	for path, title := range map[string]string{"/a": "Price of A: 10 EUR", "/b": "Price of B: 20 EUR", "/c": "Price of C: 30 EUR", "/c-new": "Price of C: 30 EUR"} {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page(title)) })
	}
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, page("Not Found"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

var (
	titleRE   = regexp.MustCompile(`title "([^"]*)"`)
	handedRE  = regexp.MustCompile(`(?s)Task ([A-Za-z0-9_-]+) answered:\n<<<([0-9a-f]+)\n(.*?)\n([0-9a-f]+)>>>`)
	numberRE  = regexp.MustCompile(`(\d+) EUR`)
	surferKey = "Task: "
)

// surferModel is the surfers' model, stateless: on a page that is gone it
// scrolls (and the task, allowed one step, fails); a task handed results
// answers "total N EUR", their sum; any other answers the page's title.
type surferModel struct{}

func (surferModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		http.Error(w, "not a chat completion", http.StatusBadRequest)
		return
	}
	text := func(m openai.ChatCompletionMessage) string {
		s := m.Content
		for _, p := range m.MultiContent {
			s += p.Text
		}
		return s
	}
	first, title := "", ""
	for _, m := range req.Messages {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		if s := text(m); first == "" && strings.Contains(s, surferKey) {
			first = s
		}
		if t := titleRE.FindStringSubmatch(text(m)); t != nil {
			title = t[1]
		}
	}
	tool, args := "stop_action", map[string]any{"answer": title}
	if handed := handedRE.FindAllStringSubmatch(first, -1); len(handed) > 0 {
		sum := 0
		for _, h := range handed {
			for _, n := range numberRE.FindAllStringSubmatch(h[3], -1) {
				v, _ := strconv.Atoi(n[1])
				sum += v
			}
		}
		args["answer"] = fmt.Sprintf("total %d EUR", sum)
	} else if strings.Contains(title, "Not Found") {
		tool, args = "page_down", map[string]any{}
	}
	a, _ := json.Marshal(args)
	resp := openai.ChatCompletionResponse{
		ID: "surfer", Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: tool, Arguments: string(a)}}}}, FinishReason: openai.FinishReasonToolCalls}},
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func client(t *testing.T, baseURL string) *llm.Client {
	t.Helper()
	c, err := llm.New(context.Background(), llm.Config{BaseURL: baseURL, Model: "test-model", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runs counts the runs of each task.
type runs struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *runs) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[id]
}

// startWorkers runs real surfers (one browser, the surfer model) on b
// until the test ends, counting each task's runs.
func startWorkers(t *testing.T, ctx context.Context, b *board.Board) *runs {
	t.Helper()
	model := httptest.NewServer(surferModel{})
	t.Cleanup(model.Close)
	w, err := worker.New(ctx, worker.Config{
		Sandbox: sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy()},
		Model:   client(t, model.URL+"/v1"), ModelName: "test-model", MaxSteps: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	counted := &runs{n: map[string]int{}}
	run := func(ctx context.Context, c *board.Claim) (*board.Result, error) {
		counted.mu.Lock()
		counted.n[c.Task.ID]++
		counted.mu.Unlock()
		return w.Run(ctx, c)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Work(wctx, board.WorkConfig{Run: run, Workers: 3, MaxAttempts: 1})
	}()
	t.Cleanup(func() {
		stop()
		<-done
		w.Close()
	})
	return counted
}

func openBoard(t *testing.T, ctx context.Context, dir string) *board.Board {
	t.Helper()
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func call(name, args string) fakeopenai.ToolCall {
	return fakeopenai.ToolCall{Name: name, Arguments: args}
}

// collect runs the plan to its end, gathering its events.
func collect(t *testing.T, ctx context.Context, p *plan.Planner, id string) ([]plan.Event, error) {
	t.Helper()
	var evs []plan.Event
	for ev, err := range p.Run(ctx, id) {
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

const ledgerArgs = `{"facts_given": ["three items A, B and C"], "facts_to_lookup": ["the price of A", "the price of B", "the price of C"], "facts_to_derive": ["the total"], "guesses": [], "plan": "- look up the three prices at once\n- add them up"}`

func addTasks(site string, c string) string {
	return fmt.Sprintf(`{"tasks": [
		{"id": "A", "instruction": "Find the price of A.", "start_url": "%[1]s/a"},
		{"id": "B", "instruction": "Find the price of B.", "start_url": "%[1]s/b"},
		{"id": "C", "instruction": "Find the price of C.", "start_url": "%[1]s%[2]s"},
		{"id": "total", "instruction": "Add up the prices of A, B and C.", "start_url": "%[1]s/a", "after": ["A", "B", "C"]}]}`, site, c)
}

// TestPlanThreeLookupsAndADerivedFact (issue 33, acceptance 1): the
// planner writes the ledger and four tasks, three in parallel and one
// after them; real workers run them; the progress call sees their
// results and finishes, naming its sources.
func TestPlanThreeLookupsAndADerivedFact(t *testing.T) {
	ctx := testCtx(t)
	srv := site(t)
	b := openBoard(t, ctx, t.TempDir())
	counted := startWorkers(t, ctx, b)
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "plan", Expect: fakeopenai.Expect{ToolsInclude: []string{"add_tasks", "update_ledger", "give_up"}, ToolsExclude: []string{"finish"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("update_ledger", ledgerArgs), call("add_tasks", addTasks(srv.URL, "/c"))}}},
		fakeopenai.Turn{Name: "progress", Expect: fakeopenai.Expect{UserContains: []string{"Task total: done", "total 60 EUR", "Price of C: 30 EUR", "Facts to derive:\n- the total"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("finish", `{"answer": "The three cost 60 EUR in all.", "sources": ["total", "A", "B", "C"]}`)}}},
	))
	p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := p.Start(ctx, plan.Request{ID: "p1", Request: "What do A, B and C cost together?"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, ctx, p, pl.ID)
	if err != nil {
		for _, r := range fake.Requests() {
			t.Logf("request %d: %s", r.N, r.Body)
		}
		t.Fatal(err)
	}
	end := evs[len(evs)-1]
	if end.Kind != plan.PlanDone || end.Plan.Answer != "The three cost 60 EUR in all." || strings.Join(end.Plan.Sources, ",") != "total,A,B,C" {
		t.Fatalf("the plan ended %s: %+v", end.Kind, end.Plan)
	}
	// the DAG on the board: three tasks in parallel, one after them
	for _, id := range []string{"p1-A", "p1-B", "p1-C", "p1-total"} {
		rec, err := b.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		wantAfter := ""
		if id == "p1-total" {
			wantAfter = "p1-A,p1-B,p1-C"
		}
		if rec.State != board.Done || strings.Join(rec.Task.After, ",") != wantAfter || rec.Task.Labels["plan"] != "p1" {
			t.Errorf("task %s: %s after %v labels %v", id, rec.State, rec.Task.After, rec.Task.Labels)
		}
		if n := counted.count(id); n != 1 {
			t.Errorf("task %s ran %d times", id, n)
		}
	}
	if rec, _ := b.Get(ctx, "p1-total"); rec.Result == nil || rec.Result.Answer != "total 60 EUR" {
		t.Errorf("the derived fact: %+v", rec.Result)
	}
	// the record on the board: the ledger and the rounds
	got, err := plan.Get(ctx, b, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != plan.Done || len(got.Rounds) != 2 || got.Rounds[0].Decision != "add" || !got.Rounds[0].Added || got.Rounds[1].Decision != "finish" {
		t.Errorf("the plan's record: %+v", got)
	}
	if strings.Join(got.Ledger.FactsToDerive, ",") != "the total" || got.Ledger.Plan == "" {
		t.Errorf("the ledger: %+v", got.Ledger)
	}
	kinds := map[plan.EventKind]int{}
	for _, ev := range evs {
		kinds[ev.Kind]++
	}
	if kinds[plan.TaskAdded] != 4 || kinds[plan.TaskEnded] != 4 || kinds[plan.RoundDecided] != 2 {
		t.Errorf("events: %v", kinds)
	}
}

// TestPlanReplansAroundAFailedTask (issue 33, acceptance 2): task C's
// page is gone, so C fails and the task after it too; the progress call
// sees why, its answer resting on the failed task is refused, so is a
// repeat of C, and it re-plans with a task on another page; the request
// is still answered.
func TestPlanReplansAroundAFailedTask(t *testing.T) {
	ctx := testCtx(t)
	srv := site(t)
	b := openBoard(t, ctx, t.TempDir())
	counted := startWorkers(t, ctx, b)
	replan := fmt.Sprintf(`{"tasks": [
		{"id": "C2", "instruction": "Find the price of C on its new page.", "start_url": "%[1]s/c-new"},
		{"id": "total2", "instruction": "Add up the prices of A, B and C.", "start_url": "%[1]s/a", "after": ["A", "B", "C2"]}]}`, srv.URL)
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "plan", Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("update_ledger", ledgerArgs), call("add_tasks", addTasks(srv.URL, "/gone"))}}},
		fakeopenai.Turn{Name: "progress: a finish on a failed task", Expect: fakeopenai.Expect{UserContains: []string{"Task C: failed (the run ended with max_steps", "Task total: failed (dependency " + "p2-C failed"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("finish", `{"answer": "30 EUR", "sources": ["A", "C"]}`)}}},
		fakeopenai.Turn{Name: "the same task again", Expect: fakeopenai.Expect{ToolContains: []string{`source "C" did not succeed (failed: the run ended with max_steps`}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("add_tasks", fmt.Sprintf(`{"tasks": [{"id": "C1", "instruction": "find the  price of C.", "start_url": "%s/gone"}]}`, srv.URL))}}},
		fakeopenai.Turn{Name: "re-plan", Expect: fakeopenai.Expect{ToolContains: []string{`task "C" asked the same`, "do not repeat it"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("add_tasks", replan)}}},
		fakeopenai.Turn{Name: "answer", Expect: fakeopenai.Expect{UserContains: []string{"Task C2: done", "Task total2: done", "total 60 EUR"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{call("finish", `{"answer": "60 EUR in all.", "sources": ["total2", "A", "B", "C2"]}`)}}},
	))
	p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := p.Start(ctx, plan.Request{ID: "p2", Request: "What do A, B and C cost together?"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := collect(t, ctx, p, pl.ID)
	if err != nil {
		t.Fatal(err)
	}
	var ended []string
	for _, ev := range evs {
		if ev.Kind == plan.TaskEnded {
			ended = append(ended, ev.Task.Task.ID)
		}
	}
	if slices.Sort(ended); strings.Join(ended, ",") != "p2-A,p2-B,p2-C,p2-C2,p2-total,p2-total2" {
		t.Errorf("the ends reported: %v, want each task's once", ended)
	}
	got, err := plan.Get(ctx, b, "p2")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != plan.Done || got.Answer != "60 EUR in all." || strings.Join(got.Sources, ",") != "total2,A,B,C2" {
		t.Fatalf("the plan: %+v", got)
	}
	if len(got.Rounds) != 3 || got.Rounds[1].Decision != "replan" || len(got.Rounds[1].Failed) != 2 || !strings.HasPrefix(got.Rounds[1].Failed[0], "C: failed") {
		t.Errorf("the rounds: %+v", got.Rounds)
	}
	for id, want := range map[string]board.State{"p2-C": board.Failed, "p2-total": board.Failed, "p2-C2": board.Done, "p2-total2": board.Done} {
		if rec, err := b.Get(ctx, id); err != nil || rec.State != want {
			t.Errorf("task %s: %s, want %s (%v)", id, rec.State, want, err)
		}
	}
	if n := counted.count("p2-C"); n != 1 {
		t.Errorf("C ran %d times", n)
	}
	if _, err := b.Get(ctx, "p2-C1"); err == nil {
		t.Error("the repeat of C is on the board")
	}
}

// failingWorkers run every task on b into a failure: every page is gone.
func failingWorkers(t *testing.T, ctx context.Context, b *board.Board) {
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Work(wctx, board.WorkConfig{Workers: 2, MaxAttempts: 1, Run: func(context.Context, *board.Claim) (*board.Result, error) {
			return nil, fmt.Errorf("the page is gone")
		}})
	}()
	t.Cleanup(func() { stop(); <-done })
}

// TestPlanLimitsEndAPlanThatNeverConverges (issue 33, acceptance 2): a
// model that keeps adding tasks that fail is ended by the round limit,
// and by the stall detector, each time with a give_up recorded.
func TestPlanLimitsEndAPlanThatNeverConverges(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx, t.TempDir())
	failingWorkers(t, ctx, b)
	add := func(id string) fakeopenai.Turn {
		return fakeopenai.CallTool("add_tasks", `{"tasks": [{"id": "`+id+`", "instruction": "Try page `+id+`.", "start_url": "http://127.0.0.1:1/`+id+`"}]}`)
	}
	for _, tc := range []struct {
		name  string
		req   plan.Request
		turns []fakeopenai.Turn
		want  string
	}{
		{"rounds", plan.Request{ID: "rounds", MaxRounds: 2, MaxStalls: 10}, []fakeopenai.Turn{
			add("x1"),
			{Expect: fakeopenai.Expect{ToolsExclude: []string{"add_tasks"}, UserContains: []string{"This is the last round"}}, Reply: add("x2").Reply},
		}, "the plan reached its limits (2 rounds, 20 tasks) without an answer"},
		{"stalls", plan.Request{ID: "stalls"}, []fakeopenai.Turn{add("x1"), add("x2")}, "stalled: 2 rounds in a row without a task done"},
		{"tasks", plan.Request{ID: "tasks", MaxTasks: 1}, []fakeopenai.Turn{
			add("x1"),
			{Expect: fakeopenai.Expect{ToolsExclude: []string{"add_tasks"}}, Reply: fakeopenai.CallTool("give_up", `{"reason": "no page left to try"}`).Reply},
		}, "no page left to try"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := fakeopenai.Start(t, fakeopenai.NewScript(tc.turns...))
			p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model"})
			if err != nil {
				t.Fatal(err)
			}
			tc.req.Request = "Find the price of X."
			pl, err := p.Start(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := collect(t, ctx, p, pl.ID)
			if err != nil {
				t.Fatal(err)
			}
			if end := evs[len(evs)-1]; end.Kind != plan.PlanGaveUp {
				t.Errorf("the run ended with %s", end.Kind)
			}
			got, err := plan.Get(ctx, b, pl.ID)
			if err != nil {
				t.Fatal(err)
			}
			last := got.Rounds[len(got.Rounds)-1]
			if got.State != plan.GaveUp || got.Reason != tc.want || last.Decision != "give_up" || last.Note != tc.want {
				t.Errorf("the plan: state %s reason %q, last round %+v; want the reason %q", got.State, got.Reason, last, tc.want)
			}
		})
	}
}

// TestPlanReview (issue 33, acceptance 4): the first plan goes to a
// reviewer before any task runs; the plan it edits (one task removed) is
// the plan that runs, and a rejected plan runs nothing.
func TestPlanReview(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx, t.TempDir())
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Work(wctx, board.WorkConfig{Run: func(_ context.Context, c *board.Claim) (*board.Result, error) {
			return &board.Result{Answer: "answer of " + c.Task.ID}, nil
		}})
	}()
	defer func() { stop(); <-done }()
	three := `{"tasks": [{"id": "x", "instruction": "find x"}, {"id": "y", "instruction": "find y"}, {"id": "sum", "instruction": "add them", "after": ["x", "y"]}]}`
	t.Run("edited", func(t *testing.T) {
		fake := fakeopenai.Start(t, fakeopenai.NewScript(
			fakeopenai.CallTool("add_tasks", three),
			fakeopenai.Turn{Expect: fakeopenai.Expect{UserContains: []string{"Task x: done", "Task sum: done"}, UserExcludes: []string{"Task y:"}},
				Reply: fakeopenai.CallTool("finish", `{"answer": "x and the sum", "sources": ["x", "sum"]}`).Reply},
		))
		var shown []string
		review := func(_ context.Context, pl *plan.Plan, tasks []plan.TaskSpec) ([]plan.TaskSpec, error) {
			// nothing is on the board while the person looks
			if recs, _ := b.List(ctx); len(recs) != 0 {
				t.Errorf("%d tasks on the board during the review", len(recs))
			}
			var out []plan.TaskSpec
			for _, ts := range tasks {
				shown = append(shown, ts.ID)
				if ts.ID == "y" {
					continue
				}
				if ts.ID == "sum" {
					ts.After = []string{"x"}
				}
				out = append(out, ts)
			}
			return out, nil
		}
		p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model", Review: review})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Start(ctx, plan.Request{ID: "edited", Request: "Find x and y."})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := collect(t, ctx, p, pl.ID); err != nil {
			t.Fatal(err)
		}
		got, _ := plan.Get(ctx, b, pl.ID)
		if got.State != plan.Done || got.Rounds[0].Reviewed != "edited" || len(got.Rounds[0].Tasks) != 2 || strings.Join(shown, ",") != "x,y,sum" {
			t.Errorf("the plan: %+v; shown %v", got, shown)
		}
		if _, err := b.Get(ctx, "edited-y"); err == nil {
			t.Error("the task removed by the reviewer is on the board")
		}
		if sum, err := b.Get(ctx, "edited-sum"); err != nil || strings.Join(sum.Task.After, ",") != "edited-x" {
			t.Errorf("the edited task: %+v %v", sum.Task, err)
		}
	})
	t.Run("rejected", func(t *testing.T) {
		fake := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.CallTool("add_tasks", three)))
		p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model",
			Review: func(context.Context, *plan.Plan, []plan.TaskSpec) ([]plan.TaskSpec, error) {
				return nil, plan.ErrRejected
			}})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Start(ctx, plan.Request{ID: "rejected", Request: "Find x and y."})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := collect(t, ctx, p, pl.ID); err != nil {
			t.Fatal(err)
		}
		got, _ := plan.Get(ctx, b, pl.ID)
		if got.State != plan.GaveUp || got.Reason != "rejected by the reviewer" || len(got.Tasks()) != 0 {
			t.Errorf("the plan: %+v", got)
		}
		if _, err := b.Get(ctx, "rejected-x"); err == nil {
			t.Error("a task of the rejected plan is on the board")
		}
	})
}

// TestPlanPolicyNarrowsTasks: the plan's policy is every task's, and a
// task whose start URL it denies goes back to the model as an error,
// nothing added.
func TestPlanPolicyNarrowsTasks(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx, t.TempDir())
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.CallTool("add_tasks", `{"tasks": [{"id": "out", "instruction": "look", "start_url": "http://127.0.0.2:8080/"}, {"id": "in", "instruction": "look", "start_url": "http://127.0.0.1:8080/"}]}`),
		fakeopenai.Turn{Expect: fakeopenai.Expect{ToolContains: []string{`task "out": start URL http://127.0.0.2:8080/ is outside the plan's policy`, "No task was added"}},
			Reply: fakeopenai.CallTool("add_tasks", `{"tasks": [{"id": "in", "instruction": "look", "start_url": "http://127.0.0.1:8080/"}]}`).Reply},
	))
	p, err := plan.New(plan.Config{Board: b, Model: client(t, fake.URL()), ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	rule, err := policy.ParseHostRule("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	pol := &board.Policy{Allow: []policy.HostRule{rule}}
	if _, err := p.Start(ctx, plan.Request{ID: "pol", Request: "look", StartURL: "http://127.0.0.2/", Policy: pol}); err == nil || !strings.Contains(err.Error(), "outside the plan's policy") {
		t.Errorf("a start URL outside the plan's policy: %v", err)
	}
	if _, err := p.Start(ctx, plan.Request{ID: "pol", Request: "look", Policy: pol}); err != nil {
		t.Fatal(err)
	}
	for ev, err := range p.Run(ctx, "pol") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == plan.TaskAdded {
			break // the task is on the board: enough
		}
	}
	rec, err := b.Get(ctx, "pol-in")
	if err != nil {
		t.Fatal(err)
	}
	if rec.Task.Policy == nil || len(rec.Task.Policy.Allow) != 1 || rec.Task.Policy.Allow[0].String() != rule.String() {
		t.Errorf("the task's policy: %+v", rec.Task.Policy)
	}
	if _, err := b.Get(ctx, "pol-out"); err == nil {
		t.Error("the task outside the policy is on the board")
	}
}
