package mcpserver

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
)

// agentServer serves the demo site and a server whose model plays the
// named script.
func agentServer(t *testing.T, script string, opts ...func(*Config)) (*Server, *demosite.Server, *fakeopenai.Server) {
	t.Helper()
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	fake := fakeopenai.StartFile(t, "testdata/agent/"+script)
	model, err := llm.New(context.Background(), llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model", MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r, err := policy.ParseHostRule(site.Host)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Sandbox:   browsertest.Sandbox(t),
		Policy:    policy.MustNew(policy.Config{Allow: []policy.HostRule{r}}),
		Model:     model,
		ModelName: "test-model",
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, site, fake
}

// TestWebsurferTool runs a whole task through the websurfer tool with the
// scripted model, and then goes on in the same browser with the action
// tools.
func TestWebsurferTool(t *testing.T) {
	s, site, fake := agentServer(t, "harbour.yaml")
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	res := mustCall(t, cs, WebsurferTool, map[string]any{
		"instruction": "When does the Harbour Branch open on Saturdays?",
		"start_url":   site.URL + "/",
	})
	got := text(res)
	for _, re := range []string{
		`(?m)^answer: On Saturdays from 10:00 to 14:00\.$`,
		`(?m)^ended: answered after 3 steps, 4847 model tokens$`,
		`(?m)^1\. input_text 4 textbox "Search" \[allow\]$`,
		`(?m)^2\. click 4 link "Harbour Branch" \[allow\]$`,
		`(?m)^3\. stop_action \{"answer":"On Saturdays from 10:00 to 14:00\."\} \[allow\]$`,
		`(?m)^last page: "` + regexp.QuoteMeta(site.URL) + `/branch[^"]*" "[^"]*"$`, // quoted, as in an observation
	} {
		if !regexp.MustCompile(re).MatchString(got) {
			t.Errorf("the result does not match %s:\n%s", re, got)
		}
	}
	fake.Check(t)
	if reqs := fake.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].Chat.Messages[1].Content, "When does the Harbour Branch open on Saturdays?") {
		t.Errorf("the first model request does not carry the instruction")
	}
	// The tools continue where the run stopped.
	res = mustCall(t, cs, "read_page", map[string]any{})
	if !strings.Contains(text(res), "Saturday") {
		t.Errorf("read_page after the run:\n%s", text(res))
	}
	// Tools that need the model are listed when there is one.
	if !strings.Contains(strings.Join(s.Tools(), " "), "summarize_page") {
		t.Errorf("summarize_page is not listed with a model: %v", s.Tools())
	}
}

// TestWebsurferDenied: the policy applies to the run's actions, and the
// step summary shows the verdict.
func TestWebsurferDenied(t *testing.T) {
	s, site, fake := agentServer(t, "denied.yaml")
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	res := mustCall(t, cs, WebsurferTool, map[string]any{"instruction": "Read the secret page.", "start_url": site.URL + "/", "max_steps": 5})
	got := text(res)
	if !regexp.MustCompile(`(?m)^1\. visit_url http://127\.0\.0\.2:9/secret \[deny \(private-networks\)\] error: denied`).MatchString(got) {
		t.Errorf("the step summary does not show the denial:\n%s", got)
	}
	if !strings.Contains(got, "answer: The page is not allowed.") {
		t.Errorf("no answer:\n%s", got)
	}
	fake.Check(t)
}

// TestWebsurferWithoutModel: a clear tool error, and the server goes on.
func TestWebsurferWithoutModel(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.ModelError = errors.New("no model is configured") })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	res := call(t, cs, WebsurferTool, map[string]any{"instruction": "anything"})
	if !res.IsError || !strings.Contains(text(res), "needs a model") || !strings.Contains(text(res), "--model") || !strings.Contains(text(res), "no model is configured") {
		t.Errorf("websurfer without a model: IsError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, WebsurferTool, map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "instruction") {
		t.Errorf("websurfer without an instruction: IsError=%v %q", res.IsError, text(res))
	}
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
}
