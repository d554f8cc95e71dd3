package websurfer_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// scriptedModel is an OpenAI-compatible endpoint on loopback that answers
// each request with the next tool call, reached through surf's real model
// client.
func scriptedModel(calls ...string) (*llm.Client, func()) {
	var turns []fakeopenai.Turn
	for _, c := range calls {
		var tc fakeopenai.ToolCall
		if err := json.Unmarshal([]byte(c), &tc); err != nil {
			panic(err)
		}
		turns = append(turns, fakeopenai.CallTool(tc.Name, tc.Arguments))
	}
	srv := fakeopenai.New(fakeopenai.NewScript(turns...))
	c, err := llm.New(context.Background(), llm.Config{BaseURL: srv.URL(), Model: "example-model"})
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return c, srv.Close
}
