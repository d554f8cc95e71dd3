package llm_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// The client talks to any OpenAI-compatible server; here, a scripted fake.
func Example() {
	srv := fakeopenai.New(fakeopenai.NewScript(
		fakeopenai.CallTool("click", `{"target_id": 12}`),
	))
	defer srv.Close()

	ctx := context.Background()
	c, err := llm.New(ctx, llm.Config{BaseURL: srv.URL(), Model: "gpt-4o", ImageDetail: "low"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Messages: []openai.ChatCompletionMessage{
			llm.SystemMessage("You are surf, a browsing agent."),
			c.UserMessage("Task: open the pricing page.\n<page>[12] link \"Pricing\"</page>"),
		},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "click", Parameters: map[string]any{"type": "object"},
		}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	call := resp.Choices[0].Message.ToolCalls[0]
	fmt.Println(call.Function.Name, call.Function.Arguments)
	fmt.Println(c.Usage().Requests, "request")
	// Output:
	// click {"target_id": 12}
	// 1 request
}

func ExampleConfigFromEnv() {
	env := map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "SURF_MODEL": "qwen2.5vl"}
	cfg := llm.ConfigFromEnv(func(k string) string { return env[k] })
	fmt.Println(cfg.BaseURL, cfg.Model)
	// Output: http://127.0.0.1:11434/v1 qwen2.5vl
}

func ExampleFit() {
	msgs := []openai.ChatCompletionMessage{
		llm.SystemMessage("You are surf."),
		{Role: "user", Content: "Task: find the opening hours."},
	}
	for i := range 20 {
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: "user", Content: fmt.Sprintf("Observation %d: %s", i, strings.Repeat("text ", 100))},
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: fmt.Sprint("call_", i), Type: "function", Function: openai.FunctionCall{Name: "scroll_down", Arguments: "{}"}}}},
			llm.ToolResult(fmt.Sprint("call_", i), "scrolled"),
		)
	}
	res, err := llm.Fit(msgs, 1000, llm.FitOptions{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(msgs), "messages;", len(res.Messages), "kept;", res.DroppedMessages, "dropped; within budget:", res.Tokens <= 1000)
	first, _, _ := strings.Cut(res.Messages[2].Content, ":")
	fmt.Println("window starts at", first)
	// Output:
	// 62 messages; 23 kept; 39 dropped; within budget: true
	// window starts at Observation 13
}
