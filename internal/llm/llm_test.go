package llm_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

func newClient(t *testing.T, cfg llm.Config) *llm.Client {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	c, err := llm.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func userReq(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: text}}}
}

func screenshot(t testing.TB, w, h int) llm.Image {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return llm.Image{MIME: "image/png", Data: buf.Bytes()}
}

func TestNewValidates(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := []llm.Config{
		{},                                       // no model
		{Model: "m", BaseURL: "ftp://x/v1"},      // scheme
		{Model: "m", BaseURL: "http:///v1"},      // no host
		{Model: "m", BaseURL: "http://u:p@h/v1"}, // credentials in URL
		{Model: "m", BaseURL: "://"},
		{Model: "m", ImageDetail: "medium"},
		{Model: "m", APIType: "anthropic"},
		{Model: "m", APIType: "azure"}, // no endpoint
		{Model: "m", Headers: map[string]string{"Bad Header": "x"}},
		{Model: "m", Headers: map[string]string{"X-Ok": "bad\nvalue"}},
		{Model: "m", Timeout: -time.Second},
		{Model: "m", Record: "a.json", Replay: "b.json"},
		{Model: "m", Replay: "testdata/does-not-exist.json"},
		{Model: "m", Record: filepath.Join(file, "x", "cassette.json")}, // a directory that cannot be made
	}
	for _, cfg := range bad {
		if _, err := llm.New(context.Background(), cfg); err == nil {
			t.Errorf("New(%+v): no error", cfg)
		}
	}
	c, err := llm.New(context.Background(), llm.Config{Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model() != "gpt-4o" || c.ImageDetail() != openai.ImageURLDetailAuto {
		t.Errorf("defaults: model %q detail %q", c.Model(), c.ImageDetail())
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"OPENAI_BASE_URL": " http://127.0.0.1:11434/v1 ",
		"OPENAI_API_KEY":  "sk-test",
		"SURF_MODEL":      "qwen2.5-vl",
		"HOME":            "/ignored",
	}
	cfg := llm.ConfigFromEnv(func(k string) string { return env[k] })
	if cfg.BaseURL != "http://127.0.0.1:11434/v1" || cfg.APIKey != "sk-test" || cfg.Model != "qwen2.5-vl" || cfg.APIType != "" {
		t.Errorf("ConfigFromEnv = %+v", cfg)
	}
	if empty := llm.ConfigFromEnv(func(string) string { return "" }); empty.Model != "" || empty.BaseURL != "" {
		t.Errorf("empty env gave %+v", empty)
	}
}

func TestClientAgainstFake(t *testing.T) {
	yes := true
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{
			Expect: fakeopenai.Expect{
				Model: "test-model", Image: &yes, UserContains: fakeopenai.Strings{"look"},
				Header: map[string]string{"X-Team": "surf", "Authorization": "Bearer sk-fake"},
			},
			Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "click", Arguments: `{"target_id":1}`}}, Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 10}},
		},
		fakeopenai.Turn{
			Expect: fakeopenai.Expect{Model: "other-model", ToolContains: fakeopenai.Strings{"clicked"}},
			Reply:  fakeopenai.Reply{Content: "done", Usage: &fakeopenai.Usage{PromptTokens: 200, CompletionTokens: 5}},
		},
	))
	c := newClient(t, llm.Config{BaseURL: s.URL(), APIKey: "sk-fake", Headers: map[string]string{"X-Team": "surf"}, ImageDetail: "low"})
	ctx := context.Background()

	msgs := []openai.ChatCompletionMessage{llm.SystemMessage("sys"), c.UserMessage("look at this", screenshot(t, 64, 64))}
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	call := resp.Choices[0].Message.ToolCalls[0]
	msgs = append(msgs, resp.Choices[0].Message, llm.ToolResult(call.ID, "clicked element 1"))
	resp, err = c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "other-model", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "done" {
		t.Errorf("content %q", resp.Choices[0].Message.Content)
	}
	u := c.Usage()
	if u.Requests != 2 || u.PromptTokens != 300 || u.CompletionTokens != 15 || u.TotalTokens != 315 {
		t.Errorf("usage %+v", u)
	}
	// The image went out with the configured detail.
	img := s.Requests()[0].Chat.Messages[1].MultiContent[1].ImageURL
	if img.Detail != openai.ImageURLDetailLow || !strings.HasPrefix(img.URL, "data:image/png;base64,") {
		t.Errorf("image part %+v", img)
	}
}

func TestAzure(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Turn{
		Expect: fakeopenai.Expect{Header: map[string]string{"api-key": "az-key", "Authorization": ""}},
		Reply:  fakeopenai.Reply{Content: "hello from azure"},
	}))
	base := strings.TrimSuffix(s.URL(), "/v1")
	c := newClient(t, llm.Config{BaseURL: base, APIKey: "az-key", APIType: "azure", Model: "my-gpt4o.deploy"})
	resp, err := c.CreateChatCompletion(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "hello from azure" {
		t.Errorf("content %q", resp.Choices[0].Message.Content)
	}
	r := s.Requests()[0]
	if r.Path != "/openai/deployments/my-gpt4o.deploy/chat/completions" || r.Query != "api-version="+llm.DefaultAzureVersion {
		t.Errorf("azure request to %s?%s", r.Path, r.Query)
	}
}

func TestStreamingRefused(t *testing.T) {
	c := newClient(t, llm.Config{BaseURL: "http://127.0.0.1:1/v1"})
	req := userReq("x")
	req.Stream = true
	if _, err := c.CreateChatCompletion(context.Background(), req); err == nil {
		t.Error("stream request: no error")
	}
}

func TestLoggerReceivesRetries(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Fail(503, nil),
		fakeopenai.Say("ok"),
	))
	var logs bytes.Buffer
	c := newClient(t, llm.Config{BaseURL: s.URL(), Backoff: time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if _, err := c.CreateChatCompletion(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "retrying model request") || !strings.Contains(logs.String(), "status=503") {
		t.Errorf("logs:\n%s", logs.String())
	}
}

func TestErrorsKeepAPIError(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Fail(http.StatusUnauthorized, nil)))
	c := newClient(t, llm.Config{BaseURL: s.URL()})
	_, err := c.CreateChatCompletion(context.Background(), userReq("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Fatalf("err = %v, want *openai.APIError 401", err)
	}
	if !strings.Contains(err.Error(), "test-model") {
		t.Errorf("error does not name the model: %v", err)
	}
}
