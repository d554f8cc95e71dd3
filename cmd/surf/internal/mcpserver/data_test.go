package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/perception"
)

// dataTools are the tools whose results are data: each declares an
// output schema.
var dataTools = []string{WebsurferTool, ObserveTool, ScreenshotTool, "session_list", BoardAddTool, BoardStatusTool, BoardWaitTool, BoardResultTool, BoardFileTool, BoardCancelTool}

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
	if data, err := json.Marshal(res.StructuredContent); err == nil {
		t.Logf("observe: %d bytes of text, %d of structured content, %d elements", len(obs), len(data), len(page.Elements))
	}
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
	// A named session's browser context opens blank: no page to look at.
	mustCall(t, cs, "session_open", map[string]any{"name": "blank"})
	for _, n := range []string{ObserveTool, ScreenshotTool} {
		res := call(t, cs, n, map[string]any{SessionArg: "blank"})
		if !res.IsError || !strings.Contains(text(res), "no page yet") || res.StructuredContent != nil {
			t.Errorf("%s in a blank session: isError=%v %q", n, res.IsError, text(res))
		}
	}
	// An error result carries no data.
	res = call(t, cs, BoardResultTool, map[string]any{"id": "nope"})
	if !res.IsError || res.StructuredContent != nil {
		t.Errorf("board_result of an unknown task: isError=%v, data %v", res.IsError, res.StructuredContent)
	}
}

// mcpClientDir holds the TypeScript MCP client (package.json pinning the
// official SDK and ajv, data.mjs); make setup installs its node_modules.
var mcpClientDir = filepath.Join("..", "..", "..", "..", "testdata", "mcpclient")

// needMCPClient returns node's path, when node and the client's
// node_modules are there. Without them the test fails in CI (CI=true) and
// is skipped elsewhere, saying to run make setup.
func needMCPClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "ajv"} {
		if err == nil {
			_, err = os.Stat(filepath.Join(mcpClientDir, "node_modules", pkg, "package.json"))
		}
	}
	if err != nil {
		msg := "the TypeScript MCP client is not installed (" + err.Error() + "): run make setup (it runs npm ci --prefix testdata/mcpclient)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// tsCall is one call in data.mjs's summary.
type tsCall struct {
	Label      string          `json:"label"`
	Tool       string          `json:"tool"`
	IsError    bool            `json:"isError"`
	Text       string          `json:"text"`
	Structured json.RawMessage `json:"structured"`
	Valid      bool            `json:"valid"`
	Errors     json.RawMessage `json:"errors"`
	Images     []struct {
		MIMEType string `json:"mimeType"`
		Bytes    int    `json:"bytes"`
	} `json:"images"`
}

// TestStructuredResultsTypeScript is acceptance 3 of "MCP results as
// data": a real MCP client (the official TypeScript SDK) reads the
// structuredContent of websurfer (plain and with an output_schema),
// observe, screenshot, session_list and the board tools, and each is
// valid against the tool's outputSchema by ajv, a JSON Schema validator
// of others (the SDK checks it too, and throws when a result that must
// have it has none).
func TestStructuredResultsTypeScript(t *testing.T) {
	node := needMCPClient(t)
	bf := newBoardFixture(t)
	s, site, fake := agentServer(t, "data.yaml", func(c *Config) { c.Board = bf.b })
	endpoint := serveHTTP(t, s, HTTPOptions{})

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, node, "data.mjs", "--url", endpoint, "--token", testToken, "--start-url", site.URL+"/")
	run.Dir = mcpClientDir
	var out, errOut bytes.Buffer
	run.Stdout, run.Stderr = &out, &errOut
	if err := run.Run(); err != nil {
		t.Fatalf("node data.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, errOut.String(), out.String())
	}
	var sum struct {
		Tools map[string]struct {
			OutputSchema bool   `json:"outputSchema"`
			CompileError string `json:"compileError"`
		} `json:"tools"`
		Calls []tsCall `json:"calls"`
	}
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("data.mjs printed no JSON summary: %v\n%s", err, out.String())
	}
	for _, n := range dataTools {
		tl, ok := sum.Tools[n]
		if !ok || !tl.OutputSchema || tl.CompileError != "" {
			t.Errorf("%s as the TypeScript client sees it: %+v (listed %v)", n, tl, ok)
		}
	}
	calls := map[string]tsCall{}
	for _, c := range sum.Calls {
		calls[c.Label] = c
	}
	for _, l := range []string{"observe-no-page", "screenshot-no-page"} {
		c := calls[l]
		if !c.IsError || !strings.Contains(c.Text, "no page yet") || string(c.Structured) != "null" {
			t.Errorf("%s: %+v", l, c)
		}
	}
	for _, l := range []string{"websurfer", "websurfer-schema", "observe", "screenshot", "session_list", "board_add", "board_wait", "board_result"} {
		c, ok := calls[l]
		if !ok || c.IsError || !c.Valid || string(c.Structured) == "null" {
			t.Errorf("%s: not valid structured content: %+v\nstructured: %s\nerrors: %s", l, c, c.Structured, c.Errors)
		}
	}
	var ws struct {
		Answer string          `json:"answer"`
		Data   json.RawMessage `json:"data"`
	}
	json.Unmarshal(calls["websurfer"].Structured, &ws)
	if ws.Answer != "Riverside Library" {
		t.Errorf("websurfer's structured answer: %s", calls["websurfer"].Structured)
	}
	json.Unmarshal(calls["websurfer-schema"].Structured, &ws)
	if compactJSON(ws.Data) != `{"opens":10}` {
		t.Errorf("websurfer's structured data: %s", calls["websurfer-schema"].Structured)
	}
	var page ObservedPage
	json.Unmarshal(calls["observe"].Structured, &page)
	if len(page.Elements) == 0 || !strings.HasPrefix(page.URL, site.URL) {
		t.Errorf("observe's structured content: %s", calls["observe"].Structured)
	}
	if c := calls["screenshot"]; len(c.Images) != 1 || c.Images[0].Bytes == 0 {
		t.Errorf("screenshot's image: %+v", c.Images)
	}
	var rec BoardRecord
	json.Unmarshal(calls["board_result"].Structured, &rec)
	if rec.ID != "T1" || rec.State != "done" || compactJSON(rec.Data) != `{"n":1}` {
		t.Errorf("board_result's structured content: %s", calls["board_result"].Structured)
	}
	fake.Check(t)
}

// compactJSON is raw without insignificant space.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}
