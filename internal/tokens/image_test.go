package tokens

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/sashabaranov/go-openai"
)

func TestImageTokens(t *testing.T) {
	tests := []struct {
		w, h   int
		detail openai.ImageURLDetail
		want   int
	}{
		// The worked examples of OpenAI's vision pricing documentation.
		{1024, 1024, openai.ImageURLDetailHigh, 765},
		{2048, 4096, openai.ImageURLDetailHigh, 1105},
		{4096, 8192, openai.ImageURLDetailLow, 85},
		// A surf screenshot: 1280x720 stays as is, 3x2 tiles.
		{1280, 720, openai.ImageURLDetailHigh, 1105},
		{1280, 720, openai.ImageURLDetailAuto, 1105},
		{1280, 720, "", 1105},
		{1280, 720, openai.ImageURLDetailLow, 85},
		// Small images are not scaled up: one tile.
		{100, 100, openai.ImageURLDetailHigh, 255},
		{512, 512, openai.ImageURLDetailHigh, 255},
		{513, 512, openai.ImageURLDetailHigh, 425},
		// Tall and thin: fit 2048 first, shortest side already below 768.
		{500, 5000, openai.ImageURLDetailHigh, 85 + 170*4},
		// Unknown size: the most a high-detail image can cost.
		{0, 720, openai.ImageURLDetailHigh, ImageMaxTokens},
		{-1, -1, openai.ImageURLDetailLow, 85},
	}
	for _, tt := range tests {
		if got := ImageTokens(tt.w, tt.h, tt.detail); got != tt.want {
			t.Errorf("ImageTokens(%d, %d, %q) = %d, want %d", tt.w, tt.h, tt.detail, got, tt.want)
		}
	}
}

func dataURL(t *testing.T, mime string, w, h int) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	if mime == "image/png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func TestImageURLTokens(t *testing.T) {
	png := dataURL(t, "image/png", 1280, 720)
	jpg := dataURL(t, "image/jpeg", 1024, 1024)
	if w, h, ok := DataURLImageSize(png); !ok || w != 1280 || h != 720 {
		t.Errorf("DataURLImageSize(png) = %d, %d, %v", w, h, ok)
	}
	tests := []struct {
		url    string
		detail openai.ImageURLDetail
		want   int
	}{
		{png, openai.ImageURLDetailHigh, 1105},
		{jpg, openai.ImageURLDetailAuto, 765},
		{jpg, openai.ImageURLDetailLow, 85},
		{"https://example.test/cat.png", openai.ImageURLDetailHigh, ImageMaxTokens},
		{"data:image/png;base64,not base64!", openai.ImageURLDetailHigh, ImageMaxTokens},
		{"data:text/plain,hello", openai.ImageURLDetailHigh, ImageMaxTokens},
		{"data:image/png;base64", openai.ImageURLDetailHigh, ImageMaxTokens},
	}
	for _, tt := range tests {
		if got := ImageURLTokens(tt.url, tt.detail); got != tt.want {
			t.Errorf("ImageURLTokens(%.40q, %q) = %d, want %d", tt.url, tt.detail, got, tt.want)
		}
	}
}

func TestMessageTokens(t *testing.T) {
	text := openai.ChatCompletionMessage{Role: "user", Content: "hello world"}
	if got, want := MessageTokens(text), MessageOverhead+Count("user")+2; got != want {
		t.Errorf("MessageTokens(text) = %d, want %d", got, want)
	}
	img := openai.ChatCompletionMessage{Role: "user", MultiContent: []openai.ChatMessagePart{
		{Type: openai.ChatMessagePartTypeText, Text: "hello world"},
		{Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: dataURL(t, "image/png", 1280, 720), Detail: openai.ImageURLDetailHigh}},
	}}
	if got, want := MessageTokens(img), MessageTokens(text)+1105; got != want {
		t.Errorf("MessageTokens(text+image) = %d, want %d", got, want)
	}
	call := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
		ID: "call_1", Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: "click", Arguments: `{"id":12}`},
	}}}
	if MessageTokens(call) <= MessageOverhead+ToolOverhead {
		t.Errorf("tool call counted as %d tokens", MessageTokens(call))
	}
	msgs := []openai.ChatCompletionMessage{text, img, call}
	if got, want := CountMessages(msgs), ReplyOverhead+MessageTokens(text)+MessageTokens(img)+MessageTokens(call); got != want {
		t.Errorf("CountMessages = %d, want %d", got, want)
	}
	tools := []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "click", Description: "Click an element.", Parameters: map[string]any{"type": "object"}}}}
	req := openai.ChatCompletionRequest{Messages: msgs, Tools: tools}
	if got, want := CountRequest(req), CountMessages(msgs)+ToolTokens(tools); got != want || ToolTokens(tools) <= ToolOverhead {
		t.Errorf("CountRequest = %d, want %d (tools %d)", got, want, ToolTokens(tools))
	}
}
