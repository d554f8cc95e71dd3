package fakeopenai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

func Example() {
	script, err := fakeopenai.Parse([]byte(`
turns:
  - expect:
      user_contains: "<page>"
      tools_include: click
    reply:
      tool_calls:
        - name: click
          arguments: '{"target_id": 3}'
`))
	if err != nil {
		log.Fatal(err)
	}
	srv := fakeopenai.New(script)
	defer srv.Close()

	cfg := openai.DefaultConfig("fake-key")
	cfg.BaseURL = srv.URL()
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "<page>[3] button \"Buy\"</page>"}},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "click", Parameters: map[string]any{"type": "object"},
		}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Choices[0].Message.ToolCalls[0].Function.Name)
	fmt.Println(len(srv.Requests()), "request;", "failures:", srv.Err())
	// Output:
	// click
	// 1 request; failures: <nil>
}
