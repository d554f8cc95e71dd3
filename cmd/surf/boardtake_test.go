package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/third_party/playwright-go"
)

var boardShot = flag.String("board-screenshot", "", "write the board page's screenshot, taken in TestBoardUITakeoverInput, to this PNG file (the README's docs/boardui.png)")

// handBackModel is a fake OpenAI-compatible model that reads the page
// (which changes nothing on it) at every step until its request holds a
// hand-back note, then answers with the note's message, if any.
type handBackModel struct {
	delay time.Duration
}

var handBackRE = regexp.MustCompile(`The user's message to you, in their words: "([^"]*)"`)

func (m *handBackModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not a chat completion", http.StatusBadRequest)
		return
	}
	select {
	case <-time.After(m.delay):
	case <-r.Context().Done():
		return
	}
	step, back, said := 1, false, ""
	for _, msg := range req.Messages {
		text := msg.Content
		for _, p := range msg.MultiContent {
			text += p.Text
		}
		if msg.Role == openai.ChatMessageRoleAssistant {
			step++
		}
		if msg.Role == openai.ChatMessageRoleUser && strings.Contains(text, "handed it back") {
			back = true
			if s := handBackRE.FindStringSubmatch(text); s != nil {
				said = s[1]
			}
		}
	}
	call := openai.ToolCall{ID: fmt.Sprintf("call_%d", step), Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "read_page", Arguments: `{}`}}
	if back {
		answer, _ := json.Marshal(map[string]string{"answer": "handed back: " + said})
		call.Function = openai.FunctionCall{Name: "stop_action", Arguments: string(answer)}
	}
	resp := openai.ChatCompletionResponse{
		ID: fmt.Sprintf("hb-%d", step), Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{call}}, FinishReason: openai.FinishReasonToolCalls}},
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// formSite is the worker's loopback page: a text field and a Send
// button, each a large box at a known place in the viewport (fractions
// of it), whose clicks the site records; and a link to a host the
// worker's policy denies. A counter ticks on the page, so that the
// agent reading it again and again is not stalled on an unchanged page.
type formSite struct {
	URL, Host string
	saw       chan string   // the field's value at each Send
	canary    *atomic.Int32 // requests that reached the denied host
	close     func()
}

// Where the page's boxes are, as fractions of the viewport (their
// middles).
var (
	formField  = [2]float64{0.25, 0.2}
	formSend   = [2]float64{0.75, 0.2}
	formDenied = [2]float64{0.5, 0.7}
)

func startFormSite(t *testing.T) *formSite {
	t.Helper()
	canaryLn, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2 (the denied host): %v", err)
	}
	fs := &formSite{saw: make(chan string, 10), canary: &atomic.Int32{}}
	canary := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.canary.Add(1)
		fmt.Fprint(w, "<title>elsewhere</title>")
	})}
	go canary.Serve(canaryLn)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	page := `<!doctype html><html><head><title>The form</title><style>
html, body { margin: 0; height: 100%; }
#f, #b, #out { position: fixed; box-sizing: border-box; font-size: 24px; }
#f { left: 5%; top: 10%; width: 40%; height: 20%; }
#b { left: 55%; top: 10%; width: 40%; height: 20%; }
#out { left: 5%; top: 60%; width: 90%; height: 20%; display: block; background: #eef; }
#tick { position: fixed; left: 5%; top: 85%; margin: 0; }
</style></head><body>
<p id="tick">0</p>
<script>let n = 0; setInterval(() => { document.getElementById("tick").textContent = "tick " + (++n); }, 100);</script>
<input id="f" aria-label="the field">
<button id="b" onclick="fetch('/saw?v=' + encodeURIComponent(document.getElementById('f').value))">Send</button>
<a id="out" href="http://` + canaryLn.Addr().String() + `/out">Leave for the denied host</a>
</body></html>`
	mux := http.NewServeMux()
	mux.HandleFunc("/form", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("/saw", func(w http.ResponseWriter, r *http.Request) {
		fs.saw <- r.URL.Query().Get("v")
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fs.URL, fs.Host = "http://"+ln.Addr().String(), ln.Addr().String()
	fs.close = func() { srv.Close(); canary.Close() }
	t.Cleanup(fs.close)
	return fs
}

// startSurfProc starts a surf process for the test, killed at its end;
// it returns its stderr.
func startSurfProc(t *testing.T, name string, env []string, args ...string) *lockedBuffer {
	t.Helper()
	cmd := surfCmd(args...)
	cmd.Env = append(cmd.Env, env...)
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

// TestBoardUITakeoverInput is issue 32's takeover from the board's page
// with the person's mouse and keyboard: a real 'surf work' process runs a
// task on a loopback form; from 'surf board ui' in a real browser (surf's
// own Chromium) the person takes the session over, clicks the field on
// the live picture, types, clicks Send (the form's server sees the
// typed value: the events went page → board UI → NATS → worker → its
// browser), clicks a link to a host the worker's policy denies (the
// request gate blocks it, as for the agent), and hands back with a
// message that reaches the agent's next model request.
//
// With -board-screenshot FILE it also writes the board's page, with the
// session taken over and the typed text in its picture, as a PNG:
//
//	go test ./cmd/surf -run TestBoardUITakeoverInput -board-screenshot $PWD/docs/boardui.png
func TestBoardUITakeoverInput(t *testing.T) {
	site := startFormSite(t)
	ms := &http.Server{Handler: &handBackModel{delay: 300 * time.Millisecond}}
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go ms.Serve(mln)
	t.Cleanup(func() { ms.Close() })
	modelURL := "http://" + mln.Addr().String() + "/v1"
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	uiErr := startSurfProc(t, "surf board ui", nil, "board", "ui", "--data", dir, "--http", "127.0.0.1:0")
	startSurfProc(t, "surf work", []string{"OPENAI_BASE_URL=" + modelURL, "OPENAI_API_KEY=fake-key"},
		"work", "--workers", "1", "--name", "w1", "--data", dir, "--allow", site.Host,
		"--model", "test-model", "--max-steps", "1000")
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
	tasks := []board.Task{{ID: "form", Instruction: "Fill in the form.", StartURL: site.URL + "/form"}}
	if *boardShot != "" { // tasks that wait for it, for the picture
		tasks = append(tasks,
			board.Task{ID: "check", Instruction: "Check the form's receipt.", After: []string{"form"}},
			board.Task{ID: "report", Instruction: "Report on {{check.answer}}.", After: []string{"check"}})
	}
	if _, err := b.Add(ctx, tasks...); err != nil {
		t.Fatal(err)
	}
	bus, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer bus.Close()
	session := func() (livebus.Remote, bool) {
		for _, s := range bus.Sessions() {
			if s.Task == "form" {
				return s, true
			}
		}
		return livebus.Remote{}, false
	}
	waitUntil(t, ctx, "the worker's session on the form", func() bool {
		s, ok := session()
		return ok && strings.HasSuffix(s.URL, "/form")
	})

	// the person's browser: surf's own Chromium
	page := personPage(ctx, t)
	if _, err := page.Goto(pageURL); err != nil {
		t.Fatal(err)
	}
	row := page.Locator(`#sessions tr[data-worker="w1"][data-task="form"]`)

	// take over: the picture opens, taken over by this page
	if err := row.Locator("button.takeover").Click(); err != nil {
		t.Fatal(err)
	}
	if err := row.Locator(".screen.taken img.live").WaitFor(); err != nil {
		t.Fatalf("the taken-over session's live picture: %v", err)
	}
	waitUntil(t, ctx, "the worker's session taken over", func() bool {
		s, ok := session()
		return ok && s.State == live.TakenOver
	})
	img := row.Locator("img.live")
	waitUntil(t, ctx, "a frame of the worker's page", func() bool {
		v, err := img.Evaluate("img => img.naturalWidth", nil)
		n, _ := v.(int)
		return err == nil && n > 0
	})
	at := func(f [2]float64) {
		t.Helper()
		box, err := img.BoundingBox()
		if err != nil {
			t.Fatal(err)
		}
		if err := img.Click(playwright.LocatorClickOptions{Position: &playwright.Position{X: f[0] * box.Width, Y: f[1] * box.Height}}); err != nil {
			t.Fatal(err)
		}
	}
	sent := func(what string) string {
		t.Helper()
		select {
		case v := <-site.saw:
			return v
		case <-ctx.Done():
			t.Fatalf("waiting for %s: the form's server saw no Send", what)
		}
		return ""
	}
	// click the field, type, click Send: the form's server sees it
	typing := time.Now()
	at(formField)
	if err := page.Keyboard().Type("hello board"); err != nil {
		t.Fatal(err)
	}
	at(formSend)
	if v := sent("the typed value"); v != "hello board" {
		t.Fatalf("the form's server saw %q; want what the person typed on the board's page", v)
	}
	// 2 clicks and 11 keys (a key_down and a key_up each): 24 round trips
	t.Logf("from the first click to the form's server seeing Send: %v", time.Since(typing).Round(10*time.Millisecond))
	if *boardShot != "" {
		s, _ := session()
		shootBoard(t, ctx, page, bus, s, *boardShot)
	}

	// a link to a host the worker's policy denies: blocked by the gate
	at(formDenied)
	waitUntil(t, ctx, "the worker's gate to deny the link", func() bool {
		s, ok := session()
		if !ok {
			return false
		}
		rep, err := bus.Do(ctx, s.Bridge, livebus.Request{Op: livebus.OpSnapshot, Session: s.ID})
		if err != nil || rep.Snapshot == nil {
			return false
		}
		for _, n := range rep.Snapshot.Notices {
			if n.Kind == "denied" && strings.Contains(n.Text, "127.0.0.2") {
				return true
			}
		}
		return false
	})
	if n := site.canary.Load(); n != 0 {
		t.Fatalf("the denied host got %d requests from the takeover", n)
	}

	// hand back with a message: the agent's next request holds it
	if err := row.Locator("input.handback-msg").Fill("I filled in the form"); err != nil {
		t.Fatal(err)
	}
	if err := row.Locator("button.handback").Click(); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Wait(ctx, "form")
	if err != nil {
		t.Fatal(err)
	}
	if r := recs[0]; r.State != board.Done || r.Result == nil || r.Result.Answer != "handed back: I filled in the form" {
		t.Fatalf("the task after the hand-back: %+v", r)
	}
}

// shootBoard writes the board's page as a PNG, once the worker's
// screencast has sent frames after the typing.
func shootBoard(t *testing.T, ctx context.Context, page playwright.Page, bus *livebus.Follower, s livebus.Remote, file string) {
	t.Helper()
	if err := page.SetViewportSize(1100, 760); err != nil {
		t.Fatal(err)
	}
	seq := 0
	for range 3 {
		rep, err := bus.Do(ctx, s.Bridge, livebus.Request{Op: livebus.OpFrame, Session: s.ID, Seq: seq})
		if err != nil {
			t.Fatal(err)
		}
		seq = rep.Seq
	}
	// the page's own stream shows them a moment later: a picture for
	// the docs, not an assertion
	time.Sleep(2 * time.Second)
	png, err := page.Screenshot()
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 10000 {
		t.Fatalf("the screenshot is %d bytes", len(png))
	}
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
