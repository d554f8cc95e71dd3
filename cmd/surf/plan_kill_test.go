package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// TestPlanResumeAfterSIGKILL (issue 33, acceptance 3): "surf plan" is
// SIGKILLed once its first round's tasks are on the board; "surf work"
// runs them, and "surf plan --resume" finishes the plan: the first round
// is not asked again, no task is added again, and each task ran once.
func TestPlanResumeAfterSIGKILL(t *testing.T) {
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := board.Open(ctx, board.Config{Dir: data}) // the board outlives the planner
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	planner := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.CallTool("add_tasks", `{"tasks": [{"id": "A", "instruction": "Answer the title."}, {"id": "B", "instruction": "Answer the title."}, {"id": "C", "instruction": "Answer the title."}, {"id": "D", "instruction": "Answer the title again.", "after": ["A", "B", "C"]}]}`),
		fakeopenai.Turn{Expect: fakeopenai.Expect{UserContains: []string{"Task D: done", "seen: Riverside Library"}},
			Reply: fakeopenai.CallTool("finish", `{"answer": "Riverside Library.", "sources": ["D"]}`).Reply},
	))
	common := []string{"--data", data, "--base-url", planner.URL(), "--model", "test-model"}
	first := surfCmd(append([]string{"plan", "What is the title?", "--id", "k1", "--start-url", site.URL + "/"}, common...)...)
	var firstOut syncBuffer
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	for { // no worker runs yet: the planner waits on its first tasks
		if pl, err := plan.Get(ctx, b, "k1"); err == nil && pl.State == plan.Running {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the plan never ran its first tasks:\n%s", firstOut.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	first.Process.Kill() // SIGKILL
	first.Wait()

	modelURL, stopModel, err := startWorkModel(&workModel{steps: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopModel)
	work := surfCmd("work", "--workers", "2", "--name", "kw", "--data", data, "--allow", site.Host, "--model", "test-model")
	work.Env = append(work.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
	var workOut syncBuffer
	work.Stdout, work.Stderr = &workOut, &workOut
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		work.Process.Signal(os.Interrupt)
		work.Wait()
		for _, id := range []string{"k1-A", "k1-B", "k1-C", "k1-D"} {
			if n := strings.Count(workOut.String(), "start    "+id+" "); n != 1 {
				t.Errorf("task %s ran %d times:\n%s", id, n, workOut.String())
			}
		}
	}()
	resume := surfCmd(append([]string{"plan", "--resume", "k1"}, common...)...)
	out, err := resume.CombinedOutput()
	if err != nil {
		t.Fatalf("surf plan --resume: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "answer: Riverside Library.\nsources: D") || strings.Contains(string(out), "added") || strings.Contains(string(out), "round 1") {
		t.Errorf("surf plan --resume printed:\n%s", out)
	}
	if n := len(planner.Requests()); n != 2 {
		t.Errorf("%d planner requests, want 2 (the first round is not asked again)", n)
	}
}
