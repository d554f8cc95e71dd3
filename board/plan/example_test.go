package plan_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// A planner on a board of its own: the model (here a scripted one) puts
// two lookups and a task after them on the board, workers run them (here
// a RunFunc that answers from the instruction; surf work drives
// surfers), and the model answers from their results.
func Example() {
	dir, err := os.MkdirTemp("", "plan-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	work, stop := context.WithCancel(ctx)
	defer stop()
	go b.Work(work, board.WorkConfig{Workers: 2, Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
		return &board.Result{Answer: strings.ToUpper(c.Task.Instruction)}, nil
	}})

	srv := fakeopenai.New(fakeopenai.NewScript(
		fakeopenai.CallTool("add_tasks", `{"tasks": [
			{"id": "hotels", "instruction": "find a hotel near the harbour"},
			{"id": "sights", "instruction": "find the harbour's sights"},
			{"id": "day", "instruction": "plan a day", "after": ["hotels", "sights"]}]}`),
		fakeopenai.CallTool("finish", `{"answer": "A day at the harbour.", "sources": ["day", "hotels"]}`),
	))
	defer srv.Close()
	model, err := llm.New(ctx, llm.Config{BaseURL: srv.URL(), Model: "test-model"})
	if err != nil {
		log.Fatal(err)
	}

	p, err := plan.New(plan.Config{Board: b, Model: model, ModelName: "test-model"})
	if err != nil {
		log.Fatal(err)
	}
	pl, err := p.Start(ctx, plan.Request{ID: "trip", Request: "Plan a day at the harbour."})
	if err != nil {
		log.Fatal(err)
	}
	for ev, err := range p.Run(ctx, pl.ID) { // Run(ctx, pl.ID) again would resume
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Kind {
		case plan.RoundDecided:
			fmt.Println("round", ev.Round.N, ev.Round.Decision, len(ev.Round.Tasks), "tasks")
		case plan.PlanDone:
			fmt.Println(ev.Plan.Answer, ev.Plan.Sources)
		}
	}
	day, err := b.Get(ctx, "trip-day")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(day.Task.After, day.Result.Answer)
	// Output:
	// round 1 add 3 tasks
	// round 2 finish 0 tasks
	// A day at the harbour. [day hotels]
	// [trip-hotels trip-sights] PLAN A DAY
}
