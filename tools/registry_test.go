package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/surfkit/surf/tools"
)

func TestResolve(t *testing.T) {
	reg, _ := catalogRegistry(t)
	tests := []struct {
		called string
		want   string // "" = no match
	}{
		{"click", "click"},
		{"WebSurfer_click", "click"},
		{"websurfer.click", "click"},
		{"functions.click", "click"},
		{"WebSurfer-input_text", "input_text"},
		{"WebSurfer_input_text", "input_text"},
		{"web_surfer:page_down", "page_down"},
		{"tools/visit_url", "visit_url"},
		{"agent_scroll_element_up", "scroll_element_up"},
		{"scroll_element_up", "scroll_element_up"},
		{"WebSurfer_Click", "click"},
		{"CLICK", "click"},
		{"Input_Text", "input_text"},
		{"  click\n", "click"},
		{"multi_tool_use.parallel", ""},
		{"clik", ""},
		{"lick", ""},
		{"click_now", ""},
		{"_click", ""},     // no prefix before the separator
		{"Xclick", ""},     // no separator
		{"element_up", ""}, // a suffix of a name is not the name
		{"", ""},
		{strings.Repeat("a", 300) + "_click", ""}, // absurdly long names are refused outright
	}
	for _, tt := range tests {
		got, ok := reg.Resolve(tt.called)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tt.called, got, ok, tt.want)
		}
	}
}

func TestPrefixedCallRuns(t *testing.T) {
	reg, rec := catalogRegistry(t)
	res, err := reg.Call(context.Background(), "WebSurfer_click", json.RawMessage(`{"target_id": 7}`), "click")
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if res.Tool != "click" || rec.count("click") != 1 {
		t.Errorf("Tool=%q calls=%d", res.Tool, rec.count("click"))
	}
}

func TestOfferedSetIsEnforced(t *testing.T) {
	tests := []struct {
		name    string
		called  string
		offered []string
		want    string
	}{
		{"not offered", "page_down", []string{"click", "stop_action"},
			"tool 'page_down' is not available now; available: click, stop_action"},
		{"prefixed name not offered", "WebSurfer_page_down", []string{"click"},
			"tool 'page_down' is not available now; available: click"},
		{"nothing offered fails closed", "click", nil,
			"tool 'click' is not available now; no tools are available now"},
		{"offered names that are not registered are ignored", "click", []string{"teleport"},
			"tool 'click' is not available now; no tools are available now"},
		{"unknown tool", "teleport", []string{"click", "page_up"},
			`unknown tool "teleport"; available: page_up, click`},
		{"unknown hostile name is quoted and cut", "x\n\"; rm -rf /" + strings.Repeat("z", 500), []string{"click"},
			`unknown tool "x\n\"; rm -rf /zzzz`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, rec := catalogRegistry(t)
			res, err := reg.Call(context.Background(), tt.called, json.RawMessage(`{"target_id": 1}`), tt.offered...)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(res.Text, tt.want) {
				t.Errorf("result %q (IsError=%v), want it to contain %q", clip(res.Text), res.IsError, tt.want)
			}
			if len(res.Text) > 600 {
				t.Errorf("error text is %d bytes", len(res.Text))
			}
			if rec.total() != 0 {
				t.Errorf("handler ran for a refused call")
			}
		})
	}
}

func TestHandlerPanicIsRecovered(t *testing.T) {
	type in struct {
		Mode string `json:"mode" schema:"enum=string|error|nil|runtime"`
	}
	var recs []slog.Record
	log := slog.New(&testHandler{t: t, mu: &sync.Mutex{}, recs: &recs})
	tool := tools.New("crash", "panics on purpose", func(ctx context.Context, v in) (*tools.Result, error) {
		switch v.Mode {
		case "string":
			panic("boom: element vanished")
		case "error":
			panic(fmt.Errorf("wrapped %w", errors.ErrUnsupported))
		case "nil":
			panic(nil)
		default:
			setEntry(nil) // runtime error: assignment to entry in nil map
		}
		return nil, nil
	})
	rec := newRecorder()
	reg := newRegistry(t, tools.Config{Logger: log}, tool, bindRecorded(rec, tools.Click))
	for mode, want := range map[string]string{
		"string":  "boom: element vanished",
		"error":   "wrapped unsupported operation",
		"nil":     "panic called with nil argument",
		"runtime": "assignment to entry in nil map",
	} {
		res, err := reg.Call(context.Background(), "crash", json.RawMessage(`{"mode": "`+mode+`"}`), "crash", "click")
		if err != nil {
			t.Fatalf("%s: runtime error %v", mode, err)
		}
		if !res.IsError || !res.Ran || !strings.Contains(res.Text, "tool 'crash' crashed: "+want) {
			t.Errorf("%s: result %+v", mode, res)
		}
		if !strings.Contains(res.Panic, want) {
			t.Errorf("%s: Result.Panic = %q", mode, res.Panic)
		}
		if strings.Contains(res.Text, "goroutine") || strings.Contains(res.Text, ".go:") {
			t.Errorf("%s: stack leaked to the model: %q", mode, res.Text)
		}
	}
	// The stack went to the log, once per panic.
	stacks := 0
	for _, r := range recs {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "stack" && strings.Contains(a.Value.String(), "goroutine") {
				stacks++
			}
			return true
		})
	}
	if stacks != 4 {
		t.Errorf("logged %d stacks, want 4", stacks)
	}
	// The registry still works.
	res, err := reg.Call(context.Background(), "click", json.RawMessage(`{"target_id": 1}`), "click")
	if err != nil || res.IsError || rec.count("click") != 1 {
		t.Errorf("after panics: %v %+v", err, res)
	}
}

var errBrowserGone = errors.New("browser gone")
var errCovered = errors.New("covered")

func TestToolErrorsAndRuntimeErrors(t *testing.T) {
	type in struct {
		Case string `json:"case"`
	}
	shared := tools.Text("shared result")
	tool := tools.New("act", "acts", func(ctx context.Context, v in) (*tools.Result, error) {
		switch v.Case {
		case "tool":
			return nil, tools.Errorf("element %d is covered by a cookie banner: %w", 12, errCovered)
		case "wrapped tool":
			return nil, fmt.Errorf("clicking: %w", tools.NewError(errCovered))
		case "tool with screenshot":
			return tools.Text("see the screenshot").WithImage("image/png", []byte("png")), tools.Errorf("no element 99 on this page")
		case "runtime":
			return nil, fmt.Errorf("clicking: %w", errBrowserGone)
		case "ctx":
			return nil, ctx.Err()
		case "nil":
			return nil, nil
		case "shared":
			return shared, nil
		case "error result":
			return &tools.Result{Text: "could not scroll", IsError: true}, nil
		}
		return tools.Text("ok"), nil
	})
	reg := newRegistry(t, tools.Config{}, tool)
	call := func(ctx context.Context, c string) (*tools.Result, error) {
		return reg.Call(ctx, "act", mustJSON(t, map[string]string{"case": c}), "act")
	}

	res, err := call(context.Background(), "tool")
	if err != nil || !res.IsError || res.Text != "element 12 is covered by a cookie banner: covered" {
		t.Errorf("tool error: %v %+v", err, res)
	}

	res, err = call(context.Background(), "wrapped tool")
	if err != nil || !res.IsError || res.Text != "clicking: covered" {
		t.Errorf("wrapped tool error: %v %+v", err, res)
	}

	res, err = call(context.Background(), "tool with screenshot")
	if err != nil || !res.IsError || res.Text != "no element 99 on this page\nsee the screenshot" || len(res.Images) != 1 {
		t.Errorf("tool error with result: %v %+v", err, res)
	}

	res, err = call(context.Background(), "runtime")
	if res != nil || !errors.Is(err, errBrowserGone) || !strings.Contains(err.Error(), "running tool act") {
		t.Errorf("runtime error: %v %+v", err, res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err = call(ctx, "ok")
	if res != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v %+v", err, res)
	}

	res, err = call(context.Background(), "nil")
	if err != nil || res == nil || res.IsError || res.Text != "" || !res.Ran {
		t.Errorf("nil result: %v %+v", err, res)
	}

	res, err = call(context.Background(), "error result")
	if err != nil || !res.IsError || res.Text != "could not scroll" {
		t.Errorf("handler error result: %v %+v", err, res)
	}

	for range 2 {
		res, err = call(context.Background(), "shared")
		if err != nil || res == shared || res.Text != "shared result" {
			t.Errorf("shared result: %v %+v", err, res)
		}
	}
	if shared.Tool != "" || shared.Ran || shared.Args != nil {
		t.Errorf("Call modified the handler's result: %+v", shared)
	}

	if !tools.IsToolError(tools.Errorf("x")) || tools.IsToolError(errBrowserGone) || tools.NewError(nil) != nil {
		t.Error("IsToolError/NewError")
	}
	if !errors.Is(tools.Errorf("denied: %w", errCovered), errCovered) {
		t.Error("Errorf does not wrap")
	}
}

func TestNewPanicsOnBadDefinitions(t *testing.T) {
	noop := func(context.Context, tools.NoArgs) (*tools.Result, error) { return nil, nil }
	tests := []struct {
		name string
		mk   func()
		want string
	}{
		{"empty name", func() { tools.New("", "d", noop) }, "invalid tool name"},
		{"upper case name", func() { tools.New("Click", "d", noop) }, "invalid tool name"},
		{"dotted name", func() { tools.New("web.click", "d", noop) }, "invalid tool name"},
		{"long name", func() { tools.New(strings.Repeat("a", 65), "d", noop) }, "invalid tool name"},
		{"no description", func() { tools.New("x", "", noop) }, "empty description"},
		{"nil handler", func() { tools.New[tools.NoArgs]("x", "d", nil) }, "nil handler"},
		{"non-struct input", func() {
			tools.New("x", "d", func(context.Context, string) (*tools.Result, error) { return nil, nil })
		}, "is not a struct"},
		{"pointer input", func() {
			tools.New("x", "d", func(context.Context, *tools.TargetArgs) (*tools.Result, error) { return nil, nil })
		}, "is not a struct"},
		{"map field", func() {
			type in struct {
				M map[string]string `json:"m"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "objects must not allow additional properties"},
		{"interface field", func() {
			type in struct {
				V any `json:"v"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "unsupported type"},
		{"channel field", func() {
			type in struct {
				C chan int `json:"c"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "unsupported"},
		{"unknown tag key", func() {
			type in struct {
				N int `json:"n" schema:"max=3"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, `unknown key "max"`},
		{"tag on wrong type", func() {
			type in struct {
				N int `json:"n" schema:"maxLength=3"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "maxLength applies to strings"},
		{"bad default", func() {
			type in struct {
				N int `json:"n,omitempty" schema:"default=yes"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "is not a JSON value"},
		{"default outside its own bounds", func() {
			type in struct {
				N int `json:"n,omitempty" schema:"minimum=5,default=1"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, "minimum"},
		{"reasoning of the wrong type", func() {
			type in struct {
				Reasoning int `json:"reasoning"`
			}
			tools.New("x", "d", func(context.Context, in) (*tools.Result, error) { return nil, nil })
		}, `field "reasoning" must be a string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if v == nil {
					t.Fatal("no panic")
				}
				if msg := fmt.Sprint(v); !strings.Contains(msg, tt.want) {
					t.Errorf("panic %q does not contain %q", msg, tt.want)
				}
			}()
			tt.mk()
		})
	}
}

func TestAddPanicsOnDuplicateAndNil(t *testing.T) {
	rec := newRecorder()
	reg := newRegistry(t, tools.Config{}, bindRecorded(rec, tools.Click))
	for name, add := range map[string]func(){
		"duplicate": func() { reg.Add(bindRecorded(rec, tools.Click)) },
		"nil":       func() { reg.Add(nil) },
		"zero":      func() { reg.Add(&tools.Tool{}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Add did not panic", name)
				}
			}()
			add()
		}()
	}
	if got := reg.Names(); !slices.Equal(got, []string{"click"}) {
		t.Errorf("Names() = %v", got)
	}
}

func TestCallIsSafeForConcurrentUse(t *testing.T) {
	reg, rec := catalogRegistry(t)
	calls := []struct{ name, args string }{
		{"click", `{"target_id": 1}`},
		{"WebSurfer_click", `{"target_id": "2"}`},
		{"input_text", `{"input_field_id": 1, "text_value": "x"}`},
		{"click", `{"target_id": "nope"}`},
		{"teleport", `{}`},
		{"sleep", ``},
	}
	var wg sync.WaitGroup
	const workers, rounds = 8, 100
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				c := calls[(w+i)%len(calls)]
				if _, err := reg.Call(context.Background(), c.name, json.RawMessage(c.args), reg.Names()...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	// Registration while calls are running is safe too.
	reg.Add(tools.New("late", "added while calls run", func(context.Context, tools.NoArgs) (*tools.Result, error) { return nil, nil }))
	wg.Wait()
	// 4 of the 6 call kinds are valid.
	if got, want := rec.total(), workers*rounds*4/6; got < want-workers || got > want+workers {
		t.Errorf("handlers ran %d times, want about %d", got, want)
	}
}

func TestCatalog(t *testing.T) {
	rec := newRecorder()
	all := catalogTools(rec)
	names := tools.CatalogNames()
	if len(all) != len(names) {
		t.Fatalf("test binds %d tools, catalog has %d", len(all), len(names))
	}
	want := []string{"visit_url", "web_search", "history_back", "history_forward", "refresh_page",
		"page_up", "page_down", "scroll_element_up", "scroll_element_down",
		"page_left", "page_right", "scroll_element_left", "scroll_element_right",
		"click", "click_at", "drag", "input_text", "hover", "select_option", "keypress", "upload_file",
		"create_tab", "switch_tab", "close_tab", "sleep", "read_page", "summarize_page", "answer_question", "answer_dialog", "stop_action"}
	if !slices.Equal(names, want) {
		t.Errorf("CatalogNames() = %v", names)
	}
	for i, tool := range all {
		if tool.Name() != names[i] {
			t.Errorf("tool %d is %s, catalog says %s", i, tool.Name(), names[i])
		}
		in, ok := tools.CatalogInput(tool.Name())
		if !ok || in != tool.InputType() {
			t.Errorf("CatalogInput(%s) = %v, %v; tool input %v", tool.Name(), in, ok, tool.InputType())
		}
		if len(tool.Description()) < 20 {
			t.Errorf("%s: description too short: %q", tool.Name(), tool.Description())
		}
		s := tool.Schema()
		if s.Type != "object" || s.Properties[tools.ReasoningField] == nil {
			t.Errorf("%s: schema %v", tool.Name(), s)
		}
		for name, p := range s.Properties {
			if p.Description == "" {
				t.Errorf("%s.%s: no description", tool.Name(), name)
			}
			if p.Type == "string" && p.MaxLength == nil {
				t.Errorf("%s.%s: string without maxLength", tool.Name(), name)
			}
			if p.Type == "integer" && (p.Minimum == nil || p.Maximum == nil) {
				t.Errorf("%s.%s: integer without bounds", tool.Name(), name)
			}
			if p.Default != nil && !strings.Contains(p.Description, "Default") {
				t.Errorf("%s.%s: default %s not stated in the description", tool.Name(), name, p.Default)
			}
			if strings.HasSuffix(name, "_id") && *p.Minimum != 1 {
				t.Errorf("%s.%s: ids start at 1", tool.Name(), name)
			}
		}
	}
	if _, ok := tools.CatalogInput("teleport"); ok {
		t.Error("CatalogInput of unknown name")
	}
	// Specific limits the brief asks for.
	limits := map[string]int{"visit_url.url": 8192, "input_text.text_value": 10000, "answer_question.question": 2000, "stop_action.answer": 20000}
	for _, tool := range all {
		for name, p := range tool.Schema().Properties {
			if want, ok := limits[tool.Name()+"."+name]; ok && *p.MaxLength != want {
				t.Errorf("%s.%s maxLength %d, want %d", tool.Name(), name, *p.MaxLength, want)
			}
		}
	}
	if got := tools.Sleep.InputType(); got != reflect.TypeFor[tools.SleepArgs]() {
		t.Errorf("Sleep.InputType() = %v", got)
	}
}

func BenchmarkCall(b *testing.B) {
	rec := newRecorder()
	reg := newRegistry(b, tools.Config{}, catalogTools(rec)...)
	names := reg.Names()
	for _, bc := range []struct{ name, tool, args string }{
		{"click", "click", `{"target_id": 12, "reasoning": "open the article"}`},
		{"prefixed_click", "WebSurfer_click", `{"target_id": "12"}`},
		{"input_text", "input_text", `{"input_field_id": 3, "text_value": "weather in Paris", "press_enter": true}`},
		{"refused", "click", `{"target_id": "twelve"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := json.RawMessage(bc.args)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.Call(context.Background(), bc.tool, args, names...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// setEntry writes to m; given a nil map it panics with a runtime error, as
// a handler's bug would.
func setEntry(m map[string]int) { m["x"] = 1 }
