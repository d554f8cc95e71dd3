package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/surfkit/surf/tools"
)

// TestResultData: a handler's Data reaches the caller through Call, on a
// tool error too, and becomes an MCP result's structuredContent; a
// result without Data has none.
func TestResultData(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reg.Add(
		tools.New("data", "returns data", func(context.Context, tools.NoArgs) (*tools.Result, error) {
			res := tools.Text(`{"x":1}`)
			res.Data = point{1}
			return res, nil
		}),
		tools.New("partial", "returns data and a tool error", func(context.Context, tools.NoArgs) (*tools.Result, error) {
			res := tools.Text("so far")
			res.Data = point{2}
			return res, tools.Errorf("timed out")
		}),
		tools.New("plain", "returns text", func(context.Context, tools.NoArgs) (*tools.Result, error) {
			return tools.Text("hi"), nil
		}),
	)
	for name, want := range map[string]string{"data": `{"x":1}`, "partial": `{"x":2}`, "plain": "null"} {
		res, err := reg.Call(context.Background(), name, json.RawMessage(`{}`), reg.Names()...)
		if err != nil {
			t.Fatal(err)
		}
		out := tools.MCPResult(res)
		b, _ := json.Marshal(out.StructuredContent)
		if string(b) != want || out.IsError != (name == "partial") {
			t.Errorf("%s: structured content %s, isError %v; want %s", name, b, out.IsError, want)
		}
	}
}
