package websurfer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/sandbox"
)

// killBrowser kills a sandbox's browser the way a crash or an OOM killer
// would: SIGKILL to its process (group), by pid.
func killBrowser(t *testing.T, sb *sandbox.Sandbox) {
	t.Helper()
	pid := sb.Info().PID
	if pid <= 0 {
		t.Error("the sandbox has no browser pid")
		return
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// hookModel calls a hook on each request before the fake model answers.
type hookModel struct {
	m    Model
	n    atomic.Int32
	hook func(n int)
}

var _ Model = (*hookModel)(nil)

func (h *hookModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	h.hook(int(h.n.Add(1)))
	return h.m.CreateChatCompletion(ctx, req)
}

// killOnRead kills the browser as the page is read for an observation,
// once armed: the read then fails on surf's own DevTools pipe.
type killOnRead struct {
	sandbox.DevToolsSession
	armed *atomic.Bool
	kill  func()
}

func (k *killOnRead) Call(ctx context.Context, method string, params any) ([]byte, error) {
	k.killBefore(method)
	return k.DevToolsSession.Call(ctx, method, params)
}

// Send is where the page's snapshot goes: it is sent without waiting, with
// the accessibility reads behind it (see axAhead).
func (k *killOnRead) Send(ctx context.Context, method string, params any) (sandbox.DevToolsReply, error) {
	k.killBefore(method)
	return k.DevToolsSession.Send(ctx, method, params)
}

func (k *killOnRead) killBefore(method string) {
	if method == "DOMSnapshot.captureSnapshot" && k.armed.CompareAndSwap(true, false) {
		k.kill()
		time.Sleep(200 * time.Millisecond) // the browser is gone before the command is sent
	}
}

// TestRunRecoversFromKilledBrowser kills the browser (SIGKILL, by pid) at
// several points of a run: while the model is asked, during an action,
// while the page is read for an observation, and while the relaunched
// browser's session opens. Each run relaunches the browser, answers, and
// then closes: the test's watchdog fails it, with a goroutine dump, if
// anything stays blocked, and the time from the run's end to everything
// closed is logged.
func TestRunRecoversFromKilledBrowser(t *testing.T) {
	for _, point := range []string{"model", "action", "observation", "session-context", "session-page"} {
		t.Run(point, func(t *testing.T) { killedRun(t, point) })
	}
}

func killedRun(t *testing.T, point string) {
	sites := browsertest.ServeSites(t)
	pol := demoPolicy(t, strings.TrimPrefix(sites.A, "http://"))
	var mu sync.Mutex
	var sandboxes []*sandbox.Sandbox
	current := func() *sandbox.Sandbox {
		mu.Lock()
		defer mu.Unlock()
		return sandboxes[len(sandboxes)-1]
	}
	sites.Handle("/kill", func(w http.ResponseWriter, r *http.Request) {
		killBrowser(t, current())
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
		fmt.Fprint(w, "<!doctype html><title>Too late</title><p>The browser should be gone.</p>")
	})

	action := fmt.Sprintf(`{"url": %q}`, sites.A+"/actions/form.html")
	if point == "action" {
		action = fmt.Sprintf(`{"url": %q}`, sites.A+"/kill")
	}
	fake := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Name: "act", Expect: fakeopenai.Expect{UserContains: fakeopenai.Strings{"Riverside Library"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "visit_url", Arguments: action}}}},
		fakeopenai.Turn{Name: "after the kill", Expect: fakeopenai.Expect{UserContains: fakeopenai.Strings{"the browser was lost", "relaunched"}},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "stop_action", Arguments: `{"answer": "recovered"}`}}}},
	))

	var relaunches atomic.Int32
	// launch starts a browser and opens a session in it; kill, if set,
	// kills the browser before the session opens ("context") or after,
	// before the surfer's tab is opened ("page").
	launch := func(ctx context.Context, kill string) (*sandbox.Session, error) {
		sb, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env(), Policy: pol})
		if err != nil {
			return nil, err
		}
		mu.Lock()
		sandboxes = append(sandboxes, sb)
		mu.Unlock()
		if kill == "context" {
			killBrowser(t, sb)
			waitGone(sb)
		}
		sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
		if kill == "page" && err == nil {
			killBrowser(t, sb)
			waitGone(sb)
		}
		return sess, err
	}
	relaunch := func(ctx context.Context) (*sandbox.Session, error) {
		if relaunches.Add(1) > 1 {
			return launch(ctx, "")
		}
		// The first relaunched browser dies as its session opens, for
		// the session points.
		return launch(ctx, strings.TrimPrefix(point, "session-"))
	}

	sess, err := launch(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	first := current()
	var armed atomic.Bool
	model := &hookModel{m: newModel(t, fake), hook: func(n int) {
		if n != 1 {
			return
		}
		switch point {
		case "model", "session-context", "session-page":
			killBrowser(t, first)
		case "observation":
			armed.Store(true)
		}
	}}
	s, err := New(t.Context(), Config{Session: sess, Model: model, ModelName: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	if point == "observation" {
		d := s.tabs[0].sess.direct
		if d == nil {
			t.Fatal("the tab has no direct DevTools session to read the page on")
		}
		s.tabs[0].sess.direct = &killOnRead{DevToolsSession: d, armed: &armed, kill: func() { killBrowser(t, first) }}
	}

	type outcome struct {
		steps     []*Step
		err       error
		closeTook time.Duration
	}
	done := make(chan outcome, 1)
	jpath := t.TempDir() + "/run.jsonl"
	go func() {
		var o outcome
		j, _ := journal.Open(jpath, nil)
		for st, err := range s.Run(context.Background(), "Open the form and stop.", RunOptions{StartURL: sites.A + "/actions/article.html", Journal: j, Relaunch: relaunch}) {
			if st != nil {
				o.steps = append(o.steps, st)
			}
			if err != nil {
				o.err = err
			}
		}
		j.Close()
		t0 := time.Now()
		s.Close()
		mu.Lock()
		for _, sb := range sandboxes {
			sb.Close()
		}
		mu.Unlock()
		o.closeTook = time.Since(t0)
		done <- o
	}()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(4 * time.Minute):
		var b bytes.Buffer
		pprof.Lookup("goroutine").WriteTo(&b, 1)
		t.Fatalf("the run or its closing never returned:\n%s", b.String())
	}
	t.Logf("%s: the run ended; closing the surfer and the browsers took %v", point, o.closeTook)
	end := last(o.steps)
	if o.err != nil || end.EndReason != journal.EndAnswered || end.Answer != "recovered" {
		t.Fatalf("the run ended %q (%q), error %v", end.EndReason, end.Answer, o.err)
	}
	if events(t, jpath)[journal.KindRecovered] < 1 {
		t.Error("the journal does not record the recovery")
	}
	want := int32(1)
	if strings.HasPrefix(point, "session") {
		want = 2
	}
	if n := relaunches.Load(); n != want {
		t.Errorf("%d relaunches, want %d", n, want)
	}
	fake.Check(t)
}

// waitGone waits (boundedly) until Playwright has seen a killed browser go.
func waitGone(sb *sandbox.Sandbox) {
	deadline := time.Now().Add(20 * time.Second)
	for sb.Browser().IsConnected() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}
