package worker_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/worker"
)

// A program runs board workers: it opens a board (here an embedded one in
// a temporary directory), starts a worker with its policy and model, and
// hands its Run to the board. The model here is a scripted
// OpenAI-compatible server on loopback (reached through surf's real
// client), and the site is one of surf's test fixtures; with a real model
// and site the code is the same.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	site, err := browsertest.StartSites()
	if err != nil {
		log.Fatal(err)
	}
	defer site.Close()
	fake := fakeopenai.New(fakeopenai.NewScript(
		fakeopenai.CallTool("stop_action", `{"answer": "Riverside Library"}`),
		fakeopenai.CallTool("stop_action", `{"answer": "Harbour Branch"}`),
	))
	defer fake.Close()
	model, err := llm.New(ctx, llm.Config{BaseURL: fake.URL(), Model: "example-model"})
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "worker-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	// The worker's policy allows the site; each task may narrow it.
	allow, _ := policy.ParseHostRule(site.HostA())
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{allow}})
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(ctx, worker.Config{
		Sandbox: sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol},
		Model:   model, ModelName: "example-model",
		MaxSteps: 5,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	if _, err := b.Add(ctx,
		board.Task{ID: "library", Instruction: "Say the library's name.", StartURL: site.A + "/library"},
		board.Task{ID: "branch", Instruction: "Say the branch's name.", StartURL: site.A + "/library/branches", After: []string{"library"}},
	); err != nil {
		log.Fatal(err)
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	go b.Work(work, board.WorkConfig{Run: w.Run, Workers: 2})

	recs, err := b.Wait(ctx, "library", "branch")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range recs {
		fmt.Printf("%s: %s, %s after %d step(s): %s\n", r.Task.ID, r.State, r.Result.EndReason, r.Result.Steps, r.Result.Answer)
		fmt.Println("  ", r.Result.Journal, r.Result.Report)
	}
	// Output:
	// library: done, answered after 1 step(s): Riverside Library
	//    library/attempt-1/journal.jsonl library/attempt-1/report.html
	// branch: done, answered after 1 step(s): Harbour Branch
	//    branch/attempt-1/journal.jsonl branch/attempt-1/report.html
}
