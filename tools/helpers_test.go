package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/surfkit/surf/tools"
)

// recorder counts handler calls and keeps the last input per tool.
type recorder struct {
	mu    sync.Mutex
	calls map[string]int
	last  map[string]any
	why   map[string]string
}

func newRecorder() *recorder {
	return &recorder{calls: map[string]int{}, last: map[string]any{}, why: map[string]string{}}
}

func (r *recorder) note(ctx context.Context, name string, in any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[name]++
	r.last[name] = in
	r.why[name] = tools.Reasoning(ctx)
}

func (r *recorder) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[name]
}

func (r *recorder) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		n += c
	}
	return n
}

func (r *recorder) input(name string) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[name]
}

func bindRecorded[In any](rec *recorder, s tools.Spec[In]) *tools.Tool {
	return s.Bind(func(ctx context.Context, in In) (*tools.Result, error) {
		rec.note(ctx, s.Name, in)
		return tools.Textf("%s ok", s.Name), nil
	})
}

// catalogTools binds every catalog spec to a recording handler.
func catalogTools(rec *recorder) []*tools.Tool {
	return []*tools.Tool{
		bindRecorded(rec, tools.VisitURL), bindRecorded(rec, tools.WebSearch),
		bindRecorded(rec, tools.HistoryBack), bindRecorded(rec, tools.HistoryForward), bindRecorded(rec, tools.RefreshPage),
		bindRecorded(rec, tools.PageUp), bindRecorded(rec, tools.PageDown),
		bindRecorded(rec, tools.ScrollElementUp), bindRecorded(rec, tools.ScrollElementDown),
		bindRecorded(rec, tools.PageLeft), bindRecorded(rec, tools.PageRight),
		bindRecorded(rec, tools.ScrollElementLeft), bindRecorded(rec, tools.ScrollElementRight),
		bindRecorded(rec, tools.Click), bindRecorded(rec, tools.ClickAt), bindRecorded(rec, tools.Drag), bindRecorded(rec, tools.InputText), bindRecorded(rec, tools.Hover),
		bindRecorded(rec, tools.SelectOption), bindRecorded(rec, tools.Keypress), bindRecorded(rec, tools.UploadFile),
		bindRecorded(rec, tools.CreateTab), bindRecorded(rec, tools.SwitchTab), bindRecorded(rec, tools.CloseTab),
		bindRecorded(rec, tools.Sleep), bindRecorded(rec, tools.ReadPage), bindRecorded(rec, tools.SummarizePage),
		bindRecorded(rec, tools.AnswerQuestion), bindRecorded(rec, tools.AnswerDialog), bindRecorded(rec, tools.StopAction),
	}
}

func newRegistry(t testing.TB, cfg tools.Config, ts ...*tools.Tool) *tools.Registry {
	t.Helper()
	r, err := tools.NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.Add(ts...)
	return r
}

func catalogRegistry(t testing.TB) (*tools.Registry, *recorder) {
	t.Helper()
	rec := newRecorder()
	return newRegistry(t, tools.Config{Logger: failOnErrorLogger(t)}, catalogTools(rec)...), rec
}

// failOnErrorLogger fails the test on any Error-level record: the registry
// logs at Error only for handler panics and internal inconsistencies.
func failOnErrorLogger(t testing.TB) *slog.Logger {
	return slog.New(&testHandler{t: t, fail: slog.LevelError})
}

type testHandler struct {
	t    testing.TB
	fail slog.Level
	mu   *sync.Mutex
	recs *[]slog.Record
}

func (h *testHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *testHandler) Handle(_ context.Context, r slog.Record) error {
	if h.recs != nil {
		h.mu.Lock()
		*h.recs = append(*h.recs, r.Clone())
		h.mu.Unlock()
	}
	if h.fail != 0 && r.Level >= h.fail {
		var b strings.Builder
		r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
		h.t.Errorf("unexpected log at %v: %s%s", r.Level, r.Message, b.String())
	}
	return nil
}
func (h *testHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *testHandler) WithGroup(string) slog.Handler      { return h }

var _ slog.Handler = (*testHandler)(nil)

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func deepEqual(a, b any) bool { return reflect.DeepEqual(a, b) }
