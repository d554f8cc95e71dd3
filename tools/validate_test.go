package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/surfkit/surf/tools"
)

// TestCallRefusesBadArguments: each bad call comes back as an error result
// naming the problem, and the handler never runs.
func TestCallRefusesBadArguments(t *testing.T) {
	huge := strings.Repeat("a", 1<<20)
	tests := []struct {
		name string
		tool string
		args string
		want []string // substrings of the error text
	}{
		{"wrong type string", "click", `{"target_id": "abc"}`, []string{"target_id: expected an integer, got string \"abc\"", "Usage: click(target_id: integer, reasoning?: string)"}},
		{"wrong type bool", "click", `{"target_id": true}`, []string{"target_id: expected an integer, got boolean true"}},
		{"wrong type array", "click", `{"target_id": [1]}`, []string{"target_id: expected an integer, got an array of 1 items"}},
		{"wrong type object", "click", `{"target_id": {"id": 1}}`, []string{"target_id: expected an integer, got an object"}},
		{"fraction for integer", "click", `{"target_id": 12.5}`, []string{"target_id: expected an integer, got \"12.5\""}},
		{"fraction string for integer", "click", `{"target_id": "12.5"}`, []string{"target_id: expected an integer, got \"12.5\""}},
		{"hex string for integer", "click", `{"target_id": "0x0c"}`, []string{"target_id: expected an integer, got string \"0x0c\""}},
		{"zero id", "click", `{"target_id": 0}`, []string{"target_id: 0 is below the minimum 1"}},
		{"negative id", "click", `{"target_id": -3}`, []string{"target_id: -3 is below the minimum 1"}},
		{"id above maximum", "click", `{"target_id": 1000001}`, []string{"target_id: 1000001 is above the maximum 1000000"}},
		{"integer beyond 2^53", "click", `{"target_id": 1e300}`, []string{"target_id: integer \"1e300\" is out of range"}},
		{"number beyond float64", "click", `{"target_id": 1e400}`, []string{"target_id: number \"1e400\" is out of range"}},
		{"missing required", "click", `{}`, []string{"missing required field target_id (integer)"}},
		{"null required", "click", `{"target_id": null}`, []string{"missing required field target_id"}},
		{"unknown field", "click", `{"target_id": 1, "force": true}`, []string{`unknown field "force"`}},
		{"camel case field", "click", `{"targetId": 1}`, []string{`unknown field "targetId" (did you mean target_id?)`, "missing required field target_id"}},
		{"several problems", "input_text", `{"foo": 1, "press_enter": "yes"}`, []string{`unknown field "foo"`, "missing required field input_field_id", "missing required field text_value", "press_enter: expected a boolean (true or false), got string \"yes\""}},
		{"text over cap", "input_text", `{"input_field_id": 3, "text_value": "` + strings.Repeat("x", 10001) + `"}`, []string{"text_value: too long: 10001 characters, at most 10000 allowed"}},
		{"1 MB url", "visit_url", `{"url": "` + huge + `"}`, []string{"url: too long: 1048576 characters, at most 8192 allowed"}},
		{"empty url", "visit_url", `{"url": ""}`, []string{"url: must not be empty"}},
		{"url number", "visit_url", `{"url": 42}`, []string{"url: expected a string, got number \"42\""}},
		{"empty keys", "keypress", `{"keys": []}`, []string{"keys: expected at least 1 items, got 0"}},
		{"too many keys", "keypress", `{"keys": [` + strings.TrimSuffix(strings.Repeat(`"a",`, 51), ",") + `]}`, []string{"keys: expected at most 50 items, got 51"}},
		{"empty key", "keypress", `{"keys": ["Enter", ""]}`, []string{"keys[1]: must not be empty"}},
		{"key not string", "keypress", `{"keys": [1]}`, []string{"keys[0]: expected a string, got number \"1\""}},
		{"null key", "keypress", `{"keys": ["a", null]}`, []string{"keys[1]: expected string, got null"}},
		{"keys object", "keypress", `{"keys": {"a": 1}}`, []string{"keys: expected an array, got an object"}},
		{"sleep zero", "sleep", `{"seconds": 0}`, []string{"seconds: 0 must be greater than 0"}},
		{"sleep too long", "sleep", `{"seconds": 10.5}`, []string{"seconds: 10.5 is above the maximum 10"}},
		{"sleep NaN string", "sleep", `{"seconds": "NaN"}`, []string{"seconds: expected a number, got string \"NaN\""}},
		{"tab index negative", "switch_tab", `{"index": -1}`, []string{"index: -1 is below the minimum 0"}},
		{"read page zero", "read_page", `{"page": 0}`, []string{"page: 0 is below the minimum 1"}},
		{"reasoning wrong type", "click", `{"target_id": 1, "reasoning": 5}`, []string{"reasoning: expected a string, got number \"5\""}},
		{"reasoning too long", "click", `{"target_id": 1, "reasoning": "` + strings.Repeat("r", tools.ReasoningMaxLength+1) + `"}`, []string{"reasoning: too long"}},
		{"args array", "click", `[1, 2]`, []string{"arguments must be a JSON object, got an array of 2 items"}},
		{"args number", "click", `42`, []string{"arguments must be a JSON object, got number \"42\""}},
		{"args plain string", "click", `"click the button"`, []string{`arguments must be a JSON object, got a string: "click the button"`}},
		{"malformed JSON", "click", `{"target_id": 5`, []string{"arguments are not valid JSON", `"{\"target_id\": 5"`}},
		{"malformed long JSON is cut", "visit_url", `{"url": "` + strings.Repeat("b", 500), []string{"arguments are not valid JSON", "... (509 bytes)"}},
		{"single quotes", "click", `{'target_id': 5}`, []string{"arguments are not valid JSON"}},
		{"duplicate key", "click", `{"target_id": 1, "target_id": 2}`, []string{`duplicate key "target_id"`}},
		{"two objects", "click", `{"target_id": 1}{"target_id": 2}`, []string{"unexpected data after the JSON value"}},
		{"wrapped bad args", "click", `"{\"target_id\": \"x\"}"`, []string{"target_id: expected an integer, got string \"x\""}},
		{"deep nesting", "click", strings.Repeat("[", 100) + strings.Repeat("]", 100), []string{"nested deeper than 32 levels"}},
		{"no-arg tool with arg", "page_down", `{"pixels": 400}`, []string{`unknown field "pixels"`, "Usage: page_down(reasoning?: string)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, rec := catalogRegistry(t)
			res, err := reg.Call(context.Background(), tt.tool, json.RawMessage(tt.args), reg.Names()...)
			if err != nil {
				t.Fatalf("Call returned runtime error %v", err)
			}
			if !res.IsError {
				t.Fatalf("Call succeeded with %q; want an error result", res.Text)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Text, w) {
					t.Errorf("error text %q\ndoes not contain %q", clip(res.Text), w)
				}
			}
			if len(res.Text) > 2000 {
				t.Errorf("error text is %d bytes; hostile input must not flood the model", len(res.Text))
			}
			if n := rec.total(); n != 0 {
				t.Errorf("handler ran %d times for refused call", n)
			}
			if res.Ran || res.Args != nil {
				t.Errorf("Ran=%v Args=%s for refused call", res.Ran, res.Args)
			}
			if res.Tool != tt.tool {
				t.Errorf("Result.Tool = %q, want %q", res.Tool, tt.tool)
			}
		})
	}
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// TestCallAcceptsAndNormalizes: well-formed and leniently spelled calls
// reach the handler with the right typed input.
func TestCallAcceptsAndNormalizes(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		args     string
		want     any
		wantArgs string // normalized Args JSON
	}{
		{"int", "click", `{"target_id": 12}`, tools.TargetArgs{TargetID: 12}, `{"target_id":12}`},
		{"int as string", "click", `{"target_id": "12"}`, tools.TargetArgs{TargetID: 12}, `{"target_id":12}`},
		{"int as padded string", "click", `{"target_id": " +12 "}`, tools.TargetArgs{TargetID: 12}, `{"target_id":12}`},
		{"int written as float", "click", `{"target_id": 12.0}`, tools.TargetArgs{TargetID: 12}, `{"target_id":12}`},
		{"int with exponent", "click", `{"target_id": 1.2e1}`, tools.TargetArgs{TargetID: 12}, `{"target_id":12}`},
		{"wrapped in a string", "click", `"{\"target_id\": 5}"`, tools.TargetArgs{TargetID: 5}, `{"target_id":5}`},
		{"wrapped twice", "click", `"\"{\\\"target_id\\\": 5}\""`, tools.TargetArgs{TargetID: 5}, `{"target_id":5}`},
		{"surrounding space", "click", " \n{\"target_id\": 5}\t ", tools.TargetArgs{TargetID: 5}, `{"target_id":5}`},
		{"empty args", "page_down", ``, tools.NoArgs{}, `{}`},
		{"blank args", "page_down", "  \n", tools.NoArgs{}, `{}`},
		{"null args", "page_down", `null`, tools.NoArgs{}, `{}`},
		{"empty string args", "page_down", `""`, tools.NoArgs{}, `{}`},
		{"empty object", "page_down", `{}`, tools.NoArgs{}, `{}`},
		{"input defaults", "input_text", `{"input_field_id": 3, "text_value": "hi"}`,
			tools.InputTextArgs{InputFieldID: 3, TextValue: "hi", PressEnter: true, DeleteExistingText: true},
			`{"delete_existing_text":true,"input_field_id":3,"press_enter":true,"text_value":"hi"}`},
		{"input explicit false", "input_text", `{"input_field_id": 3, "text_value": "", "press_enter": false, "delete_existing_text": "false"}`,
			tools.InputTextArgs{InputFieldID: 3, TextValue: "", PressEnter: false, DeleteExistingText: false}, ""},
		{"input null means default", "input_text", `{"input_field_id": 3, "text_value": "x", "press_enter": null, "delete_existing_text": "TRUE"}`,
			tools.InputTextArgs{InputFieldID: 3, TextValue: "x", PressEnter: true, DeleteExistingText: true}, ""},
		{"text at cap", "input_text", `{"input_field_id": 1, "text_value": "` + strings.Repeat("é", 10000) + `"}`,
			tools.InputTextArgs{InputFieldID: 1, TextValue: strings.Repeat("é", 10000), PressEnter: true, DeleteExistingText: true}, ""},
		{"keys", "keypress", `{"keys": ["Control+A", "Backspace", "Enter"]}`, tools.KeypressArgs{Keys: []string{"Control+A", "Backspace", "Enter"}}, ""},
		{"single key", "keypress", `{"keys": "Enter"}`, tools.KeypressArgs{Keys: []string{"Enter"}}, `{"keys":["Enter"]}`},
		{"sleep default", "sleep", `{}`, tools.SleepArgs{Seconds: 3}, `{"seconds":3}`},
		{"sleep string", "sleep", `{"seconds": "2.5"}`, tools.SleepArgs{Seconds: 2.5}, `{"seconds":2.5}`},
		{"sleep max", "sleep", `{"seconds": 10}`, tools.SleepArgs{Seconds: 10}, ""},
		{"read default", "read_page", `{"page": null}`, tools.ReadPageArgs{Page: 1}, `{"page":1}`},
		{"tab zero", "switch_tab", `{"index": 0}`, tools.TabArgs{Index: 0}, `{"index":0}`},
		{"upload", "upload_file", `{"target_id": 4, "path": "cv.pdf"}`, tools.UploadFileArgs{TargetID: 4, Path: "cv.pdf"}, ""},
		{"select", "select_option", `{"target_id": 4, "option": "Blue"}`, tools.SelectOptionArgs{TargetID: 4, Option: "Blue"}, ""},
		{"stop", "stop_action", `{"answer": "42"}`, tools.StopActionArgs{Answer: "42"}, ""},
		{"reasoning removed from args", "visit_url", `{"url": "example.com", "reasoning": "start"}`, tools.URLArgs{URL: "example.com"}, `{"url":"example.com"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, rec := catalogRegistry(t)
			res, err := reg.Call(context.Background(), tt.tool, json.RawMessage(tt.args), reg.Names()...)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError {
				t.Fatalf("error result: %s", clip(res.Text))
			}
			if rec.count(tt.tool) != 1 {
				t.Fatalf("handler ran %d times, want 1", rec.count(tt.tool))
			}
			if got := rec.input(tt.tool); !deepEqual(got, tt.want) {
				t.Errorf("handler got %#v, want %#v", got, tt.want)
			}
			if !res.Ran || res.Tool != tt.tool || res.Text != tt.tool+" ok" {
				t.Errorf("result %+v", res)
			}
			if tt.wantArgs != "" && string(res.Args) != tt.wantArgs {
				t.Errorf("Args = %s, want %s", res.Args, tt.wantArgs)
			}
		})
	}
}

func TestReasoningReachesHandlerAndResult(t *testing.T) {
	reg, rec := catalogRegistry(t)
	res, err := reg.Call(context.Background(), "click", json.RawMessage(`{"reasoning": "the Next button", "target_id": 3}`), "click")
	if err != nil || res.IsError {
		t.Fatalf("Call: %v %+v", err, res)
	}
	if res.Reasoning != "the Next button" {
		t.Errorf("Result.Reasoning = %q", res.Reasoning)
	}
	rec.mu.Lock()
	why := rec.why["click"]
	rec.mu.Unlock()
	if why != "the Next button" {
		t.Errorf("tools.Reasoning(ctx) in handler = %q", why)
	}

	// Reasoning is reported even when the call is refused, for the journal.
	res, _ = reg.Call(context.Background(), "click", json.RawMessage(`{"reasoning": "oops", "target_id": "x"}`), "click")
	if !res.IsError || res.Reasoning != "oops" {
		t.Errorf("refused call: IsError=%v Reasoning=%q", res.IsError, res.Reasoning)
	}
}

func TestInputDeclaringReasoning(t *testing.T) {
	type in struct {
		Reasoning string `json:"reasoning,omitempty" jsonschema:"why" schema:"maxLength=20"`
		N         int    `json:"n"`
	}
	var got in
	tool := tools.New("own", "has its own reasoning field", func(ctx context.Context, v in) (*tools.Result, error) {
		got = v
		return tools.Text(tools.Reasoning(ctx)), nil
	})
	reg := newRegistry(t, tools.Config{}, tool)
	res, err := reg.Call(context.Background(), "own", json.RawMessage(`{"n": 1, "reasoning": "short"}`), "own")
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if got.Reasoning != "short" || res.Text != "short" || res.Reasoning != "short" {
		t.Errorf("got %+v, result %+v", got, res)
	}
	res, _ = reg.Call(context.Background(), "own", json.RawMessage(`{"n": 1, "reasoning": "far too long for the cap"}`), "own")
	if !res.IsError || !strings.Contains(res.Text, "reasoning: too long") {
		t.Errorf("own cap not enforced: %+v", res)
	}
}

func TestMaxArgBytes(t *testing.T) {
	rec := newRecorder()
	reg := newRegistry(t, tools.Config{MaxArgBytes: 64}, bindRecorded(rec, tools.VisitURL))
	res, err := reg.Call(context.Background(), "visit_url", json.RawMessage(`{"url": "`+strings.Repeat("a", 100)+`"}`), "visit_url")
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text, "111 bytes, at most 64 allowed") || rec.total() != 0 {
		t.Errorf("oversized call: %+v, handler calls %d", res, rec.total())
	}
	if _, err := tools.NewRegistry(tools.Config{MaxArgBytes: -1}); err == nil {
		t.Error("negative MaxArgBytes accepted")
	}
}
