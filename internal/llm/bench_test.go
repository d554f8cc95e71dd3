package llm_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
)

// BenchmarkFit fits a 30-step agent history (each observation is 10 KB of
// page text plus a 1280x720 screenshot) into 16k tokens, as the agent loop
// does before every request. Only the newest observation is new text.
func BenchmarkFit(b *testing.B) {
	page, err := os.ReadFile("../tokens/testdata/page.txt")
	if err != nil {
		b.Fatal(err)
	}
	shot := screenshot(b, 1280, 720)
	msgs := []openai.ChatCompletionMessage{llm.SystemMessage("You are surf."), {Role: "user", Content: "Task: compare prices."}}
	for i := range 30 {
		msgs = append(msgs,
			llm.UserMessage(fmt.Sprintf("Step %d\n%s", i, page), "high", shot),
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: fmt.Sprint("c", i), Type: "function", Function: openai.FunctionCall{Name: "scroll_down", Arguments: "{}"}}}},
			llm.ToolResult(fmt.Sprint("c", i), "scrolled"),
		)
	}
	llm.Fit(msgs, 16000, llm.FitOptions{}) // warm the token cache
	b.ReportAllocs()
	for b.Loop() {
		res, err := llm.Fit(msgs, 16000, llm.FitOptions{})
		if err != nil || len(res.Messages) < 3 {
			b.Fatal(err, len(res.Messages))
		}
	}
}
