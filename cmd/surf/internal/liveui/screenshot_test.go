package liveui_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/websurfer"
)

var screenshotOut = flag.String("screenshot", "", "write the live view's screenshot to this PNG file (the live view guide's docs/liveview.png)")

// TestLiveViewScreenshot renders the session page while a run waits for
// an approval: a live frame, the timeline and the pending approval are
// shown. With -screenshot FILE it writes the page as a PNG:
//
//	go test ./cmd/surf/internal/liveui -run TestLiveViewScreenshot -screenshot $PWD/docs/liveview.png
func TestLiveViewScreenshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	site := serveShop(t)
	pol := must(policy.New(policy.Config{
		Allow:   []policy.HostRule{must(policy.ParseHostRule("127.0.0.1"))(t)},
		Actions: []policy.ActionRule{{Rule: "purchases", Tools: []string{"click"}, Name: `(?i)\bbuy\b`, Verdict: policy.Ask}},
	}))(t)
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	hub := live.New(live.Config{})
	defer hub.Close()
	ls := must(hub.Open(live.SessionOptions{Owner: "surf run", Redact: sess.Policy().Redact}))(t)
	probe := must(websurfer.New(ctx, websurfer.Config{Session: sess}))(t)
	first := must(probe.VisitURL(ctx, site.url))(t)
	buy := findID(t, first.Observation, "Buy lamp")
	probe.Close()
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.CallTool("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "desk lamp", "press_enter": false, "reasoning": "search for the lamp"}`, findID(t, first.Observation, "Search"))),
		fakeopenai.CallTool("click", fmt.Sprintf(`{"target_id": %d, "reasoning": "buy the lamp"}`, buy)),
		fakeopenai.CallTool("stop_action", `{"answer": "the purchase was not approved"}`),
	))
	model := must(llm.New(ctx, llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model"}))(t)
	surf := must(websurfer.New(ctx, websurfer.Config{Session: sess, Model: model, ModelName: "test-model", Approver: ls.Approver(nil), Human: ls}))(t)
	defer surf.Close()
	ls.Attach(surf, live.SandboxDenials(sess))
	base, token := serveUI(t, hub)
	page := viewer(t)
	ok(t, page.SetViewportSize(1280, 760))

	done := make(chan struct{})
	go func() {
		defer close(done)
		end := ls.Begin()
		defer end()
		for st := range surf.Run(websurfer.WithProgress(ctx, ls.Progress), "buy a desk lamp", websurfer.RunOptions{StartURL: site.url, Between: ls.Between}) {
			ls.Step(st)
		}
	}()
	defer func() { cancel(); <-done }()
	must(page.Goto(base+"/?token="+token, playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	must(page.Goto(base+"/s/"+ls.ID(), playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateDomcontentloaded}))(t)
	ok(t, page.Locator("#approvals li button.approve").WaitFor())
	waitFrame(t, page)
	ok(t, page.Locator("#steps li").First().Locator("summary").Click()) // a step expanded
	time.Sleep(500 * time.Millisecond)                                  // its screenshot loads
	png := must(page.Screenshot())(t)
	if len(png) < 10000 {
		t.Fatalf("the screenshot is %d bytes", len(png))
	}
	if *screenshotOut != "" {
		ok(t, os.WriteFile(*screenshotOut, png, 0o644))
	}
	ok(t, page.Locator("#approvals li button.deny").Click())
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the run did not end")
	}
}
