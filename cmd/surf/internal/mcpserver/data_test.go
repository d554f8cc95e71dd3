package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/perception"
)

// dataTools are the tools whose results are data: each declares an
// output schema.
var dataTools = []string{WebsurferTool, ObserveTool, ScreenshotTool, "session_list", BoardAddTool, BoardStatusTool, BoardWaitTool, BoardResultTool, BoardCancelTool}

// listedSchemas lists the server's tools and resolves each declared
// output schema.
func listedSchemas(t *testing.T, cs *mcp.ClientSession) map[string]*jsonschema.Resolved {
	t.Helper()
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tl := range lt.Tools {
		if tl.OutputSchema == nil {
			continue
		}
		b, err := json.Marshal(tl.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s's output schema: %v", tl.Name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			t.Fatalf("%s's output schema does not resolve: %v\n%s", tl.Name, err, b)
		}
		out[tl.Name] = r
	}
	return out
}

// structured checks that a result carries structured content valid
// against the tool's listed output schema, and decodes it into T.
func structured[T any](t *testing.T, schemas map[string]*jsonschema.Resolved, name string, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	if res.StructuredContent == nil {
		t.Fatalf("%s: no structured content (isError=%v): %s", name, res.IsError, text(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	r := schemas[name]
	if r == nil {
		t.Fatalf("%s declares no output schema", name)
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		t.Fatal(err)
	}
	if err := r.Validate(inst); err != nil {
		t.Fatalf("%s's structured content does not match its output schema: %v\n%s", name, err, b)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s's structured content: %v\n%s", name, err, b)
	}
	return v
}

// TestStructuredResults: every tool whose result is data declares an
// output schema and returns structured content valid against it beside
// its text (websurfer, plain and with an output_schema; observe;
// screenshot; session_list; the board tools); observe and screenshot in a
// session with no page are clear error results that open no browser
// context.
func TestStructuredResults(t *testing.T) {
	bf := newBoardFixture(t)
	s, site, fake := agentServer(t, "data.yaml", func(c *Config) { c.Board = bf.b })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	schemas := listedSchemas(t, cs)
	for _, n := range dataTools {
		if schemas[n] == nil {
			t.Errorf("%s declares no output schema", n)
		}
	}
	if schemas["visit_url"] != nil {
		t.Errorf("visit_url declares an output schema")
	}

	for _, n := range []string{ObserveTool, ScreenshotTool} {
		res := call(t, cs, n, map[string]any{})
		if !res.IsError || !strings.Contains(text(res), "no page yet") || res.StructuredContent != nil {
			t.Errorf("%s before any page: isError=%v %q", n, res.IsError, text(res))
		}
	}
	if n := s.Sessions(); n != 0 {
		t.Errorf("observe and screenshot opened %d browser contexts", n)
	}

	res := mustCall(t, cs, WebsurferTool, map[string]any{"instruction": "What is this site?", "start_url": site.URL + "/"})
	run := structured[WebsurferResult](t, schemas, WebsurferTool, res)
	if run.Answer != "Riverside Library" || run.EndReason != "answered" || run.Steps != 1 || len(run.Summary) != 1 || !strings.HasPrefix(run.LastURL, site.URL) || run.Data != nil {
		t.Errorf("websurfer's data: %+v", run)
	}
	if !strings.Contains(text(res), "answer: Riverside Library\n") {
		t.Errorf("websurfer's text changed:\n%s", text(res))
	}
	res = mustCall(t, cs, WebsurferTool, map[string]any{
		"instruction":   "When does it open?",
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"opens": map[string]any{"type": "integer"}}, "required": []string{"opens"}},
	})
	run = structured[WebsurferResult](t, schemas, WebsurferTool, res)
	if run.Answer != "10 to 14" || string(run.Data) != `{"opens":10}` {
		t.Errorf("websurfer's data with an output_schema: %+v (data %s)", run, run.Data)
	}
	fake.Check(t)

	res = mustCall(t, cs, ObserveTool, map[string]any{})
	page := structured[ObservedPage](t, schemas, ObserveTool, res)
	if !strings.HasPrefix(page.URL, site.URL) || page.Title == "" || len(page.Elements) == 0 || len(page.Tabs) != 1 || page.Text != "" {
		t.Fatalf("observe's data: %+v", page)
	}
	obs := text(res)
	search := elementID(t, obs, "textbox", "Search")
	i := slices.IndexFunc(page.Elements, func(e perception.Element) bool { return e.ID == search })
	if i < 0 || page.Elements[i].Role != "textbox" || page.Elements[i].Name != "Search" {
		t.Errorf("observe's text lists textbox Search as %d; its data: %+v", search, page.Elements)
	}
	if !strings.Contains(obs, page.Title) || len(images(res)) != 1 {
		t.Errorf("observe's text or image: %d images\n%s", len(images(res)), obs)
	}
	page = structured[ObservedPage](t, schemas, ObserveTool, mustCall(t, cs, ObserveTool, map[string]any{"text": true}))
	if !strings.Contains(page.Text, "Riverside") {
		t.Errorf("observe with text: %q", page.Text)
	}

	res = mustCall(t, cs, ScreenshotTool, map[string]any{})
	shot := structured[Screenshot](t, schemas, ScreenshotTool, res)
	imgs := images(res)
	if len(imgs) != 1 || imgs[0].MIMEType != shot.MIME {
		t.Fatalf("screenshot's images: %d, data %+v", len(imgs), shot)
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(imgs[0].Data))
	if err != nil || cfg.Width != shot.Width || cfg.Height != shot.Height || shot.Width == 0 || !strings.HasPrefix(shot.URL, site.URL) {
		t.Errorf("screenshot: %+v, image %dx%d %v", shot, cfg.Width, cfg.Height, err)
	}

	list := structured[SessionList](t, schemas, "session_list", mustCall(t, cs, "session_list", map[string]any{}))
	if len(list.Sessions) != 1 || !list.Sessions[0].Default || !list.Sessions[0].Open || !strings.HasPrefix(list.Sessions[0].URL, site.URL) || list.Open != 1 || list.Max != DefaultMaxSessions {
		t.Errorf("session_list's data: %+v", list)
	}

	added := structured[BoardTasks](t, schemas, BoardAddTool, mustCall(t, cs, BoardAddTool, jsonArgs(`{"tasks":[
		{"id":"D1","instruction":"count","output_schema":{"type":"object"},"labels":{"k":"v"}},
		{"id":"D2","instruction":"block"}]}`)))
	if len(added.Tasks) != 2 || added.Tasks[0].ID != "D1" {
		t.Errorf("board_add's data: %+v", added)
	}
	waited := structured[BoardWaited](t, schemas, BoardWaitTool, mustCall(t, cs, BoardWaitTool, jsonArgs(`{"ids":["D1"]}`)))
	if len(waited.Tasks) != 1 || waited.Tasks[0].State != "done" {
		t.Errorf("board_wait's data: %+v", waited)
	}
	res = call(t, cs, BoardWaitTool, jsonArgs(`{"ids":["D2"],"timeout":"1ms"}`))
	timedOut := structured[BoardWaited](t, schemas, BoardWaitTool, res)
	if !res.IsError || len(timedOut.Open) != 1 {
		t.Errorf("board_wait's timeout: isError=%v %+v", res.IsError, timedOut)
	}
	rec := structured[BoardRecord](t, schemas, BoardResultTool, mustCall(t, cs, BoardResultTool, map[string]any{"id": "D1"}))
	if rec.ID != "D1" || rec.State != "done" || string(rec.Data) != `{"n":1}` || rec.Labels["k"] != "v" || rec.Created.IsZero() {
		t.Errorf("board_result's data: %+v", rec)
	}
	status := structured[BoardStatus](t, schemas, BoardStatusTool, mustCall(t, cs, BoardStatusTool, map[string]any{}))
	if len(status.Tasks) != 2 {
		t.Errorf("board_status's data: %+v", status)
	}
	cancelled := structured[BoardTask](t, schemas, BoardCancelTool, mustCall(t, cs, BoardCancelTool, map[string]any{"id": "D2"}))
	if cancelled.ID != "D2" || cancelled.State != "cancelled" {
		t.Errorf("board_cancel's data: %+v", cancelled)
	}
	// An error result carries no data.
	res = call(t, cs, BoardResultTool, map[string]any{"id": "nope"})
	if !res.IsError || res.StructuredContent != nil {
		t.Errorf("board_result of an unknown task: isError=%v, data %v", res.IsError, res.StructuredContent)
	}
}
