package liveui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/websurfer"
)

// shop is the agent's page: two buttons the policy asks about, a button
// for the person, a link to a host the policy leaves out, and a search
// field whose form submits by GET. Everything sits at fixed fractions of
// the viewport, so the test clicks it on the live view by fraction.
const shopPage = `<!doctype html><html><head><title>Lamp shop</title><style>
body { margin: 0; font: 22px sans-serif; background: #fff; }
#buy { position: fixed; left: 2%%; top: 2%%; width: 20%%; height: 12%%; }
#del { position: fixed; left: 30%%; top: 2%%; width: 20%%; height: 12%%; }
#show { position: fixed; left: 2%%; top: 40%%; width: 45%%; height: 20%%; }
#away { position: fixed; left: 52%%; top: 40%%; width: 45%%; height: 20%%; display: block; background: #fdd; }
#q { position: fixed; left: 2%%; top: 70%%; width: 45%%; height: 12%%; font-size: 24px; }
#status { position: fixed; left: 55%%; top: 70%%; }
</style></head><body>
<button id="buy" onclick="document.getElementById('status').textContent='bought the lamp'; document.body.style.background='#cfc'">Buy lamp</button>
<button id="del" onclick="document.getElementById('status').textContent='deleted'">Delete account</button>
<button id="show" onclick="document.getElementById('status').textContent='code revealed 4417'; document.body.style.background='#ccf'">Show code</button>
<a id="away" href="%s">Elsewhere</a>
<form method="get" action="/"><input id="q" name="q" aria-label="Search"></form>
<div id="status">%s</div>
</body></html>`

// handBackMessage is the person's message to the agent at hand-back.
const handBackMessage = "the code was 4417, said the person"

// typedSecret is what the person types during the takeover.
const typedSecret = "zebraquartz71"

type shop struct {
	url    string
	canary *atomic.Int32 // requests to the denied host
	typed  chan string   // search terms the shop received
}

func serveShop(t *testing.T) *shop {
	t.Helper()
	s := &shop{canary: new(atomic.Int32), typed: make(chan string, 4)}
	// the denied host: loopback, but not in the session's policy
	cl, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this machine: %v", err)
	}
	canary := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.canary.Add(1)
		fmt.Fprint(w, "<title>elsewhere</title>you should not be here")
	})}
	go canary.Serve(cl)
	t.Cleanup(func() { canary.Close() })
	away := "http://" + cl.Addr().String() + "/elsewhere"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := "ready"
		if q := r.URL.Query().Get("q"); q != "" {
			select {
			case s.typed <- q:
			default:
			}
			status = "you searched for " + html.EscapeString(q)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, shopPage, away, status)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/"
	return s
}

// ui serves a hub's UI behind the guard, with a token, on loopback.
func serveUI(t *testing.T, hub *live.Hub) (base, token string) {
	t.Helper()
	ui, err := liveui.New(liveui.Config{Hub: hub})
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
	page.SetDefaultTimeout(30000)
	return page
}

// must(f())(t) is f's value, or the test fails with its error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// liveShot is the live view's image as it is shown now.
func liveShot(t *testing.T, page playwright.Page) []byte {
	t.Helper()
	return must(page.Locator("#live").Screenshot())(t)
}

// waitChange waits until the live view's image differs from before.
func waitChange(t *testing.T, page playwright.Page, before []byte, what string) []byte {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		now := liveShot(t, page)
		if !bytes.Equal(now, before) {
			return now
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the live view did not change after %s", what)
	return nil
}

// waitFrame waits until the live view shows a frame. (Polled from Go:
// the page's CSP forbids the eval that WaitForFunction needs.)
var frameInfo = func() string { return "?" }

func waitFrame(t *testing.T, page playwright.Page) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		v, err := page.Evaluate(`document.getElementById("live").naturalWidth`)
		ok(t, err)
		if n, _ := v.(int); n > 0 {
			return
		}
		if n, _ := v.(float64); n > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	src, _ := page.Evaluate(`document.getElementById("live").src`)
	t.Fatalf("the live view shows no frame (img src %v; the hub's frames: %s)", src, frameInfo())
}

// clickLive clicks the live view at a fraction of its size.
func clickLive(t *testing.T, page playwright.Page, fx, fy float64) {
	t.Helper()
	box := must(page.Locator("#live").BoundingBox())(t)
	ok(t, page.Locator("#live").Click(playwright.LocatorClickOptions{Position: &playwright.Position{X: fx * box.Width, Y: fy * box.Height}}))
}

// findID is the id of the element named name in an observation.
func findID(t *testing.T, o *websurfer.Observation, name string) int {
	t.Helper()
	for _, e := range o.Elements {
		if strings.Contains(e.Name, name) {
			return e.ID
		}
	}
	t.Fatalf("no element %q in the observation:\n%s", name, o.Text())
	return 0
}

// TestLiveViewAcceptance drives the UI in a real browser while an agent
// runs: the list shows the session; the live frame changes after the
// agent acts; Approve lets an ask step proceed and Deny reaches the
// model; the agent asks for help; the person takes over, clicks a link to
// a denied host (blocked, and the UI says so), types into a search field
// and submits it, clicks a button in the live view (the frame changes),
// hands back, and the takeover note is in the agent's next request. What
// the person typed is in no journal, report, HAR or model request.
func TestLiveViewAcceptance(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	site := serveShop(t)
	dir := t.TempDir()
	harPath := filepath.Join(dir, "run.har")
	jpath := filepath.Join(dir, "journal.jsonl")

	pol := must(policy.New(policy.Config{
		Allow: []policy.HostRule{must(policy.ParseHostRule("127.0.0.1"))(t)},
		Actions: []policy.ActionRule{
			{Rule: "risky", Tools: []string{"click"}, Name: `(?i)\b(buy|delete)\b`, Verdict: policy.Ask},
		},
	}))(t)
	sess := must(browsertest.Sandbox(t).NewSession(ctx, sandbox.SessionConfig{Policy: pol, RecordHAR: harPath}))(t)
	sessClosed := false
	defer func() {
		if !sessClosed {
			sess.Close()
		}
	}()

	hub := live.New(live.Config{})
	defer hub.Close()
	ls := must(hub.Open(live.SessionOptions{Owner: "acceptance test", Redact: sess.Policy().Redact}))(t)

	// The ids of the page's elements, from an observation of it.
	probe := must(websurfer.New(ctx, websurfer.Config{Session: sess}))(t)
	first := must(probe.VisitURL(ctx, site.url))(t)
	buy, del := findID(t, first.Observation, "Buy lamp"), findID(t, first.Observation, "Delete account")
	probe.Close()

	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.CallTool("click", fmt.Sprintf(`{"target_id": %d, "reasoning": "buy the lamp"}`, buy)),
		fakeopenai.CallTool("click", fmt.Sprintf(`{"target_id": %d, "reasoning": "delete the account"}`, del)),
		fakeopenai.CallTool("request_help", `{"reason": "a person must reveal the code"}`),
		fakeopenai.CallTool("stop_action", `{"answer": "the code is 4417"}`),
	))
	model := must(llm.New(ctx, llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model", MaxRetryWait: 5 * time.Second}))(t)
	surf := must(websurfer.New(ctx, websurfer.Config{Session: sess, Model: model, ModelName: "test-model",
		Approver: ls.Approver(nil), Human: ls}))(t)
	defer surf.Close()
	ls.Attach(surf, live.SandboxDenials(sess))
	ls.SetRedact(sess.Policy().Redact)
	frameInfo = func() string {
		c, cancel := context.WithTimeout(ctx, time.Millisecond)
		defer cancel()
		_, n, _ := ls.NextFrame(c, 0)
		started, running := ls.Casts()
		return fmt.Sprintf("%d frames, %d screencasts started, running %v", n, started, running)
	}

	base, token := serveUI(t, hub)
	page := viewer(t)

	// The list, after logging in with the token.
	must(page.Goto(base + "/?token=" + token))(t)
	if u := page.URL(); strings.Contains(u, "token") {
		t.Fatalf("the login did not redirect away from the token: %s", u)
	}
	row := page.Locator(fmt.Sprintf(`tr[data-id=%q]`, ls.ID()))
	ok(t, row.WaitFor())
	if txt := must(row.TextContent())(t); !strings.Contains(txt, "acceptance test") {
		t.Fatalf("the list's row says %q", txt)
	}
	if started, _ := ls.Casts(); started != 0 {
		t.Fatalf("a screencast started with nobody on the session's page (%d)", started)
	}

	// The run.
	j := must(journal.Open(jpath, sess.Policy().Redact))(t)
	var wg sync.WaitGroup
	var steps []*websurfer.Step
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		end := ls.Begin()
		defer end()
		rctx := websurfer.WithProgress(ctx, ls.Progress)
		for st, err := range surf.Run(rctx, "buy the lamp, delete the account, and find the code", websurfer.RunOptions{
			StartURL: site.url, Journal: j, Between: ls.Between}) {
			ls.Step(st)
			if st != nil {
				steps = append(steps, st)
			}
			if err != nil {
				runErr = err
			}
		}
	}()
	runDone := make(chan struct{})
	go func() { wg.Wait(); close(runDone) }()
	defer func() {
		cancel()
		<-runDone
	}()

	// Open the session from the list.
	ok(t, row.Locator("a").Click())
	if err := page.WaitForURL("**/s/"+ls.ID(), playwright.PageWaitForURLOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}); err != nil {
		t.Fatalf("opening the session from the list: %v (at %s: %s)", err, page.URL(), must(page.Locator("body").TextContent())(t))
	}

	// The first ask: the live view shows the shop; approving lets the
	// click happen, and the frame changes.
	approve := page.Locator("#approvals li button.approve")
	ok(t, approve.WaitFor())
	if txt := must(page.Locator("#approvals li").TextContent())(t); !strings.Contains(txt, "click") {
		t.Errorf("the pending approval says %q", txt)
	}
	// the card gives the model's stated reason, as its words
	if txt := must(page.Locator("#approvals li p.why").TextContent())(t); txt != "The agent says: buy the lamp" {
		t.Errorf("the approval card gives the model's reason as %q", txt)
	}
	if st := must(page.Locator("#state").TextContent())(t); st != string(live.WaitingApproval) {
		t.Errorf("the state is %q while an approval waits", st)
	}
	if started, running := ls.Casts(); started != 1 || !running {
		t.Errorf("with the session page open: %d screencasts started, running %v", started, running)
	}
	waitFrame(t, page)
	before := liveShot(t, page)
	ok(t, approve.Click())
	waitChange(t, page, before, "the approved click")

	// The second ask: denied with the button.
	deny := page.Locator(`#approvals li button.deny`)
	ok(t, deny.WaitFor())
	ok(t, deny.Click())

	// The agent asks for help: take over.
	ok(t, page.Locator("#help").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
	ok(t, page.Locator("#takeover").Click())
	ok(t, page.Locator("#handback").WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
	if st := must(page.Locator("#state").TextContent())(t); !strings.HasPrefix(st, string(live.TakenOver)) {
		t.Errorf("the state is %q after Take over", st)
	}
	// Wait for a frame that shows the viewport (its size is known).
	waitFrame(t, page)

	// Type into the search field and submit it.
	clickLive(t, page, 0.25, 0.76)
	for _, r := range typedSecret { // key by key, as a person types
		ok(t, page.Keyboard().Press(string(r)))
	}
	ok(t, page.Keyboard().Press("Enter"))
	select {
	case q := <-site.typed:
		if q != typedSecret {
			t.Fatalf("the shop got the search %q, want %q", q, typedSecret)
		}
	case <-time.After(30 * time.Second):
		os.WriteFile("/tmp/liveui-debug.png", liveShot(t, page), 0o644)
		u, title := surf.Where()
		notes, _ := page.Locator("#notices").TextContent()
		t.Fatalf("the search typed in the live view never reached the page (at %s %q); notices: %s", u, title, notes)
	}

	// The header follows the page the person moved to (no step of the
	// agent's says so).
	if err := page.Locator("#url").Filter(playwright.LocatorFilterOptions{HasText: "q="}).WaitFor(); err != nil {
		t.Errorf("the header does not follow the page during the takeover (it says %q): %v", must(page.Locator("#url").TextContent())(t), err)
	}

	// Click a button in the live view: the page changes.
	time.Sleep(300 * time.Millisecond) // let the new page paint before the reference frame
	before = liveShot(t, page)
	clickLive(t, page, 0.25, 0.5)
	waitChange(t, page, before, "the person's click")

	// A link to the denied host: blocked, and the UI says so.
	clickLive(t, page, 0.75, 0.5)
	denied := page.Locator("#notices div.denied")
	ok(t, denied.First().WaitFor())
	if txt := must(denied.First().TextContent())(t); !strings.Contains(txt, "127.0.0.2") {
		t.Errorf("the denial notice says %q", txt)
	}
	if n := site.canary.Load(); n != 0 {
		t.Errorf("the denied host got %d requests", n)
	}

	// Hand back with a message to the agent; the run ends.
	ok(t, page.Locator("#handback-msg").Fill(handBackMessage))
	ok(t, page.Locator("#handback").Click())
	select {
	case <-runDone:
	case <-ctx.Done():
		t.Fatal("the run did not end after the hand-back")
	}
	if runErr != nil {
		t.Fatalf("the run: %v", runErr)
	}
	ok(t, j.Close())

	// What the model saw.
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the model got %d requests, want 4", len(reqs))
	}
	tool := func(r fakeopenai.Request) string {
		msgs := r.Chat.Messages
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == "tool" {
				return msgs[i].Content
			}
		}
		return ""
	}
	user := func(r fakeopenai.Request) string {
		msgs := r.Chat.Messages
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role == "user" {
				var b strings.Builder
				b.WriteString(msgs[i].Content)
				for _, p := range msgs[i].MultiContent {
					b.WriteString(p.Text)
				}
				return b.String()
			}
		}
		return ""
	}
	if got := tool(reqs[1]); strings.Contains(got, "denied") {
		t.Errorf("the approved click was reported denied: %q", got)
	}
	if got := user(reqs[1]); !strings.Contains(got, "bought the lamp") {
		t.Errorf("after the approved click the page does not say so:\n%s", got)
	}
	if got := tool(reqs[2]); !strings.Contains(got, "denied") {
		t.Errorf("the denial did not reach the model; the tool result was %q", got)
	}
	if got := tool(reqs[3]) + user(reqs[3]); !strings.Contains(got, "took over the browser") {
		t.Errorf("the takeover note is not in the next request:\n%s", got)
	}
	if got := tool(reqs[3]) + user(reqs[3]); !strings.Contains(got, "Blocked by surf") {
		t.Errorf("the next request does not say where the person left the page (the blocked navigation):\n%s", got)
	}
	if got := tool(reqs[3]) + user(reqs[3]); !strings.Contains(got, `The user's message to you, in their words: "`+handBackMessage+`"`) {
		t.Errorf("the person's hand-back message is not in the next request as their words:\n%s", got)
	}

	// The answer has a card of its own; each step's picture says what it
	// shows.
	answerBox := page.Locator("#answer-box")
	ok(t, answerBox.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
	if txt := must(answerBox.TextContent())(t); !strings.Contains(txt, "Answer") || !strings.Contains(txt, "the code is 4417") {
		t.Errorf("the answer card says %q", txt)
	}
	step1 := page.Locator(`#steps li[data-n="1"] summary`)
	ok(t, step1.Click())
	caps := page.Locator(`#steps li[data-n="1"] figcaption`)
	ok(t, caps.Nth(1).WaitFor())
	if b, a := must(caps.Nth(0).TextContent())(t), must(caps.Nth(1).TextContent())(t); !strings.HasPrefix(b, "before:") || !strings.HasPrefix(a, "after:") {
		t.Errorf("the first step's pictures are labelled %q and %q", b, a)
	}

	// At 420 px wide (a phone) nothing is wider than the screen: the
	// page's full screenshot is as wide as the viewport.
	ok(t, page.SetViewportSize(420, 900))
	must(page.Reload(playwright.PageReloadOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	ok(t, page.Locator(`#steps li[data-n="1"]`).WaitFor())
	narrow := must(page.Screenshot(playwright.PageScreenshotOptions{FullPage: playwright.Bool(true)}))(t)
	if cfg := must(png.DecodeConfig(bytes.NewReader(narrow)))(t); cfg.Width != 420 {
		os.WriteFile(filepath.Join(t.TempDir(), "narrow.png"), narrow, 0o644)
		sw := must(page.Evaluate(`document.documentElement.scrollWidth`))(t)
		t.Errorf("at 420 px the page is %d px wide (scrollWidth %v): something overflows", cfg.Width, sw)
	}

	// The typed text is nowhere.
	ok(t, sess.Close())
	sessClosed = true
	reportPath := filepath.Join(dir, "report.html")
	must(report.WriteFile(jpath, reportPath, report.Options{}))(t)
	har := must(os.ReadFile(harPath))(t)
	if !strings.Contains(string(har), "q=") {
		t.Fatalf("the HAR has no search request: the privacy check below would be vacuous")
	}
	for _, f := range []string{jpath, reportPath, harPath} {
		if b := must(os.ReadFile(f))(t); bytes.Contains(b, []byte(typedSecret)) {
			t.Errorf("%s holds the text typed during the takeover", filepath.Base(f))
		}
	}
	for _, r := range reqs {
		if bytes.Contains(r.Body, []byte(typedSecret)) {
			t.Errorf("model request %d holds the text typed during the takeover", r.N)
		}
	}
	snap := must(json.Marshal(ls.Snapshot()))(t)
	if bytes.Contains(snap, []byte(typedSecret)) {
		t.Errorf("the live view's timeline holds the typed text")
	}
	if n := site.canary.Load(); n != 0 {
		t.Errorf("the denied host got %d requests", n)
	}

	// Leaving the session page stops the screencast.
	must(page.Goto(base+"/", playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, running := ls.Casts(); !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the screencast still runs with nobody watching")
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = steps
}

// TestLiveViewStop: the Stop button ends a run cleanly while it waits for
// an approval: the run ends cancelled with its journal closed, the
// answer card says so, and the button goes away.
func TestLiveViewStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	site := serveShop(t)
	jpath := filepath.Join(t.TempDir(), "journal.jsonl")
	pol := must(policy.New(policy.Config{
		Allow:   []policy.HostRule{must(policy.ParseHostRule("127.0.0.1"))(t)},
		Actions: []policy.ActionRule{{Rule: "risky", Tools: []string{"click"}, Name: `(?i)\bbuy\b`, Verdict: policy.Ask}},
	}))(t)
	sess := must(browsertest.Sandbox(t).NewSession(ctx, sandbox.SessionConfig{Policy: pol}))(t)
	defer sess.Close()
	hub := live.New(live.Config{})
	defer hub.Close()
	ls := must(hub.Open(live.SessionOptions{Owner: "stop test", Redact: sess.Policy().Redact}))(t)

	probe := must(websurfer.New(ctx, websurfer.Config{Session: sess}))(t)
	buy := findID(t, must(probe.VisitURL(ctx, site.url))(t).Observation, "Buy lamp")
	probe.Close()
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.CallTool("click", fmt.Sprintf(`{"target_id": %d, "reasoning": "buy the lamp"}`, buy)),
	))
	model := must(llm.New(ctx, llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model"}))(t)
	surf := must(websurfer.New(ctx, websurfer.Config{Session: sess, Model: model, ModelName: "test-model",
		Approver: ls.Approver(nil), Human: ls}))(t)
	defer surf.Close()
	ls.Attach(surf, live.SandboxDenials(sess))

	j := must(journal.Open(jpath, sess.Policy().Redact))(t)
	var last *websurfer.Step
	var runErr error
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		end := ls.Begin()
		defer end()
		rctx, stop := context.WithCancelCause(ctx)
		defer stop(nil)
		stopped := errors.New("stopped")
		defer ls.OnStop(func(string) { stop(stopped) })()
		for st, err := range surf.Run(rctx, "buy the lamp", websurfer.RunOptions{StartURL: site.url, Journal: j}) {
			ls.Step(st)
			if st != nil && st.Done {
				last = st
			}
			if err != nil && !(errors.Is(err, context.Canceled) && context.Cause(rctx) == stopped) {
				runErr = err // a runtime error, not the person's stop
			}
		}
	}()

	base, token := serveUI(t, hub)
	page := viewer(t)
	must(page.Goto(base+"/?token="+token, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	must(page.Goto(base+"/s/"+ls.ID(), playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	ok(t, page.Locator("#approvals li button.approve").WaitFor())
	stopButton := page.Locator("#stop")
	ok(t, stopButton.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
	ok(t, stopButton.Click())
	select {
	case <-runDone:
	case <-ctx.Done():
		t.Fatal("the run did not end after Stop")
	}
	if runErr != nil {
		t.Fatalf("the run ended with a runtime error: %v", runErr)
	}
	if last == nil || last.EndReason != journal.EndCancelled {
		t.Fatalf("the run's last step: %+v; want it ended cancelled", last)
	}
	ok(t, j.Close())
	if b := must(os.ReadFile(jpath))(t); !bytes.Contains(b, []byte(`"cancelled"`)) {
		t.Errorf("the journal does not record the run's end as cancelled:\n%s", b)
	}
	box := page.Locator("#answer-box")
	ok(t, box.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateVisible}))
	if txt := must(box.TextContent())(t); !strings.Contains(txt, "Ended: cancelled") {
		t.Errorf("the answer card says %q", txt)
	}
	ok(t, stopButton.WaitFor(playwright.LocatorWaitForOptions{State: playwright.WaitForSelectorStateHidden}))
	if err := ls.Stop("again"); !errors.Is(err, live.ErrNotStoppable) {
		t.Errorf("Stop with nothing running: %v", err)
	}
}
