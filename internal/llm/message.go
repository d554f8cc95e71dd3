package llm

import (
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/sashabaranov/go-openai"
)

// Image is an image to send inline, as a data URL.
type Image struct {
	// MIME is the media type, "image/png" or "image/jpeg" (also
	// "image/gif", "image/webp"). Empty means sniffed from Data.
	MIME string
	Data []byte
}

// DataURL returns "data:MIME;base64,...".
func (img Image) DataURL() string {
	mime := img.MIME
	if mime == "" {
		mime = http.DetectContentType(img.Data)
		if !strings.HasPrefix(mime, "image/") {
			mime = "image/png"
		}
	}
	var b strings.Builder
	b.Grow(len("data:;base64,") + len(mime) + base64.StdEncoding.EncodedLen(len(img.Data)))
	b.WriteString("data:")
	b.WriteString(mime)
	b.WriteString(";base64,")
	enc := base64.NewEncoder(base64.StdEncoding, &b)
	enc.Write(img.Data) // a strings.Builder does not fail
	enc.Close()
	return b.String()
}

// UserMessage builds a user message holding text followed by images sent as
// data URLs with the given detail ("" means auto). Without images it is a
// plain text message.
func UserMessage(text string, detail openai.ImageURLDetail, images ...Image) openai.ChatCompletionMessage {
	if len(images) == 0 {
		return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text}
	}
	if detail == "" {
		detail = openai.ImageURLDetailAuto
	}
	parts := make([]openai.ChatMessagePart, 0, 1+len(images))
	if text != "" {
		parts = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: text})
	}
	for _, img := range images {
		parts = append(parts, openai.ChatMessagePart{
			Type:     openai.ChatMessagePartTypeImageURL,
			ImageURL: &openai.ChatMessageImageURL{URL: img.DataURL(), Detail: detail},
		})
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, MultiContent: parts}
}

// SystemMessage builds a system message.
func SystemMessage(text string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: text}
}

// ToolResult builds the tool message answering the tool call with the given
// id. OpenAI rejects an empty tool result, so an empty content is sent as
// "(empty)".
func ToolResult(callID, content string) openai.ChatCompletionMessage {
	if content == "" {
		content = "(empty)"
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: callID, Content: content}
}

// Text returns the text of a message: its Content, or its text parts joined
// by newlines.
func Text(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText || (p.Type == "" && p.ImageURL == nil) {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// HasImage reports whether m carries an image part.
func HasImage(m openai.ChatCompletionMessage) bool {
	for _, p := range m.MultiContent {
		if p.ImageURL != nil {
			return true
		}
	}
	return false
}
