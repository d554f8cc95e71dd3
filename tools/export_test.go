package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/tools"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./tools -update and review the diff\ngot:\n%s", path, clip(string(got)))
	}
}

// schemaKeywords collects every keyword used anywhere in a JSON schema.
func schemaKeywords(v any, into map[string]bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, x := range m {
		into[k] = true
		switch k {
		case "properties":
			for _, p := range x.(map[string]any) {
				schemaKeywords(p, into)
			}
		case "items":
			schemaKeywords(x, into)
		}
	}
}

func checkOpenAITool(t *testing.T, ot openai.Tool) map[string]any {
	t.Helper()
	if ot.Type != openai.ToolTypeFunction || ot.Function == nil || ot.Function.Name == "" || ot.Function.Description == "" {
		t.Fatalf("malformed tool %+v", ot)
	}
	raw, err := json.Marshal(ot.Function.Parameters)
	if err != nil {
		t.Fatal(err)
	}
	// A valid JSON Schema (2020-12, as jsonschema-go resolves it) ...
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%s: parameters are not a schema: %v", ot.Function.Name, err)
	}
	if _, err := s.Resolve(nil); err != nil {
		t.Fatalf("%s: schema does not resolve: %v", ot.Function.Name, err)
	}
	// ... of type object that refuses unknown properties.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m["type"] != "object" || m["additionalProperties"] != false {
		t.Errorf("%s: type %v, additionalProperties %v", ot.Function.Name, m["type"], m["additionalProperties"])
	}
	if _, ok := m["properties"].(map[string]any); !ok {
		t.Errorf("%s: no properties object", ot.Function.Name)
	}
	return m
}

func TestOpenAITools(t *testing.T) {
	reg, _ := catalogRegistry(t)
	ots := reg.OpenAITools(reg.Names()...)
	if len(ots) != len(tools.CatalogNames()) {
		t.Fatalf("exported %d tools", len(ots))
	}
	for i, ot := range ots {
		if ot.Function.Name != reg.Names()[i] || ot.Function.Strict {
			t.Errorf("tool %d: %s strict=%v", i, ot.Function.Name, ot.Function.Strict)
		}
		checkOpenAITool(t, ot)
	}
	// Only the names asked for, in that order; unknown names are skipped.
	sub := reg.OpenAITools("stop_action", "teleport", "click")
	if len(sub) != 2 || sub[0].Function.Name != "stop_action" || sub[1].Function.Name != "click" {
		t.Errorf("subset export: %v", sub)
	}
	if got := reg.OpenAITools(); len(got) != 0 {
		t.Errorf("export with no names returned %d tools", len(got))
	}
	// Exports are copies: changing one does not change the next.
	sub[1].Function.Parameters.(json.RawMessage)[0] = 'X'
	checkOpenAITool(t, reg.OpenAITools("click")[0])

	b, err := json.MarshalIndent(ots, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai_tools.json", append(b, '\n'))
}

func TestOpenAIStrictTools(t *testing.T) {
	reg, rec := catalogRegistry(t)
	ots := reg.OpenAIStrictTools(reg.Names()...)
	// Keywords OpenAI's strict mode accepts.
	allowed := map[string]bool{
		"type": true, "description": true, "title": true, "properties": true, "required": true,
		"additionalProperties": true, "items": true, "enum": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
		"minItems": true, "maxItems": true,
	}
	for _, ot := range ots {
		if !ot.Function.Strict {
			t.Errorf("%s not marked strict", ot.Function.Name)
		}
		m := checkOpenAITool(t, ot)
		kw := map[string]bool{}
		schemaKeywords(m, kw)
		for k := range kw {
			if !allowed[k] {
				t.Errorf("%s: keyword %q is not allowed in strict mode", ot.Function.Name, k)
			}
		}
		// Every property is required; optional ones are nullable.
		props := m["properties"].(map[string]any)
		var req []string
		for _, r := range m["required"].([]any) {
			req = append(req, r.(string))
		}
		for name := range props {
			if !slices.Contains(req, name) {
				t.Errorf("%s.%s not required in strict schema", ot.Function.Name, name)
			}
		}
		reasoning := props[tools.ReasoningField].(map[string]any)
		if ty, _ := reasoning["type"].([]any); len(ty) != 2 || ty[1] != "null" {
			t.Errorf("%s: reasoning type %v, want [string null]", ot.Function.Name, reasoning["type"])
		}
	}
	// What a strict-mode model sends (every field, null for unused optional
	// ones) is accepted and gets the defaults.
	res, err := reg.Call(context.Background(), "input_text",
		json.RawMessage(`{"reasoning": null, "input_field_id": 2, "text_value": "hello", "press_enter": null, "delete_existing_text": false}`), "input_text")
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if got, want := rec.input("input_text"), (tools.InputTextArgs{InputFieldID: 2, TextValue: "hello", PressEnter: true}); !deepEqual(got, want) {
		t.Errorf("handler got %+v, want %+v", got, want)
	}
	b, err := json.MarshalIndent(ots, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "openai_strict_tools.json", append(b, '\n'))
}

// TestOpenAIRoundTrip sends the exported tools through the real go-openai
// client to a fake OpenAI server, which answers with the kind of decorated
// call AutoGen's agents produce, and runs that call through the registry.
func TestOpenAIRoundTrip(t *testing.T) {
	reg, rec := catalogRegistry(t)
	var gotTools []openai.Tool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req openai.ChatCompletionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		gotTools = req.Tools
		json.NewEncoder(w).Encode(openai.ChatCompletionResponse{
			ID: "c1", Object: "chat.completion", Model: req.Model,
			Choices: []openai.ChatCompletionChoice{{
				FinishReason: openai.FinishReasonToolCalls,
				Message: openai.ChatCompletionMessage{
					Role: openai.ChatMessageRoleAssistant,
					ToolCalls: []openai.ToolCall{{
						ID: "call_1", Type: openai.ToolTypeFunction,
						Function: openai.FunctionCall{Name: "WebSurfer_click", Arguments: `{"target_id": "7", "reasoning": "open the first result"}`},
					}},
				},
			}},
		})
	}))
	defer srv.Close()

	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = srv.URL + "/v1"
	client := openai.NewClientWithConfig(cfg)
	offered := []string{"click", "page_down", "stop_action"}
	resp, err := client.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "fake",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "click the first result"}},
		Tools:    reg.OpenAITools(offered...),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(gotTools) != 3 || gotTools[0].Function.Name != "click" {
		t.Fatalf("server received tools %+v", gotTools)
	}
	params, _ := json.Marshal(gotTools[0].Function.Parameters)
	var wire struct {
		Properties map[string]struct {
			Type    string  `json:"type"`
			Minimum float64 `json:"minimum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(params, &wire); err != nil {
		t.Fatal(err)
	}
	if p := wire.Properties["target_id"]; p.Type != "integer" || p.Minimum != 1 || !slices.Equal(wire.Required, []string{"target_id"}) {
		t.Errorf("click parameters on the wire: %s", params)
	}
	call := resp.Choices[0].Message.ToolCalls[0].Function
	res, err := reg.Call(context.Background(), call.Name, json.RawMessage(call.Arguments), offered...)
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if got := rec.input("click"); !deepEqual(got, tools.TargetArgs{TargetID: 7}) || res.Reasoning != "open the first result" {
		t.Errorf("handler got %+v, reasoning %q", got, res.Reasoning)
	}
}

func TestMCPServer(t *testing.T) {
	ctx := context.Background()
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 3}
	var mu sync.Mutex
	clicked := []int{}
	click := tools.Click.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
		mu.Lock()
		clicked = append(clicked, in.TargetID)
		mu.Unlock()
		switch in.TargetID {
		case 99:
			return nil, tools.Errorf("no element 99 on this page")
		case 500:
			return nil, errors.New("browser gone")
		}
		return tools.Textf("clicked %d", in.TargetID).WithImage("image/png", png), nil
	})
	rec := newRecorder()
	reg := newRegistry(t, tools.Config{}, click, bindRecorded(rec, tools.PageDown), bindRecorded(rec, tools.StopAction))

	// page_down is offered only when the page can scroll; here it cannot.
	offered := func(context.Context) []string { return []string{"click", "stop_action"} }
	server := mcp.NewServer(&mcp.Implementation{Name: "surf", Version: "test"}, nil)
	reg.AddToMCPServer(server, offered, "click", "page_down", "teleport")

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "test"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		schema, _ := json.Marshal(tl.InputSchema)
		var m map[string]any
		json.Unmarshal(schema, &m)
		if m["type"] != "object" || m["properties"] == nil {
			t.Errorf("%s: input schema %s", tl.Name, schema)
		}
		if tl.Name == "click" {
			want, _ := reg.OpenAITools("click")[0].Function.Parameters.(json.RawMessage)
			var a, b any
			json.Unmarshal(schema, &a)
			json.Unmarshal(want, &b)
			if !deepEqual(a, b) {
				t.Errorf("MCP schema %s\ndiffers from registry schema %s", schema, want)
			}
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"click", "page_down"}) {
		t.Errorf("listed tools %v", names)
	}

	// A good call: text and image content.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "click", Arguments: map[string]any{"target_id": 3}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 2 {
		t.Fatalf("result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "clicked 3" {
		t.Errorf("content[0] = %#v", res.Content[0])
	}
	if ic, ok := res.Content[1].(*mcp.ImageContent); !ok || ic.MIMEType != "image/png" || !bytes.Equal(ic.Data, png) {
		t.Errorf("content[1] = %#v", res.Content[1])
	}

	// Bad arguments: IsError, handler not run.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "click", Arguments: map[string]any{"target_id": "three"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(res), `target_id: expected an integer, got string "three"`) {
		t.Errorf("bad call: %+v", textOf(res))
	}

	// A tool error from the handler: IsError.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "click", Arguments: map[string]any{"target_id": 99}})
	if err != nil || !res.IsError || textOf(res) != "no element 99 on this page" {
		t.Errorf("tool error: %v %q", err, textOf(res))
	}

	// Registered but not offered now: IsError, handler not run.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "page_down"})
	if err != nil || !res.IsError || !strings.Contains(textOf(res), "tool 'page_down' is not available now; available: click") {
		t.Errorf("unoffered: %v %q", err, textOf(res))
	}
	if rec.total() != 0 {
		t.Errorf("page_down ran")
	}

	// A runtime error is a protocol error.
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "click", Arguments: map[string]any{"target_id": 500}}); err == nil || !strings.Contains(err.Error(), "browser gone") {
		t.Errorf("runtime error: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(clicked, []int{3, 99, 500}) {
		t.Errorf("handler saw %v", clicked)
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestMCPResult(t *testing.T) {
	if r := tools.MCPResult(nil); r.Content == nil || len(r.Content) != 0 {
		t.Errorf("nil: %+v", r)
	}
	r := tools.MCPResult(&tools.Result{})
	if len(r.Content) != 1 || r.IsError {
		t.Errorf("empty: %+v", r)
	}
	r = tools.MCPResult(&tools.Result{Images: []tools.Image{{MIME: "image/jpeg", Data: []byte{1}}}, IsError: true})
	if len(r.Content) != 1 || !r.IsError {
		t.Errorf("image only: %+v", r)
	}
	if _, ok := r.Content[0].(*mcp.ImageContent); !ok {
		t.Errorf("image only: %#v", r.Content[0])
	}
}
