package llm

import (
	"fmt"

	"github.com/sashabaranov/go-openai"
)

// Usage totals the tokens reported by chat-completion responses.
type Usage struct {
	Requests         int // responses counted
	PromptTokens     int
	CompletionTokens int
	TotalTokens      int
	CachedTokens     int // prompt tokens served from the provider's cache
	ReasoningTokens  int // completion tokens spent on hidden reasoning
}

// Add adds the usage of resp. A response without usage (some local
// servers send none) still counts as a request.
func (u *Usage) Add(resp openai.ChatCompletionResponse) {
	u.AddUsage(resp.Usage)
}

// AddUsage adds one response's usage numbers.
func (u *Usage) AddUsage(r openai.Usage) {
	u.Requests++
	u.PromptTokens += r.PromptTokens
	u.CompletionTokens += r.CompletionTokens
	total := r.TotalTokens
	if total == 0 {
		total = r.PromptTokens + r.CompletionTokens
	}
	u.TotalTokens += total
	if d := r.PromptTokensDetails; d != nil {
		u.CachedTokens += d.CachedTokens
	}
	if d := r.CompletionTokensDetails; d != nil {
		u.ReasoningTokens += d.ReasoningTokens
	}
}

// Plus returns the sum of u and v.
func (u Usage) Plus(v Usage) Usage {
	return Usage{
		Requests:         u.Requests + v.Requests,
		PromptTokens:     u.PromptTokens + v.PromptTokens,
		CompletionTokens: u.CompletionTokens + v.CompletionTokens,
		TotalTokens:      u.TotalTokens + v.TotalTokens,
		CachedTokens:     u.CachedTokens + v.CachedTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
	}
}

// String formats u for logs and CLI summaries.
func (u Usage) String() string {
	return fmt.Sprintf("%d requests, %d tokens (%d prompt, %d completion)",
		u.Requests, u.TotalTokens, u.PromptTokens, u.CompletionTokens)
}
