package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/surfkit/surf/tools"
)

// checked binds a spec to a handler that checks what validation promises:
// the input it receives, marshaled back, satisfies the tool's published
// schema (as judged by jsonschema-go, not by this package). Some inputs make
// the handler panic or fail, to exercise those paths too.
func checked[In any](t *testing.T, cur *atomic.Pointer[testing.T], s tools.Spec[In]) *tools.Tool {
	var resolved *jsonschema.Resolved
	tool := s.Bind(func(ctx context.Context, in In) (*tools.Result, error) {
		t := cur.Load()
		b, err := json.Marshal(in)
		if err != nil {
			t.Errorf("%s: marshal input: %v", s.Name, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if r := tools.Reasoning(ctx); r != "" {
			m[tools.ReasoningField] = r
		}
		if err := resolved.Validate(m); err != nil {
			t.Errorf("%s: handler received input that violates the schema: %s: %v", s.Name, b, err)
		}
		switch string(b) {
		case `{"target_id":13}`:
			panic("unlucky")
		case `{"target_id":14}`:
			return nil, tools.Errorf("element 14 is covered")
		}
		return tools.Text("ok"), nil
	})
	var err error
	if resolved, err = tool.Schema().Resolve(nil); err != nil {
		t.Fatal(err)
	}
	return tool
}

// fuzzRegistry builds the catalog with checking handlers. Handlers and the
// logger report to whichever test iteration is current.
func fuzzRegistry(t *testing.T, cur *atomic.Pointer[testing.T]) *tools.Registry {
	r, err := tools.NewRegistry(tools.Config{
		Logger:      slog.New(&currentTestHandler{cur: cur}),
		MaxArgBytes: 1 << 16,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Add(
		checked(t, cur, tools.VisitURL), checked(t, cur, tools.WebSearch), checked(t, cur, tools.HistoryBack),
		checked(t, cur, tools.HistoryForward), checked(t, cur, tools.RefreshPage), checked(t, cur, tools.PageUp),
		checked(t, cur, tools.PageDown), checked(t, cur, tools.ScrollElementUp), checked(t, cur, tools.ScrollElementDown),
		checked(t, cur, tools.Click), checked(t, cur, tools.InputText), checked(t, cur, tools.Hover),
		checked(t, cur, tools.SelectOption), checked(t, cur, tools.Keypress), checked(t, cur, tools.UploadFile),
		checked(t, cur, tools.CreateTab), checked(t, cur, tools.SwitchTab), checked(t, cur, tools.CloseTab),
		checked(t, cur, tools.Sleep), checked(t, cur, tools.ReadPage), checked(t, cur, tools.SummarizePage),
		checked(t, cur, tools.AnswerQuestion), checked(t, cur, tools.StopAction),
	)
	return r
}

// currentTestHandler fails the current iteration on Error-level logs other
// than the expected handler panic: those mean the registry's validator and
// jsonschema-go disagree, or validated input failed to decode.
type currentTestHandler struct{ cur *atomic.Pointer[testing.T] }

func (h *currentTestHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *currentTestHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && r.Message != "tools: handler panicked" {
		h.cur.Load().Errorf("unexpected log: %s", r.Message)
	}
	return nil
}
func (h *currentTestHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *currentTestHandler) WithGroup(string) slog.Handler      { return h }

var _ slog.Handler = (*currentTestHandler)(nil)

// FuzzDispatch sends arbitrary names and argument bytes to the dispatcher.
// It must never panic, never return a runtime error (the handlers here
// return none), never run a handler with input outside the schema, never
// run a tool that was not offered, and never leave goroutines behind.
func FuzzDispatch(f *testing.F) {
	seeds := []struct{ name, args string }{
		{"click", `{"target_id": 12}`},
		{"WebSurfer_click", `{"target_id": "13"}`},
		{"click", `{"target_id": 14, "reasoning": "x"}`},
		{"functions.input_text", `{"input_field_id": 1, "text_value": "hi", "press_enter": "false"}`},
		{"input_text", `"{\"input_field_id\": 2, \"text_value\": \"x\"}"`},
		{"keypress", `{"keys": "Enter"}`},
		{"keypress", `{"keys": ["Control+A", null]}`},
		{"sleep", `{"seconds": 1e-400}`},
		{"sleep", `{"seconds": "-0"}`},
		{"switch_tab", `{"index": -0.0}`},
		{"page_down", ``},
		{"page_up", `null`},
		{"read_page", `{"page": 1.0000000000000002}`},
		{"visit_url", `{"url": "\ud800"}`},
		{"stop_action", `{"answer": "done", "answer": "again"}`},
		{"teleport", `{}`},
		{"Click", `[[[[[[[[[[`},
		{"click", `{"target_id": 9007199254740993}`},
	}
	for _, s := range seeds {
		f.Add(s.name, []byte(s.args))
	}
	var (
		reg *tools.Registry
		cur atomic.Pointer[testing.T]
	)
	f.Fuzz(func(t *testing.T, name string, args []byte) {
		cur.Store(t)
		if reg == nil {
			reg = fuzzRegistry(t, &cur)
		}
		before := runtime.NumGoroutine()
		// Offer every tool except page_down.
		offered := make([]string, 0, 23)
		for _, n := range reg.Names() {
			if n != "page_down" {
				offered = append(offered, n)
			}
		}
		res, err := reg.Call(context.Background(), name, args, offered...)
		if err != nil {
			t.Fatalf("runtime error: %v", err)
		}
		if res == nil {
			t.Fatal("nil result")
		}
		if res.Ran && res.Tool == "page_down" {
			t.Fatal("ran a tool that was not offered")
		}
		if res.Ran != (res.Args != nil) {
			t.Fatalf("Ran=%v Args=%s", res.Ran, res.Args)
		}
		if res.IsError && res.Text == "" {
			t.Fatal("error result without text")
		}
		if !res.Ran && len(res.Text) > 4000 {
			t.Fatalf("refusal text is %d bytes", len(res.Text))
		}
		if strings.Contains(res.Text, "internal error") {
			t.Fatalf("dispatcher bug: %s", res.Text)
		}
		if res.Ran && !json.Valid(res.Args) {
			t.Fatalf("invalid Args %q", res.Args)
		}
		// No goroutines left behind (allow the runtime a moment to settle).
		for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before; {
			if time.Now().After(deadline) {
				t.Fatalf("goroutines: %d before, %d after", before, runtime.NumGoroutine())
			}
			time.Sleep(time.Millisecond)
		}
	})
}
