package websurfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// serveLive adds the live view's fixture pages: a button that repaints the
// page, a link to origin B, and two forms (GET, then POST) that echo what
// was typed.
func serveLive(sites *browsertest.Sites) {
	sites.Handle("/live/page", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Live page</title>
<body style="margin:0;background:#fff">
<button id=b style="position:absolute;left:40px;top:40px;width:200px;height:60px" onclick="document.body.style.background='#c33';document.getElementById('out').textContent='clicked'">Press</button>
<p id=out style="position:absolute;left:40px;top:120px">waiting</p>
<a id=away style="position:absolute;left:40px;top:200px;font-size:30px" href="%s/elsewhere">Elsewhere</a>
<script>window.inputs=0; for (const k of ['mousedown','mouseup','mousemove','keydown','wheel']) addEventListener(k, () => window.inputs++, true)</script>`, sites.B)
	})
	sites.Handle("/live/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Search</title><body style="margin:0">
<form action=/live/result method=get><input id=q name=q style="position:absolute;left:20px;top:20px;width:300px;height:30px"><button style="position:absolute;left:340px;top:20px">Go</button></form>`)
	})
	sites.Handle("/live/result", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		fmt.Fprintf(w, `<!doctype html><title>Results for %[1]s</title><body style="margin:0">
<h1 style="position:absolute;left:20px;top:80px;margin:0">You searched for %[1]s</h1>
<form action=/live/posted method=post><input id=p name=p style="position:absolute;left:20px;top:20px;width:300px;height:30px"><button id=send style="position:absolute;left:340px;top:20px;width:80px;height:30px">Send</button></form>`, htmlEscape(q))
	})
	sites.Handle("/live/posted", func(w http.ResponseWriter, r *http.Request) {
		p := r.FormValue("p")
		fmt.Fprintf(w, `<!doctype html><title>Posted</title><p>Thanks, we got %s.</p>`, htmlEscape(p))
	})
}

// liveSurfer is a surfer on a session limited to origin A, with the live
// fixture pages.
func liveSurfer(t *testing.T, cfg Config, scfg sandbox.SessionConfig) (*Surfer, *browsertest.Sites) {
	t.Helper()
	sites := browsertest.ServeSites(t)
	serveLive(sites)
	if scfg.Policy == nil {
		scfg.Policy = demoPolicy(t, sites.HostA())
	}
	cfg.Session = browsertest.Session(t, scfg)
	return newSurfer(t, cfg), sites
}

// center is the middle of the element sel in the active page, in CSS
// pixels of the viewport.
func center(t *testing.T, s *Surfer, sel string) (x, y float64) {
	t.Helper()
	v, err := s.Page().Evaluate(`sel => { const r = document.querySelector(sel).getBoundingClientRect(); return [r.x + r.width/2, r.y + r.height/2] }`, sel)
	if err != nil {
		t.Fatalf("locating %s: %v", sel, err)
	}
	xy := v.([]any)
	num := func(a any) float64 {
		switch n := a.(type) {
		case int:
			return float64(n)
		case float64:
			return n
		}
		t.Fatalf("coordinate %v is a %T", a, a)
		return 0
	}
	return num(xy[0]), num(xy[1])
}

func evalString(t *testing.T, s *Surfer, expr string) string {
	t.Helper()
	v, err := s.Page().Evaluate(expr)
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return fmt.Sprint(v)
}

// frameCounter counts the active tab's Page.screencastFrame events on its
// devtools session, whoever started the screencast.
func frameCounter(t *testing.T, s *Surfer) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sh := s.act.shown.Load()
	if sh == nil {
		t.Fatal("no tab is shown")
	}
	ch, cancel := sh.t.sess.Subscribe("Page.screencastFrame")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range ch {
			n.Add(1)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return &n
}

// watch runs a screencast until the returned stop is called; frames go to
// the channel (the newest kept when the reader is slow).
func watch(t *testing.T, s *Surfer, o ScreencastOptions) (<-chan Frame, func() error) {
	t.Helper()
	frames := make(chan Frame, 64)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- s.Screencast(ctx, o, func(f Frame) {
			select {
			case frames <- f:
			default:
			}
		})
	}()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-errc })
		return err
	}
	t.Cleanup(func() { stop() })
	return frames, stop
}

// nextFrame waits for a frame that keep accepts.
func nextFrame(t *testing.T, frames <-chan Frame, what string, keep func(Frame) bool) Frame {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case f := <-frames:
			if keep(f) {
				return f
			}
		case <-deadline:
			t.Fatalf("no screencast frame %s", what)
		}
	}
}

func TestScreencastOnlyWhenWatchedAndFramesChange(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	if _, err := s.VisitURL(context.Background(), sites.A+"/live/page"); err != nil {
		t.Fatal(err)
	}
	events := frameCounter(t, s)
	// Nobody watches: the agent acts and observes, the page repaints, and
	// no screencast runs.
	x, y := center(t, s, "#b")
	if err := s.Input(context.Background(), InputEvent{Kind: "mouse_move", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Page().Evaluate(`document.body.style.background = '#eef'`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, started := events.Load(), s.cast.started.Load(); n != 0 || started != 0 {
		t.Fatalf("unwatched: %d screencast frames, %d starts; want none", n, started)
	}

	frames, stop := watch(t, s, ScreencastOptions{Quality: 50})
	first := nextFrame(t, frames, "at start", func(Frame) bool { return true })
	if first.Width <= 0 || first.Height <= 0 || !bytes.HasPrefix(first.JPEG, []byte{0xff, 0xd8}) {
		t.Fatalf("first frame: %dx%d, %d bytes", first.Width, first.Height, len(first.JPEG))
	}
	if first.ViewportWidth != float64(s.sess.Info().Viewport.Width) || !strings.HasSuffix(first.URL, "/live/page") || first.Tab != 0 {
		t.Errorf("first frame: viewport %gx%g, url %q, tab %d", first.ViewportWidth, first.ViewportHeight, first.URL, first.Tab)
	}
	// The frames are Chromium's screencast, counted on the tab's own
	// session: the counter above could see them (its goroutine may run
	// after the screencast's).
	for i := 0; i < 500 && events.Load() == 0; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	if events.Load() == 0 {
		t.Fatal("the frame counter saw no Page.screencastFrame while watching")
	}
	if err := s.Input(context.Background(), InputEvent{Kind: "click", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, s, `document.getElementById('out').textContent`); got != "clicked" {
		t.Fatalf("after the input click the page says %q", got)
	}
	nextFrame(t, frames, "after the click", func(f Frame) bool { return !bytes.Equal(f.JPEG, first.JPEG) })
	if err := stop(); err != nil {
		t.Fatalf("Screencast returned %v when its context ended", err)
	}
	s.cast.mu.Lock()
	running := s.cast.stop != nil || len(s.cast.watchers) != 0
	s.cast.mu.Unlock()
	if running {
		t.Error("the screencast still runs after its only watcher left")
	}
}

func TestScreencastSharedAndFollowsTabs(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	if _, err := s.VisitURL(context.Background(), sites.A+"/live/page"); err != nil {
		t.Fatal(err)
	}
	a, stopA := watch(t, s, ScreencastOptions{})
	b, stopB := watch(t, s, ScreencastOptions{MaxWidth: 320})
	nextFrame(t, a, "for the first watcher", func(Frame) bool { return true })
	nextFrame(t, b, "for the second watcher", func(Frame) bool { return true })
	if n := s.cast.started.Load(); n != 1 {
		t.Errorf("two watchers started %d screencasts, want one shared", n)
	}
	if err := stopA(); err != nil {
		t.Fatal(err)
	}
	// The second watcher still gets frames, and follows a new tab.
	if _, err := s.CreateTab(context.Background(), sites.A+"/live/form"); err != nil {
		t.Fatal(err)
	}
	nextFrame(t, b, "of the new tab", func(f Frame) bool { return f.Tab == 1 && strings.HasSuffix(f.URL, "/live/form") })
	if err := stopB(); err != nil {
		t.Fatal(err)
	}

	bad := []ScreencastOptions{{Quality: 101}, {Quality: -1}, {MaxWidth: -1}, {MaxHeight: 9000}, {EveryNthFrame: 61}}
	for _, o := range bad {
		if err := s.Screencast(context.Background(), o, func(Frame) {}); err == nil {
			t.Errorf("Screencast(%+v) accepted bad options", o)
		}
	}
	if err := s.Screencast(context.Background(), ScreencastOptions{}, nil); err == nil {
		t.Error("Screencast with no frame function was accepted")
	}

	// Closing the surfer ends its screencast: the watcher gets ErrClosed.
	c, stopC := watch(t, s, ScreencastOptions{})
	nextFrame(t, c, "before closing", func(Frame) bool { return true })
	s.Close()
	if err := stopC(); !errors.Is(err, ErrClosed) {
		t.Errorf("a screencast of a closed surfer returned %v", err)
	}
	if err := s.Input(context.Background(), InputEvent{Kind: "click", X: 1, Y: 1}); !errors.Is(err, ErrClosed) {
		t.Errorf("Input on a closed surfer returned %v", err)
	}
}

func TestInputValidatesAndDispatches(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	if _, err := s.VisitURL(context.Background(), sites.A+"/live/page"); err != nil {
		t.Fatal(err)
	}
	vp := s.sess.Info().Viewport
	bad := []InputEvent{
		{Kind: "poke", X: 1, Y: 1},
		{Kind: "click", X: -1, Y: 10},
		{Kind: "click", X: float64(vp.Width), Y: 10},
		{Kind: "mouse_move", X: 10, Y: float64(vp.Height) + 5},
		{Kind: "click", X: 10, Y: 10, Button: "thumb"},
		{Kind: "click", X: 10, Y: 10, Clicks: 9},
		{Kind: "wheel", X: 10, Y: 10, DeltaY: 1e9},
		{Kind: "key_down"},
		{Kind: "key_down", Key: "a", Modifiers: 99},
		{Kind: "type", Text: strings.Repeat("x", MaxInputText+1)},
		{Kind: "type"},
		{Kind: "type", Text: "bad \xff utf-8"},
	}
	// Chromium's headless shell moves the mouse to (0, 0) once as a page
	// loads, a trusted mousemove of its own: count from here.
	before := evalString(t, s, `window.inputs`)
	for _, e := range bad {
		if err := s.Input(context.Background(), e); err == nil {
			t.Errorf("Input(%+v) accepted a bad event", e)
		}
	}
	if got := evalString(t, s, `window.inputs`); got != before {
		t.Fatalf("bad events reached the page: %s input events, %s before them", got, before)
	}
	if s.sess.Redactions().Len() != 0 {
		t.Error("a refused type event was added to the redaction set")
	}
	x, y := center(t, s, "#b")
	if err := s.Input(context.Background(), InputEvent{Kind: "click", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	if got := evalString(t, s, `document.getElementById('out').textContent`); got != "clicked" {
		t.Fatalf("after an input click the page says %q", got)
	}
	if err := s.Input(context.Background(), InputEvent{Kind: "wheel", X: x, Y: y, DeltaY: 100}); err != nil {
		t.Fatal(err)
	}
	if u, title := s.Where(); !strings.HasSuffix(u, "/live/page") || title != "Live page" {
		t.Errorf("Where() = %q, %q", u, title)
	}
	if a := s.Activity(); a != ActivityIdle {
		t.Errorf("Activity() = %q outside a run", a)
	}
}

// TestInputDeniedNavigation: a person's click on a link to a host the
// policy denies is blocked by the sandbox (its block page instead of the
// host's), and OnDenial and the next observation report it.
func TestInputDeniedNavigation(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	if _, err := s.VisitURL(context.Background(), sites.A+"/live/page"); err != nil {
		t.Fatal(err)
	}
	got := make(chan sandbox.Denial, 8)
	stop := s.Session().OnDenial(func(d sandbox.Denial) {
		select {
		case got <- d:
		default:
		}
	})
	defer stop()
	x, y := center(t, s, "#away")
	if err := s.Input(context.Background(), InputEvent{Kind: "click", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	hostB := strings.TrimPrefix(sites.B, "http://")
	var d sandbox.Denial
	select {
	case d = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("no denial reported for the click on a denied host")
	}
	if !strings.HasPrefix(hostB, d.Host) || !d.Navigation || d.Decision.Verdict != policy.Deny {
		t.Errorf("denial: host %q navigation %v verdict %v; want %s, a denied navigation", d.Host, d.Navigation, d.Decision.Verdict, hostB)
	}
	if sites.Requested("/elsewhere") {
		t.Error("the denied host was reached")
	}
	// The block page commits after the denial is reported.
	for i := 0; i < 500; i++ {
		if _, title := s.Where(); title == "Blocked by surf" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	obs, err := s.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox answers a denied navigation with its block page:
	// nothing of the denied host is shown.
	if obs.Title != "Blocked by surf" {
		t.Errorf("after the denied click the page is %s (%q), not surf's block page", obs.URL, obs.Title)
	}
	if len(obs.Blocked.Navigations) == 0 {
		t.Errorf("the observation does not report the blocked navigation: %+v", obs.Blocked)
	}
}

// humanFunc is a Human backed by a function.
type humanFunc func(ctx context.Context, reason string) (string, error)

func (f humanFunc) Help(ctx context.Context, reason string) (string, error) { return f(ctx, reason) }

var _ Human = humanFunc(nil)

// lastToolText is the text of the last tool message of a request.
func lastToolText(r fakeopenai.Request) string {
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if m := r.Chat.Messages[i]; m.Role == "tool" {
			return m.Content
		}
	}
	return ""
}

func offeredTools(r fakeopenai.Request) []string {
	var names []string
	for _, tl := range r.Chat.Tools {
		if tl.Function != nil {
			names = append(names, tl.Function.Name)
		}
	}
	return names
}

func hasName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

// watchModel, when set by a test, wraps runLive's model.
var watchModel func(Model) Model

// modelFunc is a Model backed by a function.
type modelFunc func(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)

func (f modelFunc) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return f(ctx, req)
}

// runLive runs a task on s with a scripted model and a journal.
func runLive(t *testing.T, s *Surfer, script *fakeopenai.Script, task string, o RunOptions, mcfg llm.Config) (*fakeopenai.Server, []*Step, string, error) {
	t.Helper()
	fake := fakeopenai.Start(t, script)
	mcfg.BaseURL, mcfg.APIKey, mcfg.Model, mcfg.MaxRetryWait = fake.URL(), "sk-test-not-real", "test-model", 5*time.Second
	model, err := llm.New(context.Background(), mcfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Model = model
	if o.Model != nil && watchModel != nil {
		o.Model = watchModel(model)
	}
	jpath := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(jpath, s.Policy().Redact)
	if err != nil {
		t.Fatal(err)
	}
	o.Journal = j
	var steps []*Step
	var rerr error
	for st, err := range s.Run(context.Background(), task, o) {
		if st != nil {
			steps = append(steps, st)
		}
		if err != nil {
			rerr = err
			break
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return fake, steps, jpath, rerr
}

func TestBetweenNoteAndHumanNavigation(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	script := fakeopenai.NewScript(
		fakeopenai.CallTool("sleep", `{"seconds": 0.1}`),
		fakeopenai.Say("done"),
	)
	const note = "The user took over the browser for 3s and handed it back."
	calls := 0
	var during Activity
	var where string
	between := func(ctx context.Context) (string, error) {
		calls++
		during = s.Activity()
		// The person follows the link: a navigation the agent did not make.
		_, err := s.Page().Evaluate(`location.href = '/live/form'`)
		if err != nil {
			return "", err
		}
		for i := 0; i < 200 && !strings.HasSuffix(s.Page().URL(), "/live/form"); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		where, _ = s.Where()
		return note, nil
	}
	var asking []Activity
	watchModel = func(m Model) Model {
		return modelFunc(func(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
			asking = append(asking, s.Activity())
			return m.CreateChatCompletion(ctx, req)
		})
	}
	defer func() { watchModel = nil }()
	fake, steps, jpath, err := runLive(t, s, script, "look around", RunOptions{StartURL: sites.A + "/live/page", Between: between}, llm.Config{})
	watchModel = nil
	if err != nil {
		t.Fatal(err)
	}
	if end := last(steps); end.EndReason != journal.EndAnswered || len(steps) != 2 {
		t.Fatalf("the run ended %q after %d steps", end.EndReason, len(steps))
	}
	if len(asking) != 2 || asking[0] != ActivityModel || asking[1] != ActivityModel {
		t.Errorf("the activity while the model was asked: %v", asking)
	}
	if calls != 1 || during != ActivityTakenOver || !strings.HasSuffix(where, "/live/form") {
		t.Errorf("Between: %d calls, activity %q, where %q", calls, during, where)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if strings.Contains(string(reqs[0].Body), note) {
		t.Error("the note reached the model before the takeover")
	}
	second := string(reqs[1].Body)
	if !strings.Contains(second, note) {
		t.Error("the takeover note did not reach the model's next request")
	}
	// The observation after the takeover is the page the person left,
	// not the one the last action saw.
	if obs := steps[1].Observation; obs == nil || !strings.HasSuffix(obs.URL, "/live/form") {
		t.Errorf("the observation after the takeover: %+v", steps[1].Observation)
	}
	if n := events(t, jpath)[journal.KindTakenOver]; n != 1 {
		t.Errorf("%d taken_over journal entries, want 1", n)
	}
	if a := s.Activity(); a != ActivityIdle {
		t.Errorf("Activity() after the run = %q", a)
	}

	// An error from Between ends the run as a runtime error.
	boom := errors.New("the live view went away")
	_, steps, _, err = runLive(t, s, fakeopenai.NewScript(fakeopenai.CallTool("sleep", `{"seconds": 0.1}`)), "again",
		RunOptions{Between: func(context.Context) (string, error) { return "", boom }}, llm.Config{})
	if !errors.Is(err, boom) || last(steps).EndReason != journal.EndError {
		t.Errorf("a failing Between ended the run with %v (%q)", err, last(steps).EndReason)
	}
}

func TestRequestHelp(t *testing.T) {
	script := func() *fakeopenai.Script {
		return fakeopenai.NewScript(
			fakeopenai.CallTool("request_help", `{"reason": "log in to the library"}`),
			fakeopenai.Say("done"),
		)
	}
	t.Run("no human", func(t *testing.T) {
		s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
		fake, steps, _, err := runLive(t, s, script(), "renew my books", RunOptions{StartURL: sites.A + "/live/page"}, llm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		if len(reqs) != 2 || last(steps).EndReason != journal.EndAnswered {
			t.Fatalf("%d requests, ended %q", len(reqs), last(steps).EndReason)
		}
		if hasName(offeredTools(reqs[0]), "request_help") {
			t.Error("request_help was offered without a human")
		}
		if got := lastToolText(reqs[1]); !strings.Contains(got, "no human is available") {
			t.Errorf("request_help without a human answered %q", got)
		}
	})
	t.Run("human", func(t *testing.T) {
		var s *Surfer
		var during Activity
		var reason string
		human := humanFunc(func(ctx context.Context, r string) (string, error) {
			during, reason = s.Activity(), r
			x, y := center(t, s, "#b")
			if err := s.Input(ctx, InputEvent{Kind: "click", X: x, Y: y}); err != nil {
				return "", err
			}
			return "I logged in for you.", nil
		})
		s, sites := liveSurfer(t, Config{Human: human}, sandbox.SessionConfig{})
		fake, _, _, err := runLive(t, s, script(), "renew my books", RunOptions{StartURL: sites.A + "/live/page"}, llm.Config{})
		if err != nil {
			t.Fatal(err)
		}
		reqs := fake.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests", len(reqs))
		}
		if !hasName(offeredTools(reqs[0]), "request_help") {
			t.Error("request_help was not offered with a human")
		}
		if got := lastToolText(reqs[1]); !strings.Contains(got, "I logged in for you.") {
			t.Errorf("request_help answered %q", got)
		}
		if during != ActivityTakenOver || reason != "log in to the library" {
			t.Errorf("the human was asked %q while the surfer was %q", reason, during)
		}
		if !strings.Contains(string(reqs[1].Body), "clicked") {
			t.Error("the observation after the help does not show what the person did")
		}
	})
	t.Run("timeout", func(t *testing.T) {
		human := humanFunc(func(ctx context.Context, _ string) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})
		s, sites := liveSurfer(t, Config{Human: human, HelpTimeout: 100 * time.Millisecond}, sandbox.SessionConfig{})
		fake, steps, _, err := runLive(t, s, script(), "renew my books", RunOptions{StartURL: sites.A + "/live/page"}, llm.Config{})
		if err != nil {
			t.Fatalf("a help timeout ended the run: %v", err)
		}
		reqs := fake.Requests()
		if len(reqs) != 2 || last(steps).EndReason != journal.EndAnswered {
			t.Fatalf("%d requests, ended %q", len(reqs), last(steps).EndReason)
		}
		if got := lastToolText(reqs[1]); !strings.Contains(got, "nobody took over within") {
			t.Errorf("request_help that timed out answered %q", got)
		}
	})
}

// TestTypedTextNeverStored: text a person types during a takeover (key by
// key into a GET form, inserted into a POST form) is in no journal, HAR
// recording, model request or cassette, though the forms sent it and the
// pages echo it.
func TestTypedTextNeverStored(t *testing.T) {
	const typedGET, typedPOST = "plumviolet42", "Quokka Harbour 7781"
	dir := t.TempDir()
	har := filepath.Join(dir, "session.har")
	cassette := filepath.Join(dir, "cassette.json")
	sites := browsertest.ServeSites(t)
	serveLive(sites)
	sess, err := browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{Policy: demoPolicy(t, sites.HostA()), RecordHAR: har})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			sess.Close()
		}
	})
	s := newSurfer(t, Config{Session: sess})

	script := fakeopenai.NewScript(
		fakeopenai.CallTool("sleep", `{"seconds": 0.1}`),
		fakeopenai.Say("done"),
	)
	in := func(ctx context.Context, e InputEvent) {
		if err := s.Input(ctx, e); err != nil {
			t.Errorf("Input(%s): %v", e.Kind, err)
		}
	}
	waitURL := func(suffix string) {
		for i := 0; i < 500 && !strings.Contains(s.Page().URL(), suffix); i++ {
			time.Sleep(20 * time.Millisecond)
		}
		if err := s.Page().WaitForLoadState(); err != nil {
			t.Error(err)
		}
	}
	between := func(ctx context.Context) (string, error) {
		// GET: click the field, type key by key (with a typo fixed), Enter.
		x, y := center(t, s, "#q")
		in(ctx, InputEvent{Kind: "click", X: x, Y: y})
		for _, r := range typedGET[:5] + "x" {
			in(ctx, InputEvent{Kind: "key_down", Key: string(r), Text: string(r)})
			in(ctx, InputEvent{Kind: "key_up", Key: string(r)})
		}
		in(ctx, InputEvent{Kind: "key_down", Key: "Backspace", Code: "Backspace"})
		in(ctx, InputEvent{Kind: "key_up", Key: "Backspace", Code: "Backspace"})
		for _, r := range typedGET[5:] {
			in(ctx, InputEvent{Kind: "key_down", Key: string(r), Text: string(r)})
			in(ctx, InputEvent{Kind: "key_up", Key: string(r)})
		}
		in(ctx, InputEvent{Kind: "key_down", Key: "Enter", Code: "Enter"})
		in(ctx, InputEvent{Kind: "key_up", Key: "Enter", Code: "Enter"})
		waitURL("/live/result")
		// POST: click the field, paste the text, click Send.
		x, y = center(t, s, "#p")
		in(ctx, InputEvent{Kind: "click", X: x, Y: y})
		in(ctx, InputEvent{Kind: "type", Text: typedPOST})
		x, y = center(t, s, "#send")
		in(ctx, InputEvent{Kind: "click", X: x, Y: y})
		waitURL("/live/posted")
		return "The user took over the browser and handed it back.", nil
	}
	fake, steps, jpath, err := runLive(t, s, script, "search the catalogue", RunOptions{StartURL: sites.A + "/live/form", Between: between},
		llm.Config{Record: cassette})
	if err != nil {
		t.Fatal(err)
	}
	if last(steps).EndReason != journal.EndAnswered {
		t.Fatalf("the run ended %q", last(steps).EndReason)
	}
	s.Close()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	closed = true

	// The forms did send the text, so the test means something.
	var sentGET, sentPOST bool
	for _, r := range sites.Requests() {
		sentGET = sentGET || strings.Contains(r.Path, "q="+typedGET)
		sentPOST = sentPOST || (r.Method == "POST" && strings.Contains(r.Body, "Quokka+Harbour+7781"))
	}
	if !sentGET || !sentPOST {
		t.Fatalf("the forms did not send the typed text (GET %v, POST %v)", sentGET, sentPOST)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	second := string(reqs[1].Body)
	// (The body is JSON: the placeholder's angle brackets are escaped.)
	if !strings.Contains(second, "/live/posted") || !strings.Contains(second, strings.Trim(policy.TypedPlaceholder, "<>")) {
		t.Errorf("the model's observation after the takeover is not the posted page with the typed text redacted")
	}
	secret := []string{typedGET, "plumv", "Quokka Harbour 7781", "Quokka+Harbour+7781", "Quokka%20Harbour%207781", "Harbour"}
	check := func(what string, b []byte) {
		t.Helper()
		for _, sec := range secret {
			if bytes.Contains(b, []byte(sec)) {
				t.Errorf("%s holds the typed text %q", what, sec)
			}
		}
	}
	for _, r := range reqs {
		check(fmt.Sprintf("model request %d", r.N), r.Body)
	}
	for _, p := range []string{jpath, har, cassette} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", p)
		}
		check(filepath.Base(p), b)
	}
	if b, _ := os.ReadFile(har); !bytes.Contains(b, []byte("/live/posted")) {
		t.Error("the HAR recording does not hold the posted page")
	}
}

// TestHelpRequestKeepsTheAgentsWords: a word the agent uses in its
// request for help is its own, though a person typed the same word into
// the page: the request reaches the person whole.
func TestHelpRequestKeepsTheAgentsWords(t *testing.T) {
	var s *Surfer
	got := make(chan string, 1)
	human := humanFunc(func(ctx context.Context, reason string) (string, error) {
		got <- reason
		return "done", nil
	})
	s, sites := liveSurfer(t, Config{Human: human}, sandbox.SessionConfig{})
	ctx := context.Background()
	if _, err := s.VisitURL(ctx, sites.A+"/live/form"); err != nil {
		t.Fatal(err)
	}
	x, y := center(t, s, "#q")
	if err := s.Input(ctx, InputEvent{Kind: "click", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	if err := s.Input(ctx, InputEvent{Kind: "type", Text: "gadget"}); err != nil {
		t.Fatal(err)
	}
	// The control: what the person typed is hidden in the page's text.
	if r := s.pol.Redact("q=gadget"); r != "q="+policy.TypedPlaceholder {
		t.Fatalf("the typed word is not redacted (%q): the check below could not fail", r)
	}
	if _, err := s.RequestHelp(ctx, "Please find the gadget and the <secret:none> code"); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r != "Please find the gadget and the <secret:none> code" {
		t.Errorf("the person was asked %q", r)
	}
}

// TestTypedTextHidesOnlyWhatWasTyped: after a person typed "wid" key by
// key, a page that echoes it shows the placeholder there, and the
// page's other words that start the same way are left alone.
func TestTypedTextHidesOnlyWhatWasTyped(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	sites.Handle("/live/shop", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><title>Shop</title><p>We sell widgets.</p><p>You searched for %s.</p>`, htmlEscape(r.URL.Query().Get("q")))
	})
	ctx := context.Background()
	if _, err := s.VisitURL(ctx, sites.A+"/live/form"); err != nil {
		t.Fatal(err)
	}
	x, y := center(t, s, "#q")
	if err := s.Input(ctx, InputEvent{Kind: "click", X: x, Y: y}); err != nil {
		t.Fatal(err)
	}
	for _, r := range "wid" {
		if err := s.Input(ctx, InputEvent{Kind: "key_down", Key: string(r), Text: string(r)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.VisitURL(ctx, sites.A+"/live/shop?q=wid"); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	text := obs.Text()
	if !strings.Contains(text, "You searched for "+policy.TypedPlaceholder) {
		t.Errorf("the echo of what the person typed is not hidden:\n%s", text)
	}
	if !strings.Contains(text, "We sell widgets.") {
		t.Errorf("the page's own words were changed:\n%s", text)
	}
}

// A screencast that sends nothing (Chromium sends no frame when a start
// races a change of renderer, or on a busy machine, and a page that then
// never paints sends none later): the viewer still gets frames, taken by
// the loop itself within the screencast's size, and they follow the page.
func TestScreencastThatSendsNothing(t *testing.T) {
	s, sites := liveSurfer(t, Config{}, sandbox.SessionConfig{})
	if _, err := s.VisitURL(context.Background(), sites.A+"/live/page"); err != nil {
		t.Fatal(err)
	}
	castSilent.Store(true)
	t.Cleanup(func() { castSilent.Store(false) })
	frames, stop := watch(t, s, ScreencastOptions{Quality: 50, MaxWidth: 400})
	first := nextFrame(t, frames, "from a silent screencast", func(Frame) bool { return true })
	vp := s.sess.Info().Viewport
	if first.Width != 400 || first.ViewportWidth != float64(vp.Width) || first.ViewportHeight != float64(vp.Height) ||
		!strings.HasSuffix(first.URL, "/live/page") || !bytes.HasPrefix(first.JPEG, []byte{0xff, 0xd8}) {
		t.Fatalf("first frame: %dx%d of a %gx%g viewport, url %q", first.Width, first.Height, first.ViewportWidth, first.ViewportHeight, first.URL)
	}
	if _, err := s.Page().Evaluate(`document.body.style.background = '#123'`); err != nil {
		t.Fatal(err)
	}
	nextFrame(t, frames, "after the page changed", func(f Frame) bool { return !bytes.Equal(f.JPEG, first.JPEG) })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if n, k := s.cast.started.Load(), s.cast.kicks.Load(); n != 1 || k == 0 {
		t.Errorf("%d screencasts started and %d started again; want one, started again", n, k)
	}
}
