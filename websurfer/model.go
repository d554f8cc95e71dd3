package websurfer

import (
	"context"

	"github.com/sashabaranov/go-openai"
)

// Model is the language model surf asks for the next action, and uses for
// summarize_page and answer_question: any OpenAI-compatible chat
// completion endpoint. *openai.Client and surf's own llm client (with
// retries, record and replay) satisfy it.
type Model interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}
