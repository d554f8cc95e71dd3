package websurfer

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/telemetry"
)

func randomText(t *testing.T, prefix string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// spanDump is everything a span exports that a person could read: its
// name, attributes, status, events and resource.
func spanDump(s tracetest.SpanStub) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v %s %s|", s.Name, s.Status.Code, s.Status.Description, s.Resource)
	for _, a := range s.Attributes {
		fmt.Fprintf(&b, "%s=%s;", a.Key, a.Value.String())
	}
	for _, e := range s.Events {
		fmt.Fprintf(&b, "event %s %v;", e.Name, e.Attributes)
	}
	return b.String()
}

func spanAttr(s tracetest.SpanStub, k attribute.Key) (attribute.Value, bool) {
	for _, a := range s.Attributes {
		if a.Key == k {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// TestRunTelemetry runs a sign-in with typed text, a secret and a cookie,
// each a random value: the run has one trace (a run span, a span per step,
// per model call with its token usage, and per action, each under its
// step), the metrics count the actions and model requests, and none of the
// random values is in a span or in the metrics.
func TestRunTelemetry(t *testing.T) {
	typed, secret, cookie := randomText(t, "typed-"), randomText(t, "secret-"), randomText(t, "cookie-")
	sites := browsertest.ServeSites(t)
	sites.Handle("/login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: cookie, Path: "/"})
		fmt.Fprintf(w, "<title>Signed in</title><p>Welcome, %s</p>", htmlEscape(r.FormValue("username")))
	})
	hostA := strings.TrimPrefix(sites.A, "http://")
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{mustHostRule(t, hostA)},
		Secrets: []policy.Secret{{Name: "PASSWORD", Value: policy.SecretValue(secret), Hosts: []policy.HostRule{mustHostRule(t, "127.0.0.1")}}},
	})
	script, err := fakeopenai.Parse([]byte(`turns:
  - reply:
      tool_calls: [{name: input_text, arguments: '{"input_field_id": 1, "text_value": "` + typed + `", "press_enter": false}'}]
      usage: {prompt_tokens: 1000, completion_tokens: 10}
  - reply:
      tool_calls: [{name: input_text, arguments: '{"input_field_id": 2, "text_value": "<secret:PASSWORD>", "press_enter": false}'}]
      usage: {prompt_tokens: 1100, completion_tokens: 11}
  - reply:
      tool_calls: [{name: click, arguments: '{"target_id": 4}'}]
      usage: {prompt_tokens: 1200, completion_tokens: 12}
  - expect:
      user_contains: ["Welcome"]
    reply:
      tool_calls: [{name: stop_action, arguments: '{"answer": "signed in"}'}]
      usage: {prompt_tokens: 1300, completion_tokens: 13}
`))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeopenai.Start(t, script)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	m := telemetry.NewMetrics()
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	s := newSurfer(t, Config{Session: sess, Model: newModel(t, fake), ModelName: "test-model", TracerProvider: tp, Metrics: m})
	var end *Step
	for st, err := range s.Run(context.Background(), "Sign in as "+typed+".", RunOptions{StartURL: sites.A + "/actions/login.html"}) {
		if err != nil {
			t.Fatal(err)
		}
		end = st
	}
	if end == nil || end.Answer != "signed in" {
		t.Fatalf("the run ended %+v", end)
	}

	spans := exp.GetSpans()
	byName := map[string][]tracetest.SpanStub{}
	var run tracetest.SpanStub
	steps := map[string]bool{} // span IDs of the steps
	for _, sp := range spans {
		byName[sp.Name] = append(byName[sp.Name], sp)
		switch sp.Name {
		case "surf.run":
			run = sp
		case "surf.step":
			steps[sp.SpanContext.SpanID().String()] = true
		}
	}
	if len(byName["surf.run"]) != 1 || len(byName["surf.step"]) != 4 || len(byName["chat test-model"]) != 4 {
		t.Fatalf("want 1 run, 4 steps and 4 model calls; got %d, %d, %d: %v", len(byName["surf.run"]), len(byName["surf.step"]), len(byName["chat test-model"]), byName)
	}
	for name, n := range map[string]int{"execute_tool visit_url": 1, "execute_tool input_text": 2, "execute_tool click": 1, "execute_tool stop_action": 1} {
		if len(byName[name]) != n {
			t.Errorf("%d %q spans; want %d", len(byName[name]), name, n)
		}
	}
	for _, sp := range spans {
		if sp.SpanContext.TraceID() != run.SpanContext.TraceID() {
			t.Errorf("span %s is in trace %s, not the run's %s", sp.Name, sp.SpanContext.TraceID(), run.SpanContext.TraceID())
		}
		parent := sp.Parent.SpanID().String()
		switch {
		case sp.Name == "surf.step" && parent != run.SpanContext.SpanID().String():
			t.Errorf("a step's parent is %s, not the run", parent)
		case strings.HasPrefix(sp.Name, "chat "), strings.HasPrefix(sp.Name, "execute_tool ") && sp.Name != "execute_tool visit_url":
			if !steps[parent] {
				t.Errorf("%s is not under a step", sp.Name)
			}
		}
	}
	var in int64
	for _, sp := range byName["chat test-model"] {
		v, ok := spanAttr(sp, telemetry.GenAIInputTokens)
		if !ok {
			t.Fatalf("a model call span has no gen_ai.usage.input_tokens: %v", sp.Attributes)
		}
		in += v.AsInt64()
		if v, _ := spanAttr(sp, telemetry.GenAIRequestModel); v.AsString() != "test-model" {
			t.Errorf("gen_ai.request.model = %q", v.AsString())
		}
	}
	if in != 1000+1100+1200+1300 {
		t.Errorf("the model call spans count %d input tokens; want 4600", in)
	}
	if v, _ := spanAttr(byName["execute_tool click"][0], "surf.outcome"); v.AsString() != telemetry.OK {
		t.Errorf("click's outcome is %q", v.AsString())
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	metrics := string(body)
	for _, want := range []string{
		`surf_actions_total{outcome="ok",tool="input_text"} 2`,
		`surf_actions_total{outcome="ok",tool="stop_action"} 1`,
		`surf_model_requests_total{outcome="ok"} 4`,
		`surf_model_tokens_total{type="input"} 4600`,
		`surf_action_duration_seconds_count{tool="click"} 1`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("the metrics lack %s:\n%s", want, metrics)
		}
	}
	var all strings.Builder
	for _, sp := range spans {
		all.WriteString(spanDump(sp))
	}
	for what, v := range map[string]string{"typed text": typed, "secret": secret, "cookie value": cookie} {
		if strings.Contains(all.String(), v) {
			t.Errorf("a span holds the %s", what)
		}
		if strings.Contains(metrics, v) {
			t.Errorf("the metrics hold the %s", what)
		}
	}
}

// TestDenialsByGate: Metrics counts the action gate's denials (a visit
// the policy refuses) as gate="action" and the network gate's (an image
// of an allowed page from a host outside the allowlist, which no action
// asked for) as gate="request", each once; after ReplaceSession the new
// session's denials are counted and the old one's no longer, and after
// Close nothing is.
func TestDenialsByGate(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/img", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>img</title><p>a picture</p><img alt="pixel" src="http://blocked.example/pixel.png">`)
	})
	m := telemetry.NewMetrics()
	f := newFixtureOn(t, sites, Config{Metrics: m}, sandbox.SessionConfig{})
	count := func(gate, rule string) string {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		series := fmt.Sprintf(`surf_denials_total{gate=%q,rule=%q} `, gate, rule)
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(l, series); ok {
				return v
			}
		}
		return "0"
	}
	waitCount := func(gate, rule, want string) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for count(gate, rule) != want {
			if time.Now().After(deadline) {
				t.Fatalf("surf_denials_total{gate=%q,rule=%q} = %s, want %s", gate, rule, count(gate, rule), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	f.fail("visit_url", `{"url": "http://denied.example/"}`, "denied")
	waitCount("action", "allow", "1")
	f.visit("/img")
	waitCount("request", "allow", "1")
	if got := count("action", "allow"); got != "1" {
		t.Errorf("the blocked image also counted as the action gate's: %s", got)
	}

	old := f.s.Session()
	next := browsertest.Session(t, sandbox.SessionConfig{Policy: old.Policy()})
	if err := f.s.ReplaceSession(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	old.RecordDenial(sandbox.Denial{Decision: policy.Decision{Verdict: policy.Deny, Rule: policy.RuleDeny}})
	next.RecordDenial(sandbox.Denial{Decision: policy.Decision{Verdict: policy.Deny, Rule: policy.RulePrivateNetworks}})
	if got := count("action", "deny"); got != "0" {
		t.Errorf("a denial of the replaced session was counted: %s", got)
	}
	waitCount("action", "private-networks", "1")
	f.s.Close()
	next.RecordDenial(sandbox.Denial{Decision: policy.Decision{Verdict: policy.Deny, Rule: policy.RulePrivateNetworks}})
	if got := count("action", "private-networks"); got != "1" {
		t.Errorf("a denial after Close was counted: %s", got)
	}
}
