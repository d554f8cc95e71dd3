package websurfer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// agentFixture is a surfer on the library site with a scripted model.
type agentFixture struct {
	site    library
	sites   *browsertest.Sites
	fake    *fakeopenai.Server
	model   *llm.Client
	s       *Surfer
	journal string
}

// loadScript reads a model script, with {{SITE}} and {{A}} replaced.
func loadScript(t *testing.T, name string, subst map[string]string) *fakeopenai.Script {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "agent", name))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	for k, v := range subst {
		src = strings.ReplaceAll(src, "{{"+k+"}}", v)
	}
	sc, err := fakeopenai.Parse([]byte(src))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return sc
}

// library is the fixture site testdata/sites/library (a search form,
// results, branch pages with a select) on origin A of sites.
type library struct {
	URL  string // its root, such as http://127.0.0.1:41234/library
	Host string // the host:port the policy must allow
}

func libraryOn(sites *browsertest.Sites) library {
	return library{URL: sites.A + "/library", Host: sites.HostA()}
}

func demoPolicy(t testing.TB, hosts ...string) *policy.Policy {
	t.Helper()
	var rules []policy.HostRule
	for _, h := range hosts {
		r, err := policy.ParseHostRule(h)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	return policy.MustNew(policy.Config{Allow: rules})
}

func newModel(t *testing.T, fake *fakeopenai.Server) *llm.Client {
	t.Helper()
	c, err := llm.New(context.Background(), llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model", MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newAgentFixture(t *testing.T, script string) *agentFixture {
	t.Helper()
	return newAgentFixtureScript(t, func(site, a string) *fakeopenai.Script {
		return loadScript(t, script, map[string]string{"SITE": site, "A": a})
	})
}

func newAgentFixtureScript(t *testing.T, script func(site, a string) *fakeopenai.Script) *agentFixture {
	t.Helper()
	sites := browsertest.ServeSites(t)
	site := libraryOn(sites)
	f := &agentFixture{site: site, sites: sites}
	f.fake = fakeopenai.Start(t, script(site.URL, sites.A))
	f.model = newModel(t, f.fake)
	pol := demoPolicy(t, site.Host)
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	f.s = newSurfer(t, Config{Session: sess, Model: f.model, ModelName: "test-model", SearchURL: site.URL + "/search?q=%s"})
	f.journal = filepath.Join(t.TempDir(), "run.jsonl")
	return f
}

// run runs a task to its end and returns its steps.
func (f *agentFixture) run(t *testing.T, task string, o RunOptions) ([]*Step, error) {
	t.Helper()
	j, err := journal.Open(f.journal, f.s.Policy().Redact)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	o.Journal = j
	var steps []*Step
	for st, err := range f.s.Run(context.Background(), task, o) {
		if st != nil {
			steps = append(steps, st)
		}
		if err != nil {
			return steps, err
		}
	}
	return steps, nil
}

func last(steps []*Step) *Step {
	if len(steps) == 0 {
		return &Step{}
	}
	return steps[len(steps)-1]
}

func events(t *testing.T, path string) map[journal.Kind]int {
	t.Helper()
	es, err := journal.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	n := map[journal.Kind]int{}
	for _, e := range es {
		n[e.Event]++
	}
	return n
}

func TestRunMultiStepTask(t *testing.T) {
	f := newAgentFixture(t, "multistep.yaml")
	steps, err := f.run(t, "When does the Harbour Branch open on Saturdays?", RunOptions{StartURL: f.site.URL})
	if err != nil {
		t.Fatal(err)
	}
	end := last(steps)
	if !end.Done || end.EndReason != journal.EndAnswered || end.Answer != "On Saturdays from 10:00 to 14:00." {
		t.Fatalf("the run ended %q with %q", end.EndReason, end.Answer)
	}
	if len(steps) != 3 || end.Total.Total != 1500+20+1600+15+1700+12 {
		t.Errorf("%d steps, %d tokens", len(steps), end.Total.Total)
	}
	f.fake.Check(t)
	if first := llm.Text(f.fake.Requests()[0].Chat.Messages[1]); !strings.Contains(first, "Task: When does the Harbour Branch open on Saturdays?") {
		t.Errorf("the task is not the first user message: %q", first)
	}
	// The journal has every step: observed, reasoned, gated, acted.
	got := events(t, f.journal)
	for ev, want := range map[journal.Kind]int{journal.KindRunStarted: 1, journal.KindObserved: 3, journal.KindReasoned: 3, journal.KindActed: 4, journal.KindEnded: 1} {
		if got[ev] != want {
			t.Errorf("journal has %d %s lines; want %d (%v)", got[ev], ev, want, got)
		}
	}
	if got[journal.KindGated] < 3 {
		t.Errorf("journal has %d gated lines; want one per gated action", got[journal.KindGated])
	}
	es, _ := journal.Read(f.journal)
	for _, e := range es {
		if e.Event == journal.KindObserved {
			if _, err := os.Stat(filepath.Join(filepath.Dir(f.journal), e.Image)); err != nil {
				t.Errorf("observed image %q: %v", e.Image, err)
			}
		}
	}
	// The second request shows the model only its latest screenshot.
	reqs := f.fake.Requests()
	if n := imagesIn(reqs[2]); n != 1 {
		t.Errorf("request 3 carries %d images; older steps should drop theirs", n)
	}
}

func imagesIn(r fakeopenai.Request) int {
	n := 0
	for _, m := range r.Chat.Messages {
		for _, p := range m.MultiContent {
			if p.ImageURL != nil {
				n++
			}
		}
	}
	return n
}

func TestRunRecoversFromDenial(t *testing.T) {
	f := newAgentFixture(t, "denied.yaml")
	steps, err := f.run(t, "How many branches are there?", RunOptions{StartURL: f.site.URL})
	if err != nil {
		t.Fatal(err)
	}
	if end := last(steps); end.EndReason != journal.EndAnswered {
		t.Fatalf("ended %q", end.EndReason)
	}
	f.fake.Check(t)
	denied := false
	for _, d := range steps[0].Decisions {
		denied = denied || (d.Verdict == policy.Deny && d.Rule == "private-networks")
	}
	if !denied {
		t.Errorf("step 1 decisions %+v lack the denial", steps[0].Decisions)
	}
	es, _ := journal.Read(f.journal)
	found := false
	for _, e := range es {
		found = found || (e.Event == journal.KindGated && e.Verdict == "deny" && strings.Contains(e.Reason, "127.0.0.9"))
	}
	if !found {
		t.Error("the journal has no gated deny line")
	}
}

func TestRunStalls(t *testing.T) {
	f := newAgentFixture(t, "stall.yaml")
	steps, err := f.run(t, "Look around.", RunOptions{StartURL: f.site.URL})
	if err != nil {
		t.Fatal(err)
	}
	end := last(steps)
	if end.EndReason != journal.EndStalled {
		t.Fatalf("ended %q after %d steps; want stalled", end.EndReason, len(steps))
	}
	// It was warned before it was stopped.
	warned := false
	for _, r := range f.fake.Requests() {
		for _, m := range r.Chat.Messages {
			warned = warned || strings.Contains(llm.Text(m), "You repeated the same action")
		}
	}
	if !warned || len(steps) < 3 {
		t.Errorf("stopped after %d steps, warned: %v", len(steps), warned)
	}
}

func TestRunBreakerWithholdsFailingTool(t *testing.T) {
	f := newAgentFixture(t, "breaker.yaml")
	steps, err := f.run(t, "Click the thing.", RunOptions{StartURL: f.site.URL, StallRepeats: 50, NoProgressSteps: 50})
	if err != nil {
		t.Fatal(err)
	}
	if end := last(steps); end.EndReason != journal.EndAnswered || len(steps) != 4 {
		t.Fatalf("ended %q after %d steps", end.EndReason, len(steps))
	}
	f.fake.Check(t)
}

func TestRunToolTimeout(t *testing.T) {
	f := newAgentFixture(t, "timeout.yaml")
	steps, err := f.run(t, "Wait.", RunOptions{StartURL: f.site.URL, ToolTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if end := last(steps); end.EndReason != journal.EndAnswered {
		t.Fatalf("ended %q", end.EndReason)
	}
	f.fake.Check(t)
}

func TestRunSurvivesMalformedReplies(t *testing.T) {
	f := newAgentFixture(t, "malformed.yaml")
	steps, err := f.run(t, "Do something.", RunOptions{StartURL: f.site.URL, StallRepeats: 50})
	if err != nil {
		t.Fatal(err)
	}
	if end := last(steps); end.EndReason != journal.EndAnswered || end.Answer != "done" {
		t.Fatalf("ended %q (%q) after %d steps", end.EndReason, end.Answer, len(steps))
	}
	f.fake.Check(t)
	got := events(t, f.journal)
	if got[journal.KindCorrected] < 4 {
		t.Errorf("%d corrected lines; want one for each of the 4 malformed replies (%v)", got[journal.KindCorrected], got)
	}
	// Both calls of the double reply got a tool result, one of them "not run".
	r := f.fake.Requests()[3]
	results := map[string]string{}
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(results["call_b"], "Not run") || results["call_a"] == "" || strings.Contains(results["call_a"], "Not run") {
		t.Errorf("tool results of the double reply: %v", results)
	}
}

func TestRunLimits(t *testing.T) {
	repeatHover := fakeopenai.NewScript(fakeopenai.Turn{Repeat: true, Reply: fakeopenai.Reply{
		ToolCalls: []fakeopenai.ToolCall{{Name: "hover", Arguments: `{"target_id": 1}`}},
		Usage:     &fakeopenai.Usage{PromptTokens: 900, CompletionTokens: 100},
	}})
	// A model slower than the whole run: the limit must cut the call
	// short. (On a loaded machine the run may hit the limit before it
	// asks the model at all, hence AllowUnused.)
	slow := fakeopenai.NewScript(fakeopenai.Turn{Repeat: true, Reply: fakeopenai.Reply{
		ToolCalls: []fakeopenai.ToolCall{{Name: "hover", Arguments: `{"target_id": 1}`}},
		Delay:     time.Minute,
	}})
	slow.AllowUnused = true
	for _, c := range []struct {
		name   string
		script *fakeopenai.Script
		o      RunOptions
		want   journal.EndReason
	}{
		{"steps", repeatHover, RunOptions{MaxSteps: 2}, journal.EndMaxSteps},
		{"tokens", repeatHover, RunOptions{MaxTokens: 2500}, journal.EndMaxTokens},
		{"time", slow, RunOptions{MaxTime: 2 * time.Second}, journal.EndMaxTime},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newAgentFixtureScript(t, func(string, string) *fakeopenai.Script { return c.script })
			c.o.StartURL = f.site.URL
			c.o.StallRepeats, c.o.NoProgressSteps = 100, 100
			steps, err := f.run(t, "Look around.", c.o)
			if err != nil {
				t.Fatal(err)
			}
			end := last(steps)
			if end.EndReason != c.want {
				t.Fatalf("ended %q after %d steps; want %q", end.EndReason, len(steps), c.want)
			}
			switch c.name {
			case "steps":
				if len(steps) != 2 {
					t.Errorf("%d steps with MaxSteps 2", len(steps))
				}
			case "tokens":
				if end.Total.Total < 2500 || end.Total.Total > 3000 {
					t.Errorf("spent %d tokens with MaxTokens 2500", end.Total.Total)
				}
			}
			es, _ := journal.Read(f.journal)
			if e := es[len(es)-1]; e.Event != journal.KindEnded || e.EndReason != c.want {
				t.Errorf("last journal line %+v", e)
			}
		})
	}
}

func TestRunHonoursRetryAfter(t *testing.T) {
	f := newAgentFixture(t, "retry.yaml")
	steps, err := f.run(t, "Anything.", RunOptions{StartURL: f.site.URL})
	if err != nil {
		t.Fatal(err)
	}
	if last(steps).EndReason != journal.EndAnswered {
		t.Fatalf("ended %q", last(steps).EndReason)
	}
	reqs := f.fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests; want the 429 and its retry", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
		t.Errorf("retried after %v; the server asked for 1s", gap)
	}
}

func TestSummarizeLargePageInChunks(t *testing.T) {
	f := newAgentFixture(t, "summarize.yaml")
	f.s.cfg.AskTokens = 2500
	if _, err := f.s.VisitURL(context.Background(), f.sites.A+"/agent/big.html"); err != nil {
		t.Fatal(err)
	}
	res, err := f.s.Tools().Call(context.Background(), "summarize_page", json.RawMessage(`{}`), f.s.Offered()...)
	if err != nil || res.IsError {
		t.Fatalf("summarize_page: %v %+v", err, res)
	}
	if !strings.Contains(res.Text, "A long page of opening hours for every branch.") {
		t.Errorf("result: %s", res.Text)
	}
	f.fake.Check(t)
	reqs := f.fake.Requests()
	if len(reqs) < 3 {
		t.Fatalf("%d requests; a page larger than the budget needs chunks", len(reqs))
	}
	for _, r := range reqs {
		if r.Tokens > 2500 {
			t.Errorf("request %d is %d tokens, over the budget", r.N, r.Tokens)
		}
	}
}

// TestRunRecoversFromBrowserCrash kills the browser under a running task:
// the run relaunches it, reopens the page and finishes.
func TestRunRecoversFromBrowserCrash(t *testing.T) {
	site := libraryOn(browsertest.ServeSites(t))
	fake := fakeopenai.Start(t, loadScript(t, "crash.yaml", map[string]string{"SITE": site.URL}))
	pol := demoPolicy(t, site.Host)
	var sandboxes []*sandbox.Sandbox
	defer func() {
		for _, sb := range sandboxes {
			sb.Close()
		}
	}()
	launch := func(ctx context.Context) (*sandbox.Session, error) {
		sb, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env(), Policy: pol})
		if err != nil {
			return nil, err
		}
		sandboxes = append(sandboxes, sb)
		return sb.NewSession(ctx, sandbox.SessionConfig{})
	}
	sess, err := launch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(context.Background(), Config{Session: sess, Model: newModel(t, fake)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jpath := filepath.Join(t.TempDir(), "run.jsonl")
	j, _ := journal.Open(jpath, nil)
	defer j.Close()
	var steps []*Step
	for st, err := range s.Run(context.Background(), "Search for harbour.", RunOptions{StartURL: site.URL, Journal: j, Relaunch: launch}) {
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
		if st.N == 1 {
			// Kill the browser the way a crash would, and go on only once
			// it is gone for sure: step 2 must find it lost, not show the
			// model the observation step 1 took before the kill.
			killBrowser(t, sandboxes[0])
			awaitBrowserGone(t, sandboxes[0], sess)
		}
	}
	end := last(steps)
	if end.EndReason != journal.EndAnswered || end.Answer != "recovered" {
		t.Fatalf("ended %q (%q)", end.EndReason, end.Answer)
	}
	if len(sandboxes) != 2 {
		t.Errorf("%d browsers launched; want a relaunch", len(sandboxes))
	}
	if events(t, jpath)[journal.KindRecovered] != 1 {
		t.Error("the journal does not record the recovery")
	}
	// The page's URL in the note is quoted, as in an observation.
	var recovered string
	for _, st := range steps {
		recovered += st.Recovered
	}
	if !strings.Contains(recovered, `; reopened "`+site.URL) {
		t.Errorf("the recovery note does not quote the page's URL: %q", recovered)
	}
	fake.Check(t)
}

// awaitBrowserGone returns once sb's killed browser process is gone, the
// Playwright connection has noticed (the run checks that before it reuses
// an observation), and a call on sess fails with an error
// sandbox.BrowserGone recognises (the run relaunches on those).
func awaitBrowserGone(t *testing.T, sb *sandbox.Sandbox, sess *sandbox.Session) {
	t.Helper()
	pid := sb.Info().PID
	// Not a timing assertion: a bound on a wait that would otherwise
	// hang the test if the kill went unnoticed.
	deadline := time.Now().Add(time.Minute)
	for proc.Alive(pid) || sb.Browser().IsConnected() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the kill: browser pid %d alive %v, connected %v", pid, proc.Alive(pid), sb.Browser().IsConnected())
		}
		time.Sleep(10 * time.Millisecond)
	}
	err := bounded.Call(time.Minute, func() error {
		p, err := sess.NewPage(context.Background())
		if err == nil {
			p.Close()
		}
		return err
	})
	if !sandbox.BrowserGone(err) {
		t.Fatalf("a new page after the kill: %v; want an error saying the browser is gone", err)
	}
}

// TestKilledRunLeavesParsableJournal runs a task in a child process and
// kills it with SIGKILL mid-run: every finished line of its journal
// parses.
func TestKilledRunLeavesParsableJournal(t *testing.T) {
	jpath := filepath.Join(t.TempDir(), "run.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRunForever$")
	cmd.Env = append(os.Environ(), "SURF_TEST_HELPER=run-forever", "SURF_TEST_JOURNAL="+jpath)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	steps := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "step ") {
			steps++
			if steps == 3 {
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if steps < 3 {
		t.Fatalf("the child made %d steps before dying", steps)
	}
	// Its browser dies with it (the leak check in TestMain would see it);
	// its temp dir is named for its pid, so clean that here.
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", cmd.Process.Pid)))
	for _, m := range matches {
		os.RemoveAll(m)
	}
	b, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	complete := lines[:len(lines)-1] // the last element follows the last newline
	if len(complete) < 6 {
		t.Fatalf("only %d finished lines", len(complete))
	}
	for i, l := range complete {
		var e journal.Entry
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Errorf("line %d does not parse: %v: %q", i+1, err, l)
		}
	}
}

// TestHelperRunForever is the child of TestKilledRunLeavesParsableJournal.
func TestHelperRunForever(t *testing.T) {
	if os.Getenv("SURF_TEST_HELPER") != "run-forever" {
		t.Skip("a helper process for TestKilledRunLeavesParsableJournal")
	}
	site := libraryOn(browsertest.ServeSites(t))
	fake := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Turn{Repeat: true, Reply: fakeopenai.Reply{
		ToolCalls: []fakeopenai.ToolCall{{Name: "page_down", Arguments: `{}`}, {Name: "hover", Arguments: `{"target_id": 1}`}},
		Delay:     50 * time.Millisecond,
	}}))
	sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env(), Policy: demoPolicy(t, site.Host)})
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := sb.NewSession(context.Background(), sandbox.SessionConfig{})
	s, _ := New(context.Background(), Config{Session: sess, Model: newModel(t, fake)})
	j, _ := journal.Open(os.Getenv("SURF_TEST_JOURNAL"), nil)
	for st := range s.Run(context.Background(), "Browse forever.", RunOptions{StartURL: site.URL, Journal: j, MaxSteps: 1000, StallRepeats: 1000, NoProgressSteps: 1000}) {
		fmt.Printf("step %d\n", st.N)
	}
}

// TestSystemPromptForImageKinds checks that the system prompt describes
// the image each kind attaches, and is unchanged for set-of-mark (recorded
// model replies are matched against it).
func TestSystemPromptForImageKinds(t *testing.T) {
	if systemPromptFor(ImageMarks) != systemPrompt || !strings.Contains(systemPrompt, marksSentence) {
		t.Fatal("the set-of-mark prompt changed, or no longer holds the sentence on the image")
	}
	if p := systemPromptFor(ImagePlain); strings.Contains(p, "numbers drawn") || !strings.Contains(p, "A screenshot of the viewport is attached.") {
		t.Errorf("plain prompt: %q", p)
	}
	if p := systemPromptFor(ImageNone); strings.Contains(p, "screenshot") {
		t.Errorf("text-only prompt mentions a screenshot: %q", p)
	}
}

// TestRunBadInput: a run that cannot start says why, in its one yield,
// without a panic and without touching the page.
func TestRunBadInput(t *testing.T) {
	var none *Surfer
	s := newSurfer(t, Config{Session: browsertest.Session(t, sandbox.SessionConfig{})})
	script := fakeopenai.NewScript(fakeopenai.Turn{Reply: fakeopenai.Reply{Content: "never asked"}})
	script.AllowUnused = true
	fake := fakeopenai.Start(t, script)
	model := newModel(t, fake)
	for _, c := range []struct {
		name string
		s    *Surfer
		task string
		o    RunOptions
		want string
	}{
		{"nil surfer", none, "Find it.", RunOptions{Model: model}, "nil *Surfer"},
		{"empty task", s, " \n", RunOptions{Model: model}, "the task is empty"},
		{"no model", s, "Find it.", RunOptions{}, "needs a model"},
		{"small context", s, "Find it.", RunOptions{Model: model, ContextTokens: 100}, "ContextTokens 100 is too small"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := 0
			for st, err := range c.s.Run(context.Background(), c.task, c.o) {
				n++
				if st != nil || err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("yielded %v, %v; want no step and an error saying %q", st, err, c.want)
				}
			}
			if n != 1 {
				t.Errorf("%d yields; want 1", n)
			}
		})
	}
	if len(fake.Requests()) != 0 {
		t.Errorf("the model was asked %d times", len(fake.Requests()))
	}
}
