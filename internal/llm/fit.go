package llm

import (
	"errors"
	"fmt"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/tokens"
)

// ErrOverBudget is wrapped by the *OverBudgetError of Fit.
var ErrOverBudget = errors.New("context over budget")

// OverBudgetError reports that even the messages Fit must keep exceed the
// budget.
type OverBudgetError struct {
	Tokens int // estimated tokens of what Fit kept
	Budget int
}

func (e *OverBudgetError) Error() string {
	return fmt.Sprintf("context over budget: system prompt, task and latest turn need %d tokens, budget is %d", e.Tokens, e.Budget)
}

func (e *OverBudgetError) Unwrap() error { return ErrOverBudget }

// FitOptions tunes Fit. The zero value keeps images on the latest user
// message only and counts no tools.
type FitOptions struct {
	// KeepImages is how many of the most recent user messages keep their
	// images; older ones lose them. Zero means 1; negative means none.
	KeepImages int

	// Tools are the tool definitions sent with the request; their tokens
	// count against the budget.
	Tools []openai.Tool

	// ImagePlaceholder, if set, replaces each dropped image with a text part
	// holding it (e.g. "[earlier screenshot omitted]"); empty drops images
	// without a trace.
	ImagePlaceholder string
}

// Fitted is the result of Fit.
type Fitted struct {
	Messages        []openai.ChatCompletionMessage
	Tokens          int // estimated prompt tokens of Messages and the tools
	DroppedMessages int
	DroppedImages   int
}

// Fit returns the messages to send so that the request stays within budget
// tokens (as estimated by the tokens package, tools included):
//
//   - every leading system or developer message and the task (the first user
//     message) are always kept;
//   - images are kept only on the opts.KeepImages most recent user messages;
//   - then the most recent turns are kept, as many as fit, as one contiguous
//     window ending with the latest message, which is always kept.
//
// A turn is a message, except that an assistant message with tool calls and
// the tool messages that follow it form one turn, so a tool result is never
// sent without the call it answers (OpenAI rejects that).
//
// msgs is not modified. If what must be kept exceeds the budget, Fit returns
// it anyway, with an *OverBudgetError; the caller may send it or shrink the
// latest turn. A non-positive budget is an error and returns nothing.
func Fit(msgs []openai.ChatCompletionMessage, budget int, opts FitOptions) (Fitted, error) {
	if budget <= 0 {
		return Fitted{}, fmt.Errorf("fitting context: budget %d is not positive", budget)
	}
	out := make([]openai.ChatCompletionMessage, len(msgs))
	copy(out, msgs)

	var res Fitted
	keep := opts.KeepImages
	if keep == 0 {
		keep = 1
	}
	users := 0
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role != openai.ChatMessageRoleUser {
			continue
		}
		users++
		if users > keep && HasImage(out[i]) {
			var n int
			out[i], n = withoutImages(out[i], opts.ImagePlaceholder)
			res.DroppedImages += n
		}
	}

	head := headLen(out)
	used := tokens.ReplyOverhead + tokens.ToolTokens(opts.Tools)
	for _, m := range out[:head] {
		used += tokens.MessageTokens(m)
	}

	// Walk the turns after the head from the latest back, keeping a
	// contiguous window.
	start := len(out)
	for start > head {
		ts := turnStart(out, head, start)
		n := 0
		for _, m := range out[ts:start] {
			n += tokens.MessageTokens(m)
		}
		if start < len(out) && used+n > budget {
			break // not the latest turn, and it does not fit
		}
		used += n
		start = ts
	}
	res.DroppedMessages = start - head
	res.Messages = append(out[:head:head], out[start:]...)
	res.Tokens = used
	if used > budget {
		return res, &OverBudgetError{Tokens: used, Budget: budget}
	}
	return res, nil
}

// headLen is the number of leading messages Fit always keeps: the system
// and developer messages, then the first user message (the task).
func headLen(msgs []openai.ChatCompletionMessage) int {
	i := 0
	for i < len(msgs) && (msgs[i].Role == openai.ChatMessageRoleSystem || msgs[i].Role == openai.ChatMessageRoleDeveloper) {
		i++
	}
	if i < len(msgs) && msgs[i].Role == openai.ChatMessageRoleUser {
		i++
	}
	return i
}

// turnStart returns where the turn ending just before end starts, not before
// floor: tool messages belong to the assistant message with tool calls
// before them (or to whatever precedes them, so they are never left first).
func turnStart(msgs []openai.ChatCompletionMessage, floor, end int) int {
	i := end - 1
	for i > floor && msgs[i].Role == openai.ChatMessageRoleTool {
		i--
	}
	return i
}

// withoutImages returns m without its image parts (each replaced by a text
// part holding placeholder, if set) and how many it dropped.
func withoutImages(m openai.ChatCompletionMessage, placeholder string) (openai.ChatCompletionMessage, int) {
	parts := make([]openai.ChatMessagePart, 0, len(m.MultiContent))
	dropped := 0
	for _, p := range m.MultiContent {
		if p.ImageURL == nil {
			parts = append(parts, p)
			continue
		}
		dropped++
		if placeholder != "" {
			parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: placeholder})
		}
	}
	if len(parts) == 0 {
		// An empty content array is rejected by the API.
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: "(image omitted)"})
	}
	m.MultiContent = parts
	return m, dropped
}
