package boardui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func openBoard(t *testing.T, ctx context.Context) *board.Board {
	t.Helper()
	b, err := board.Open(ctx, board.Config{Dir: t.TempDir(), Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// serve serves the board's page behind the guard, with a token, on
// loopback.
func serve(t *testing.T, ctx context.Context, b *board.Board, bus *livebus.Follower) (base, token string) {
	t.Helper()
	ui, err := boardui.New(ctx, boardui.Config{Board: b, Bus: bus, Who: "the tester"})
	if err != nil {
		t.Fatal(err)
	}
	token = mcpserver.GenerateToken()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcpserver.Guard(ui, ln.Addr().String(), mcpserver.HTTPOptions{Token: token}, true, nil)}
	go srv.Serve(ln)
	t.Cleanup(func() {
		ui.Close()
		srv.Close()
	})
	return "http://" + ln.Addr().String(), token
}

// viewer is the person's browser: a page in a context of its own.
func viewer(t *testing.T) playwright.Page {
	t.Helper()
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	page, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	page.SetDefaultTimeout(60000)
	return page
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeWorker is a surf work process as the board's page sees it: board
// workers whose runs are sessions in the process's own live hub,
// published on the board's NATS.
type fakeWorker struct {
	name string
	hub  *live.Hub
	bus  *livebus.Bridge
}

func startWorker(t *testing.T, ctx context.Context, b *board.Board, name string, run func(ctx context.Context, c *board.Claim, ls *live.Session) (*board.Result, error)) *fakeWorker {
	t.Helper()
	w := &fakeWorker{name: name, hub: live.New(live.Config{})}
	bridge, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: w.hub, Worker: name, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w.bus = bridge
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Work(wctx, board.WorkConfig{Name: name, Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
			ls, err := w.hub.Open(live.SessionOptions{Owner: fmt.Sprintf("worker %s task %s", c.Worker, c.Task.ID), Task: c.Task.ID})
			if err != nil {
				return nil, err
			}
			defer ls.Close()
			end := ls.Begin()
			defer end()
			defer livebus.StopCancelsTask(ctx, ls, c)() // as surf work's live view does
			if c.Task.ID == "forever" {                 // on whichever worker claims it
				<-ctx.Done() // until a person stops it
				return nil, ctx.Err()
			}
			return run(ctx, c, ls)
		}})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		bridge.Close()
		w.hub.Close()
	})
	return w
}

// waitFor polls cond (a condition on the board or a hub, not on time)
// until it holds, within a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBoardPage: two worker processes on one board (each with its own
// hub, published on the board's NATS), and the board's page in a real
// browser: the tasks by state with their dependencies, both workers'
// running sessions, an approval of a task on worker 2 answered from the
// page, a takeover and hand-back of worker 1's session, and a finished
// task's answer, structured result and report.
func TestBoardPage(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx)
	bus, err := livebus.Follow(b.Conn())
	ok(t, err)
	t.Cleanup(bus.Close)
	base, token := serve(t, ctx, b, bus)

	// worker 1 runs "slow" until the test lets it go
	release := make(chan struct{})
	w1 := startWorker(t, ctx, b, "w1", func(ctx context.Context, c *board.Claim, ls *live.Session) (*board.Result, error) {
		ls.Progress("step 1: reading the page")
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		note, err := ls.Between(ctx)
		if err != nil {
			return nil, err
		}
		return &board.Result{Answer: "slow done", Data: json.RawMessage(`{"price":42,"note":` + fmt.Sprintf("%q", note) + `}`), EndReason: "answered", Steps: 3}, nil
	})
	_, err = b.Add(ctx, board.Task{ID: "slow", Instruction: "read the slow page"})
	ok(t, err)
	waitFor(t, "worker 1's session", func() bool { return len(w1.hub.List()) == 1 })

	// worker 2 (worker 1 is busy) runs "buy", which asks for approval
	verdicts := make(chan bool, 1)
	startWorker(t, ctx, b, "w2", func(ctx context.Context, c *board.Claim, ls *live.Session) (*board.Result, error) {
		if c.Task.ID != "buy" {
			return &board.Result{Answer: "checked", EndReason: "answered", Steps: 1}, nil
		}
		yes, err := ls.Approver(nil).Approve(ctx, policy.Decision{Tool: "click", URL: "https://shop.test/buy", Rule: policy.RuleAsk, Reason: "ask: buying costs money"})
		if err != nil {
			return nil, err
		}
		verdicts <- yes
		report, err := c.PutFile(ctx, "report.html", strings.NewReader(`<!doctype html><title>report of buy</title><p id="r">the lamp was bought</p>`))
		if err != nil {
			return nil, err
		}
		return &board.Result{Answer: fmt.Sprintf("approved=%v", yes), EndReason: "answered", Steps: 2, Report: report}, nil
	})
	_, err = b.Add(ctx, board.Task{ID: "buy", Instruction: "buy the lamp"}, board.Task{ID: "after-buy", Instruction: "check the order", After: []string{"buy"}})
	ok(t, err)

	page := viewer(t)
	_, err = page.Goto(base + "/?token=" + token)
	ok(t, err)

	// both workers' running sessions are listed
	row1 := page.Locator(`#sessions tr[data-worker="w1"][data-task="slow"]`)
	row2 := page.Locator(`#sessions tr[data-worker="w2"][data-task="buy"]`)
	ok(t, row1.WaitFor())
	ok(t, row2.WaitFor())
	// the dependent task waits, named with its dependency
	pending := page.Locator(`#tasks section[data-state="pending"] details[data-id="after-buy"]`)
	ok(t, pending.WaitFor())
	txt, err := pending.Locator("summary").TextContent()
	ok(t, err)
	if !strings.Contains(txt, "after buy") {
		t.Errorf("the pending task's line %q does not name its dependency", txt)
	}

	// the approval of worker 2's task, answered from the page
	approve := row2.Locator(`.approval button.approve`)
	ok(t, approve.WaitFor())
	if n, _ := row1.Locator(".approval").Count(); n != 0 {
		t.Errorf("worker 1's session shows %d approvals; it asked none", n)
	}
	ok(t, approve.Click())
	select {
	case yes := <-verdicts:
		if !yes {
			t.Fatal("worker 2's approval was denied; the page approved it")
		}
	case <-ctx.Done():
		t.Fatal("worker 2's approval was never answered")
	}
	done := page.Locator(`#tasks section[data-state="done"] details[data-id="buy"]`)
	ok(t, done.WaitFor())
	ok(t, done.Locator("summary").Click())
	ok(t, done.Locator(`dd:has-text("approved=true")`).WaitFor())
	// the report, from the board's file store, in a sandbox
	href, err := done.Locator(`a:text-is("report")`).GetAttribute("href")
	ok(t, err)
	rep, err := page.Context().Request().Get(base + href)
	ok(t, err)
	body, err := rep.Text()
	ok(t, err)
	if rep.Status() != 200 || !strings.Contains(body, "the lamp was bought") {
		t.Fatalf("the report: %d %q", rep.Status(), body)
	}
	if csp := rep.Headers()["content-security-policy"]; !strings.Contains(csp, "sandbox") || strings.Contains(csp, "script-src") {
		t.Errorf("the report's CSP %q is not a sandbox without scripts", csp)
	}
	// the dependent task is no longer pending
	ok(t, page.Locator(`#tasks details[data-id="after-buy"]`).Locator(`xpath=ancestor::section[@data-state!="pending"]`).WaitFor())

	// take over worker 1's session from the page, then hand it back
	ok(t, row1.Locator("button.takeover").Click())
	waitFor(t, "worker 1's session taken over", func() bool {
		l := w1.hub.List()
		return len(l) == 1 && l[0].State == live.TakenOver && l[0].TakenBy == "the tester"
	})
	ok(t, row1.Locator("input.handback-msg").Fill("the code was 1234"))
	ok(t, row1.Locator("button.handback").Click())
	waitFor(t, "worker 1's session handed back", func() bool {
		l := w1.hub.List()
		return len(l) == 1 && l[0].State != live.TakenOver
	})
	close(release)
	slow := page.Locator(`#tasks section[data-state="done"] details[data-id="slow"]`)
	ok(t, slow.WaitFor())
	ok(t, slow.Locator("summary").Click())
	data, err := slow.Locator(`dt:text-is("result") + dd`).TextContent()
	ok(t, err)
	if !strings.Contains(data, `"price": 42`) || !strings.Contains(data, "handed it back") {
		t.Errorf("the structured result shown is %q: want the price and the hand-back note", data)
	}
	if !strings.Contains(data, `the code was 1234`) {
		t.Errorf("the person's hand-back message did not reach the run: %q", data)
	}

	// Stop on the page ends a run (on whichever worker took it): its task
	// is cancelled on the board, and the task after it fails, as the
	// board's rules say
	_, err = b.Add(ctx, board.Task{ID: "forever", Instruction: "wait"}, board.Task{ID: "after-forever", Instruction: "never", After: []string{"forever"}})
	ok(t, err)
	rowF := page.Locator(`#sessions tr[data-task="forever"]`)
	ok(t, rowF.Locator("button.stop").Click())
	recs, err := b.Wait(ctx, "forever", "after-forever")
	ok(t, err)
	if recs[0].State != board.Cancelled || !strings.Contains(recs[0].Reason, "stopped by the tester") || recs[1].State != board.Failed {
		t.Errorf("after Stop: %s (%q), then %s (%q); want cancelled by the tester, then failed", recs[0].State, recs[0].Reason, recs[1].State, recs[1].Reason)
	}
	// the ended sessions leave the list
	ok(t, page.Locator(`#sessions tbody tr`).First().WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateDetached}))
}

// TestBoardPageRefusesForeignPosts: a state change needs this page's
// own origin, and a file must be one a task's result names.
func TestBoardPageRefusesForeignPosts(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx)
	bus, err := livebus.Follow(b.Conn())
	ok(t, err)
	t.Cleanup(bus.Close)
	base, token := serve(t, ctx, b, bus)
	ok(t, b.PutFile(ctx, "secret/notes.txt", strings.NewReader("not for the page")))

	do := func(method, path, origin string) (*http.Response, string) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(`{"id":1,"approve":true}`))
		ok(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		ok(t, err)
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	if resp, body := do("POST", "/s/x/y/approve", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a POST without Origin: %d %s", resp.StatusCode, body)
	}
	if resp, body := do("POST", "/s/x/y/approve", "http://evil.test"); resp.StatusCode != http.StatusForbidden {
		t.Errorf("a cross-origin POST: %d %s", resp.StatusCode, body)
	}
	if resp, body := do("POST", "/s/nobody/y/approve", base); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a same-origin POST for an unknown worker: %d %s, want 404", resp.StatusCode, body)
	}
	resp, body := do("GET", "/", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") == "" || strings.Contains(body, "<script>") {
		t.Errorf("the page: %d, CSP %q", resp.StatusCode, resp.Header.Get("Content-Security-Policy"))
	}
	if resp, body := do("GET", "/files/secret/notes.txt", ""); resp.StatusCode != http.StatusNotFound || strings.Contains(body, "not for the page") {
		t.Errorf("a file no result names: %d %q", resp.StatusCode, body)
	}
}
