package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surfkit/surf/board"
)

// TestBoardAddOutputSchema: board_add takes a task's output_schema (an
// object, listed in its schema) and references to the results of the
// tasks it runs after; a bad schema or a reference to a task it does not
// run after refuses the batch; board_result returns the structured
// result.
func TestBoardAddOutputSchema(t *testing.T) {
	bf := newBoardFixture(t)
	s := newServer(t, serveFixture(t), func(c *Config) { c.Board = bf.b })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	ctx := context.Background()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		if (tl.Name == BoardAddTool || tl.Name == WebsurferTool) && !strings.Contains(string(b), `"output_schema":{"description":"A JSON Schema the answer's structured result must match`) {
			t.Errorf("%s's schema lacks output_schema: %s", tl.Name, b)
		}
	}

	for args, want := range map[string]string{
		`{"tasks":[{"id":"S1","instruction":"s","output_schema":{"type":"nope"}}]}`:                        `unknown type "nope"`,
		`{"tasks":[{"id":"S1","instruction":"s","output_schema":"string"}]}`:                               "must be a JSON Schema object",
		`{"tasks":[{"id":"S1","instruction":"s"},{"id":"S2","instruction":"use {{X.answer}}"}]}`:           "does not run after",
		`{"tasks":[{"id":"S1","instruction":"s"},{"id":"S2","instruction":"{{S1.nope}}","after":["S1"]}]}`: "not a reference",
	} {
		res := call(t, cs, BoardAddTool, jsonArgs(args))
		if !res.IsError || !strings.Contains(text(res), want) {
			t.Errorf("board_add %s: %s; want an error with %q", args, text(res), want)
		}
		if _, err := bf.b.Get(ctx, "S1"); !errors.Is(err, board.ErrNotFound) {
			t.Fatalf("a refused batch left S1 on the board: %v", err)
		}
	}

	mustCall(t, cs, BoardAddTool, jsonArgs(`{"tasks":[
		{"id":"S1","instruction":"count","output_schema":{"type":"object","properties":{"n":{"type":"number"}}},"labels":{"batch":"s"}},
		{"id":"S2","instruction":"use {{S1.result.n}}","after":["S1"]}]}`))
	rec, err := bf.b.Get(ctx, "S1")
	var sch struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
	}
	if err != nil || json.Unmarshal(rec.Task.OutputSchema, &sch) != nil || sch.Properties["n"].Type != "number" || rec.Task.Labels["batch"] != "s" {
		t.Fatalf("S1 on the board: %+v %v", rec.Task, err)
	}
	mustCall(t, cs, BoardWaitTool, jsonArgs(`{"ids":["S1","S2"]}`))
	r := decodeResult[BoardRecord](t, mustCall(t, cs, BoardResultTool, map[string]any{"id": "S1"}))
	var data struct{ N int }
	if json.Unmarshal(r.Data, &data) != nil || data.N != 1 {
		t.Errorf("board_result of S1: data %s", r.Data)
	}
}

// TestWebsurferOutputSchema: the websurfer tool's output_schema makes the
// run's answer carry validated data, returned beside the answer; a bad
// schema is refused before anything runs.
func TestWebsurferOutputSchema(t *testing.T) {
	s, site, fake := agentServer(t, "structured.yaml")
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	res := call(t, cs, WebsurferTool, map[string]any{"instruction": "When does it open?", "start_url": site.URL + "/", "output_schema": map[string]any{"type": "nope"}})
	if !res.IsError || !strings.Contains(text(res), `unknown type "nope"`) || len(fake.Requests()) != 0 {
		t.Fatalf("a bad output_schema: IsError=%v %s", res.IsError, text(res))
	}
	res = mustCall(t, cs, WebsurferTool, map[string]any{
		"instruction":   "When does it open?",
		"start_url":     site.URL + "/",
		"output_schema": map[string]any{"type": "object", "properties": map[string]any{"opens": map[string]any{"type": "integer"}}, "required": []string{"opens"}},
	})
	got := text(res)
	if !strings.Contains(got, "answer: 10 to 14\ndata: {\"opens\":10}\nended: answered after 2 steps") {
		t.Errorf("the result:\n%s", got)
	}
	fake.Check(t)
}
