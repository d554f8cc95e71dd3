package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestBoardUITwoWorkers is issue 32's acceptance of the board's page:
// two 'surf work' processes on one board, 'surf board ui' in a third,
// and the page driven in surf's own Chromium. Each worker runs a task
// whose policy asks before it opens the site; both running sessions are
// listed with their approvals, the approval of the task on worker 2 is
// answered from the page (over NATS: no worker opens a port), that task
// ends done while worker 1's still waits, and then worker 1's is
// answered too.
func TestBoardUITwoWorkers(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 4, delay: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopModel)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	start := func(name string, args ...string) *lockedBuffer {
		cmd := surfCmd(args...)
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
		out, errb := &lockedBuffer{}, &lockedBuffer{}
		cmd.Stdout, cmd.Stderr = out, errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-exited
			if t.Failed() {
				t.Logf("%s's stdout:\n%s\nstderr:\n%s", name, out.String(), errb.String())
			}
		})
		return errb
	}
	uiErr := start("surf board ui", "board", "ui", "--data", dir, "--http", "127.0.0.1:0")
	for _, w := range []string{"w1", "w2"} {
		start(w, "work", "--workers", "1", "--name", w, "--data", dir, "--allow", site.Host,
			"--model", "test-model", "--max-steps", "10", "--approve", "live")
	}
	login := regexp.MustCompile(`http://\S+/\?token=\S+`)
	var pageURL string
	waitUntil(t, ctx, "surf board ui's address", func() bool {
		pageURL = login.FindString(uiErr.String())
		return pageURL != ""
	})

	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ask := &board.Policy{Ask: []policy.HostRule{{Host: "127.0.0.1"}}}
	_, err = b.Add(ctx,
		board.Task{ID: "harbour", Instruction: "Look at the Harbour Branch page, then say its title.", StartURL: site.URL + "/branch/harbour", Policy: ask},
		board.Task{ID: "hill", Instruction: "Look at the Hill Branch page, then say its title.", StartURL: site.URL + "/branch/hill", Policy: ask})
	if err != nil {
		t.Fatal(err)
	}

	// the person's browser: surf's own Chromium
	page := personPage(ctx, t)
	if _, err := page.Goto(pageURL); err != nil {
		t.Fatal(err)
	}

	// both workers' running sessions are listed, each with its approval
	rows := map[string]playwright.Locator{}
	for _, w := range []string{"w1", "w2"} {
		rows[w] = page.Locator(fmt.Sprintf(`#sessions tr[data-worker=%q]`, w))
		if err := rows[w].Locator(".approval button.approve").WaitFor(); err != nil {
			t.Fatalf("worker %s's session with its approval on the page: %v", w, err)
		}
	}
	task2, err := rows["w2"].GetAttribute("data-task")
	if err != nil || task2 == "" {
		t.Fatalf("worker 2's session names no task: %q %v", task2, err)
	}
	task1, _ := rows["w1"].GetAttribute("data-task")
	if task1 == task2 || (task1 != "harbour" && task1 != "hill") {
		t.Fatalf("the workers run %q and %q: want one task each", task1, task2)
	}

	// worker 1's live picture, on demand, over NATS
	if err := rows["w1"].Locator("button.watch").Click(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, ctx, "a frame of worker 1's live view on the page", func() bool {
		v, err := rows["w1"].Locator("img.live").Evaluate("img => img.naturalWidth", nil)
		n, _ := v.(int)
		return err == nil && n > 0
	})
	if err := rows["w1"].Locator("button.watch").Click(); err != nil {
		t.Fatal(err)
	}
	// and worker 1's screencast stops once nobody watches (after the
	// lease): its session's viewers, as its announcements say
	bus, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	waitUntil(t, ctx, "worker 1's screencast to stop", func() bool {
		for _, s := range bus.Sessions() {
			if s.Worker == "w1" {
				return s.Viewers == 0
			}
		}
		return false
	})

	// the approval for the task on worker 2, answered from the page
	if err := rows["w2"].Locator(".approval button.approve").Click(); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Wait(ctx, task2)
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.State != board.Done || r.Result == nil || !strings.HasPrefix(r.Result.Answer, "seen: ") || len(r.Result.Answer) < 10 || !strings.HasPrefix(r.Worker, "w2/") {
		t.Fatalf("worker 2's task after the page approved: %+v", r)
	}
	if r, err := b.Get(ctx, task1); err != nil || r.State != board.Running {
		t.Fatalf("worker 1's task, whose approval nobody answered: %+v %v", r, err)
	}
	done := page.Locator(fmt.Sprintf(`#tasks section[data-state="done"] details[data-id=%q]`, task2))
	if err := done.WaitFor(); err != nil {
		t.Fatalf("the done task on the page: %v", err)
	}

	// worker 1's, answered from the page too
	if err := rows["w1"].Locator(".approval button.approve").Click(); err != nil {
		t.Fatal(err)
	}
	if recs, err = b.Wait(ctx, task1); err != nil || recs[0].State != board.Done {
		t.Fatalf("worker 1's task: %+v %v", recs, err)
	}
	if err := page.Locator(`#sessions tbody tr`).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}); err != nil {
		t.Fatalf("the ended sessions stay on the page: %v", err)
	}
}

// waitUntil polls cond until it holds or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// personPage opens a page in surf's own Chromium (a sandbox that may reach
// loopback only), for a test that plays the person at a web page surf
// serves; the browser closes when the test ends.
func personPage(ctx context.Context, t *testing.T) playwright.Page {
	t.Helper()
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	page, err := sess.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(120000)
	return page
}
