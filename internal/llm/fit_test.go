package llm_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/tokens"
)

// conversation builds an agent history: system, task, then for each step an
// observation (user, with a screenshot) and the model's tool call with its
// result.
func conversation(t *testing.T, steps int, obsText string) []openai.ChatCompletionMessage {
	t.Helper()
	shot := screenshot(t, 1280, 720)
	msgs := []openai.ChatCompletionMessage{
		llm.SystemMessage("You are surf."),
		{Role: "user", Content: "Task: find the price of the blue kettle."},
	}
	for i := range steps {
		msgs = append(msgs,
			llm.UserMessage(fmt.Sprintf("Step %d observation: %s", i, obsText), openai.ImageURLDetailHigh, shot),
			openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
				{ID: fmt.Sprintf("call_%d_a", i), Type: "function", Function: openai.FunctionCall{Name: "click", Arguments: `{"target_id": 4}`}},
				{ID: fmt.Sprintf("call_%d_b", i), Type: "function", Function: openai.FunctionCall{Name: "scroll_down", Arguments: `{}`}},
			}},
			llm.ToolResult(fmt.Sprintf("call_%d_a", i), "clicked"),
			llm.ToolResult(fmt.Sprintf("call_%d_b", i), "scrolled"),
		)
	}
	return msgs
}

// checkValid asserts what OpenAI requires of a message list: every tool
// message answers a tool call of the assistant message before its run of
// tool messages.
func checkValid(t *testing.T, msgs []openai.ChatCompletionMessage) {
	t.Helper()
	var open map[string]bool
	for i, m := range msgs {
		switch m.Role {
		case "assistant":
			open = map[string]bool{}
			for _, c := range m.ToolCalls {
				open[c.ID] = true
			}
		case "tool":
			if !open[m.ToolCallID] {
				t.Fatalf("message %d: tool result %q without its tool call", i, m.ToolCallID)
			}
		default:
			open = nil
		}
	}
}

func imagesIn(msgs []openai.ChatCompletionMessage) []int {
	var idx []int
	for i, m := range msgs {
		if llm.HasImage(m) {
			idx = append(idx, i)
		}
	}
	return idx
}

func TestFit(t *testing.T) {
	obs := strings.Repeat("Some page text with links and buttons. ", 40)
	full := conversation(t, 6, obs)
	fullTokens := tokens.CountMessages(full)
	tools := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "click", Parameters: map[string]any{"type": "object"}}}}

	tests := []struct {
		name        string
		msgs        []openai.ChatCompletionMessage
		budget      int
		opts        llm.FitOptions
		wantLen     int   // messages kept; 0 = do not check
		wantImages  []int // indexes (in the result) that keep images
		wantDropped int
		overBudget  bool
	}{
		{
			name: "all fits, images only on the last user turn",
			msgs: full, budget: 1 << 20,
			wantLen: len(full), wantImages: []int{len(full) - 4}, wantDropped: 0,
		},
		{
			name: "keep images on two turns",
			msgs: full, budget: 1 << 20, opts: llm.FitOptions{KeepImages: 2},
			wantLen: len(full), wantImages: []int{len(full) - 8, len(full) - 4},
		},
		{
			name: "no images at all",
			msgs: full, budget: 1 << 20, opts: llm.FitOptions{KeepImages: -1},
			wantLen: len(full), wantImages: nil,
		},
		{
			name: "tight budget keeps head and the latest turns",
			msgs: full, budget: fullTokens / 3,
		},
		{
			name: "budget for the head and the last tool turn only",
			msgs: full,
			budget: tokens.ReplyOverhead + tokens.MessageTokens(full[0]) + tokens.MessageTokens(full[1]) +
				tokens.MessageTokens(full[len(full)-3]) + tokens.MessageTokens(full[len(full)-2]) + tokens.MessageTokens(full[len(full)-1]),
			wantLen: 5, wantImages: nil, wantDropped: len(full) - 5,
		},
		{
			name: "latest turn alone exceeds the budget",
			msgs: full, budget: 50,
			wantLen: 5, overBudget: true,
		},
		{
			name: "tools count against the budget",
			msgs: full[:2], budget: tokens.ReplyOverhead + tokens.MessageTokens(full[0]) + tokens.MessageTokens(full[1]),
			opts: llm.FitOptions{Tools: tools}, wantLen: 2, overBudget: true,
		},
		{
			name: "only system and task",
			msgs: full[:2], budget: 1000, wantLen: 2,
		},
		{
			name: "no system prompt",
			msgs: full[1:], budget: 1 << 20, wantLen: len(full) - 1, wantImages: []int{len(full) - 5},
		},
		{
			name: "empty",
			msgs: nil, budget: 10, wantLen: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.msgs)
			res, err := llm.Fit(tt.msgs, tt.budget, tt.opts)
			if fmt.Sprint(tt.msgs) != before {
				t.Fatal("Fit modified its input")
			}
			var over *llm.OverBudgetError
			if gotOver := errors.As(err, &over); gotOver != tt.overBudget {
				t.Fatalf("err = %v, over budget want %v", err, tt.overBudget)
			}
			if err != nil && !errors.Is(err, llm.ErrOverBudget) {
				t.Fatalf("err %v does not wrap ErrOverBudget", err)
			}
			got := res.Messages
			checkValid(t, got)
			if tt.wantLen > 0 && len(got) != tt.wantLen {
				t.Fatalf("kept %d messages, want %d", len(got), tt.wantLen)
			}
			if len(tt.msgs) >= 2 && (len(got) < 2 || got[0].Content != tt.msgs[0].Content || llm.Text(got[1]) != llm.Text(tt.msgs[1])) {
				t.Fatal("system prompt or task dropped")
			}
			if len(tt.msgs) > 0 && fmt.Sprint(got[len(got)-1]) != fmt.Sprint(tt.msgs[len(tt.msgs)-1]) {
				t.Fatal("latest message dropped")
			}
			if tt.wantLen > 0 || tt.wantImages != nil {
				if idx := imagesIn(got); fmt.Sprint(idx) != fmt.Sprint(tt.wantImages) {
					t.Errorf("images on messages %v, want %v", idx, tt.wantImages)
				}
			}
			if tt.wantDropped > 0 && res.DroppedMessages != tt.wantDropped {
				t.Errorf("dropped %d messages, want %d", res.DroppedMessages, tt.wantDropped)
			}
			if res.DroppedMessages != len(tt.msgs)-len(got) {
				t.Errorf("DroppedMessages %d, but %d of %d kept", res.DroppedMessages, len(got), len(tt.msgs))
			}
			if want := tokens.CountMessages(got) + tokens.ToolTokens(tt.opts.Tools); res.Tokens != want {
				t.Errorf("Tokens = %d, recount gives %d", res.Tokens, want)
			}
			if !tt.overBudget && res.Tokens > tt.budget {
				t.Errorf("%d tokens over budget %d without error", res.Tokens, tt.budget)
			}
			// The window is contiguous and as large as fits: adding the
			// turn before it would exceed the budget.
			if !tt.overBudget && res.DroppedMessages > 0 {
				start := len(tt.msgs) - (len(got) - 2)
				prev := tt.msgs[start-1]
				if res.Tokens+tokens.MessageTokens(prev) <= tt.budget && prev.Role != "tool" && len(prev.ToolCalls) == 0 && !llm.HasImage(prev) {
					t.Errorf("message %d (%s) would have fitted", start-1, prev.Role)
				}
			}
		})
	}
}

func TestFitBadBudget(t *testing.T) {
	for _, b := range []int{0, -5} {
		if res, err := llm.Fit(conversation(t, 1, "x"), b, llm.FitOptions{}); err == nil || res.Messages != nil {
			t.Errorf("Fit(budget %d) = %v, %v; want an error and nothing", b, res.Messages, err)
		}
	}
}

func TestFitImagePlaceholder(t *testing.T) {
	msgs := conversation(t, 3, "text")
	res, err := llm.Fit(msgs, 1<<20, llm.FitOptions{ImagePlaceholder: "[earlier screenshot omitted]"})
	if err != nil {
		t.Fatal(err)
	}
	if res.DroppedImages != 2 {
		t.Errorf("DroppedImages = %d, want 2", res.DroppedImages)
	}
	if got := llm.Text(res.Messages[2]); !strings.HasSuffix(got, "[earlier screenshot omitted]") {
		t.Errorf("old observation text %q", got)
	}
	if !llm.HasImage(msgs[2]) {
		t.Error("Fit removed the image from the caller's message")
	}
}

func TestFitNeverSplitsToolPairs(t *testing.T) {
	msgs := conversation(t, 8, strings.Repeat("word ", 50))
	total := tokens.CountMessages(msgs)
	for budget := total / 20; budget <= total; budget += total / 50 {
		res, _ := llm.Fit(msgs, budget, llm.FitOptions{KeepImages: -1})
		checkValid(t, res.Messages)
		if len(res.Messages) > 2 && res.Messages[2].Role == "tool" {
			t.Fatalf("budget %d: window starts with a tool message", budget)
		}
	}
}

func TestMessages(t *testing.T) {
	shot := screenshot(t, 8, 8)
	m := llm.UserMessage("look", "", shot, llm.Image{Data: shot.Data})
	if len(m.MultiContent) != 3 || m.Content != "" {
		t.Fatalf("message %+v", m)
	}
	for _, p := range m.MultiContent[1:] {
		if p.ImageURL.Detail != openai.ImageURLDetailAuto || !strings.HasPrefix(p.ImageURL.URL, "data:image/png;base64,") {
			t.Errorf("image part %+v", p.ImageURL)
		}
		data, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(p.ImageURL.URL, "data:image/png;base64,"))
		if err != nil || string(data) != string(shot.Data) {
			t.Errorf("data URL does not round-trip: %v", err)
		}
	}
	if jpeg := (llm.Image{MIME: "image/jpeg", Data: []byte{1, 2}}).DataURL(); jpeg != "data:image/jpeg;base64,AQI=" {
		t.Errorf("DataURL = %q", jpeg)
	}
	if plain := llm.UserMessage("just text", "high"); plain.Content != "just text" || plain.MultiContent != nil {
		t.Errorf("text-only message %+v", plain)
	}
	if llm.Text(m) != "look" || !llm.HasImage(m) {
		t.Errorf("Text = %q, HasImage = %v", llm.Text(m), llm.HasImage(m))
	}
	if r := llm.ToolResult("call_1", ""); r.Content == "" || r.Role != "tool" || r.ToolCallID != "call_1" {
		t.Errorf("ToolResult = %+v", r)
	}
}

func TestUsage(t *testing.T) {
	var u llm.Usage
	u.Add(openai.ChatCompletionResponse{Usage: openai.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15,
		PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 4}, CompletionTokensDetails: &openai.CompletionTokensDetails{ReasoningTokens: 2}}})
	u.Add(openai.ChatCompletionResponse{Usage: openai.Usage{PromptTokens: 7, CompletionTokens: 1}}) // no total sent
	u.Add(openai.ChatCompletionResponse{})
	want := llm.Usage{Requests: 3, PromptTokens: 17, CompletionTokens: 6, TotalTokens: 23, CachedTokens: 4, ReasoningTokens: 2}
	if u != want {
		t.Errorf("usage %+v, want %+v", u, want)
	}
	if s := u.Plus(u); s.TotalTokens != 46 || s.Requests != 6 {
		t.Errorf("Plus = %+v", s)
	}
	if u.String() != "3 requests, 23 tokens (17 prompt, 6 completion)" {
		t.Errorf("String = %q", u.String())
	}
}
