package tokens

import (
	"encoding/json"

	"github.com/sashabaranov/go-openai"
)

// Framing costs of the chat format, from OpenAI's published token-counting
// recipe for GPT-4o-class models: every message costs MessageOverhead on top
// of its role and content, a name costs one more, and the reply is primed
// with ReplyOverhead. Tool definitions and tool calls are counted as the
// tokens of their JSON plus ToolOverhead each; OpenAI renders them in an
// undocumented format, so that part is an estimate that errs high.
const (
	MessageOverhead = 3
	NameOverhead    = 1
	ReplyOverhead   = 3
	ToolOverhead    = 8
)

// MessageTokens estimates the prompt tokens of one chat message: role, text
// content, images (see ImageURLTokens), tool calls and framing.
func MessageTokens(m openai.ChatCompletionMessage) int {
	n := MessageOverhead + Count(m.Role) + Count(m.Content) + Count(m.Refusal)
	if m.Name != "" {
		n += NameOverhead + Count(m.Name)
	}
	for _, p := range m.MultiContent {
		switch {
		case p.ImageURL != nil:
			n += ImageURLTokens(p.ImageURL.URL, p.ImageURL.Detail)
		default:
			n += Count(p.Text)
		}
	}
	for _, tc := range m.ToolCalls {
		n += ToolOverhead + Count(tc.ID) + Count(tc.Function.Name) + Count(tc.Function.Arguments)
	}
	if m.FunctionCall != nil {
		n += ToolOverhead + Count(m.FunctionCall.Name) + Count(m.FunctionCall.Arguments)
	}
	if m.ToolCallID != "" {
		n += Count(m.ToolCallID)
	}
	return n
}

// CountMessages estimates the prompt tokens of msgs, including the reply
// priming (so an empty list costs ReplyOverhead).
func CountMessages(msgs []openai.ChatCompletionMessage) int {
	n := ReplyOverhead
	for _, m := range msgs {
		n += MessageTokens(m)
	}
	return n
}

// ToolTokens estimates the prompt tokens of tool definitions.
func ToolTokens(tools []openai.Tool) int {
	n := 0
	for _, t := range tools {
		b, err := json.Marshal(t)
		if err != nil {
			// A tool that cannot be encoded cannot be sent either; count
			// what is certain.
			n += ToolOverhead
			continue
		}
		n += ToolOverhead + Count(string(b))
	}
	return n
}

// CountRequest estimates the prompt tokens of a whole request: its messages
// and its tool definitions.
func CountRequest(req openai.ChatCompletionRequest) int {
	return CountMessages(req.Messages) + ToolTokens(req.Tools)
}
