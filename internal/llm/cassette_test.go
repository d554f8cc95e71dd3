package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

const fakeKey = "sk-test-SECRET-0123456789abcdef"

// agentRun plays a three-step agent conversation through c and returns the
// responses. page is the page text of the second observation.
func agentRun(t *testing.T, c llm.Completer, page string) ([]openai.ChatCompletionResponse, error) {
	t.Helper()
	shot := screenshot(t, 320, 200)
	msgs := []openai.ChatCompletionMessage{
		llm.SystemMessage("You are surf. The password is hunter2-secret."),
		llm.UserMessage("Task: buy a kettle", openai.ImageURLDetailLow, shot),
	}
	tools := []openai.Tool{
		{Type: "function", Function: &openai.FunctionDefinition{Name: "click", Parameters: map[string]any{"type": "object"}}},
		{Type: "function", Function: &openai.FunctionDefinition{Name: "visit_url", Parameters: map[string]any{"type": "object"}}},
	}
	var out []openai.ChatCompletionResponse
	for step := range 3 {
		resp, err := c.CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{Messages: msgs, Tools: tools})
		if err != nil {
			return out, err
		}
		out = append(out, resp)
		m := resp.Choices[0].Message
		msgs = append(msgs, m)
		for _, call := range m.ToolCalls {
			msgs = append(msgs, llm.ToolResult(call.ID, "ok "+call.Function.Name))
		}
		if step == 0 {
			msgs = append(msgs, llm.UserMessage(page, openai.ImageURLDetailLow, shot))
		}
	}
	return out, nil
}

func agentScript() *fakeopenai.Script {
	return fakeopenai.NewScript(
		fakeopenai.Turn{Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
			{Name: "visit_url", Arguments: `{"url":"https://shop.test/?key=` + fakeKey + `"}`},
		}}},
		fakeopenai.CallTool("click", `{"target_id": 7}`),
		fakeopenai.Say("The kettle costs 30 EUR."),
	)
}

func record(t *testing.T, path string) []openai.ChatCompletionResponse {
	t.Helper()
	s := fakeopenai.Start(t, agentScript())
	c := newClient(t, llm.Config{BaseURL: s.URL(), APIKey: fakeKey, Record: path, Secrets: []string{"hunter2-secret"}})
	resps, err := agentRun(t, c, "<page>Kettles: blue, red</page>")
	if err != nil {
		t.Fatal(err)
	}
	return resps
}

func replayClient(t *testing.T, path string) *llm.Client {
	t.Helper()
	// No server: replay must not touch the network. A base URL that
	// cannot be reached proves it.
	return newClient(t, llm.Config{BaseURL: "http://127.0.0.1:1/v1", APIKey: "another-key", Replay: path, Secrets: []string{"hunter2-secret"}})
}

func TestRecordThenReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	recorded := record(t, path)

	c := replayClient(t, path)
	replayed, err := agentRun(t, c, "<page>Kettles: blue, red</page>")
	if err != nil {
		t.Fatal(err)
	}
	// Identical, except that the API key the fake model echoed is redacted
	// in the cassette and so in the replay.
	a, _ := json.Marshal(recorded)
	b, _ := json.Marshal(replayed)
	a = bytes.ReplaceAll(a, []byte(fakeKey), []byte(llm.Redacted))
	if !bytes.Equal(a, b) {
		t.Errorf("replay differs from the recording:\nrecorded %s\nreplayed %s", a, b)
	}
	if c.Unreplayed() != 0 {
		t.Errorf("%d interactions not replayed", c.Unreplayed())
	}
	if u := c.Usage(); u.Requests != 3 || u.TotalTokens == 0 {
		t.Errorf("replayed usage %+v", u)
	}

	// One more request than recorded.
	_, err = c.CreateChatCompletion(context.Background(), userReq("extra"))
	if !errors.Is(err, llm.ErrCassetteExhausted) {
		t.Errorf("extra request: err = %v, want ErrCassetteExhausted", err)
	}
}

func TestCassetteHasNoSecrets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	record(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{fakeKey, "hunter2-secret", "Bearer"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("cassette contains %q", secret)
		}
	}
	if !bytes.Contains(b, []byte(llm.Redacted)) {
		t.Error("cassette shows no redaction, yet secrets were in the traffic")
	}
	// Images are described, not stored.
	if bytes.Contains(b, []byte("base64,")) {
		t.Error("cassette holds image data")
	}
	c, err := llm.LoadCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Interactions) != 3 {
		t.Fatalf("%d interactions recorded", len(c.Interactions))
	}
	img := c.Interactions[0].Request.Fingerprint.Messages[1].Content[1].Image
	if img == nil || img.MIME != "image/png" || img.Width != 320 || img.Height != 200 || len(img.SHA256) != 64 {
		t.Errorf("image fingerprint %+v", img)
	}
}

func TestReplayChangedResponse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	record(t, path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One byte of the last recorded answer.
	edited := bytes.Replace(b, []byte("costs 30 EUR"), []byte("costs 31 EUR"), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("recorded answer not found in the cassette")
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	resps, err := agentRun(t, replayClient(t, path), "<page>Kettles: blue, red</page>")
	if err != nil {
		t.Fatal(err)
	}
	if got := resps[2].Choices[0].Message.Content; got != "The kettle costs 31 EUR." {
		t.Errorf("replayed %q, want the edited answer", got)
	}
}

func TestReplayChangedRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	record(t, path)
	_, err := agentRun(t, replayClient(t, path), "<page>Kettles: blue, green</page>")
	var mm *llm.MismatchError
	if !errors.As(err, &mm) || !errors.Is(err, llm.ErrReplayMismatch) {
		t.Fatalf("err = %v, want a *MismatchError", err)
	}
	// Messages: system, task, assistant, tool, observation.
	if mm.Request != 2 || mm.Field != "messages[4].content[0].text" {
		t.Errorf("mismatch at request %d field %s, want request 2 messages[4].content[0].text", mm.Request, mm.Field)
	}
	msg := err.Error()
	for _, want := range []string{"replay request 2: messages[4].content[0].text differs", `recorded "<page>Kettles: blue, red</page>"`, `got "<page>Kettles: blue, green</page>"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q: %s", want, msg)
		}
	}
}

func TestReplayFieldNames(t *testing.T) {
	base := openai.ChatCompletionRequest{
		Model: "m",
		Tools: []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "click"}}},
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "sys"},
			{Role: "user", Content: "task"},
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "abc", Type: "function", Function: openai.FunctionCall{Name: "click", Arguments: `{"id":1}`}}}},
			{Role: "tool", ToolCallID: "abc", Content: "clicked"},
		},
	}
	clone := func(f func(r *openai.ChatCompletionRequest)) openai.ChatCompletionRequest {
		b, _ := json.Marshal(base)
		var r openai.ChatCompletionRequest
		json.Unmarshal(b, &r)
		f(&r)
		return r
	}
	for _, tt := range []struct {
		field string
		req   openai.ChatCompletionRequest
	}{
		{"", clone(func(r *openai.ChatCompletionRequest) {
			// Different tool-call ids, consistently used: the same request.
			r.Messages[2].ToolCalls[0].ID = "xyz"
			r.Messages[3].ToolCallID = "xyz"
		})},
		{"", clone(func(r *openai.ChatCompletionRequest) { r.Temperature = 0.7 })},
		{"model", clone(func(r *openai.ChatCompletionRequest) { r.Model = "n" })},
		{"tools", clone(func(r *openai.ChatCompletionRequest) { r.Tools = nil })},
		{"messages[0].role", clone(func(r *openai.ChatCompletionRequest) { r.Messages[0].Role = "developer" })},
		{"messages[2].tool_calls[0].arguments", clone(func(r *openai.ChatCompletionRequest) { r.Messages[2].ToolCalls[0].Function.Arguments = `{"id":2}` })},
		{"messages[3].tool_call_id", clone(func(r *openai.ChatCompletionRequest) { r.Messages[3].ToolCallID = "other" })},
		{"messages[3].content[0].text", clone(func(r *openai.ChatCompletionRequest) { r.Messages[3].Content = "denied" })},
		{"messages", clone(func(r *openai.ChatCompletionRequest) {
			r.Messages = append(r.Messages, openai.ChatCompletionMessage{Role: "user", Content: "more"})
		})},
		{"messages[1].content", clone(func(r *openai.ChatCompletionRequest) {
			r.Messages[1] = llm.UserMessage("task", "low", screenshot(t, 4, 4))
		})},
	} {
		t.Run(tt.field, func(t *testing.T) {
			rec, err := json.Marshal(base)
			if err != nil {
				t.Fatal(err)
			}
			resp := json.RawMessage(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
			cas := &llm.Cassette{Version: llm.CassetteVersion, Interactions: []llm.Interaction{{
				Request:  llm.RecordedRequest{Method: "POST", Path: "/v1/chat/completions", Fingerprint: llm.FingerprintRequest(rec)},
				Response: &llm.RecordedResponse{Status: 200, Body: resp},
			}}}
			path := filepath.Join(t.TempDir(), "c.json")
			if err := cas.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			c := replayClient(t, path)
			_, err = c.CreateChatCompletion(context.Background(), tt.req)
			var mm *llm.MismatchError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("equivalent request rejected: %v", err)
			case tt.field != "" && !errors.As(err, &mm):
				t.Errorf("err = %v, want a mismatch at %s", err, tt.field)
			case tt.field != "" && mm.Field != tt.field:
				t.Errorf("mismatch at %s (%s), want %s", mm.Field, err, tt.field)
			}
		})
	}
}

func TestReplayImages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Say("seen")))
	rec := newClient(t, llm.Config{BaseURL: s.URL(), Record: path})
	req := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{llm.UserMessage("look", "high", screenshot(t, 64, 48))}}
	if _, err := rec.CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	// Same size, other pixels: fine by default, a mismatch when strict.
	img := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{llm.UserMessage("look", "high", llm.Image{MIME: "image/png", Data: repaint(t, 64, 48)})}}
	if _, err := replayClient(t, path).CreateChatCompletion(context.Background(), img); err != nil {
		t.Errorf("lenient replay: %v", err)
	}
	strict := newClient(t, llm.Config{Replay: path, ReplayStrictImages: true})
	_, err := strict.CreateChatCompletion(context.Background(), img)
	var mm *llm.MismatchError
	if !errors.As(err, &mm) || mm.Field != "messages[0].content[1].image.sha256" {
		t.Errorf("strict replay: err = %v", err)
	}
	// Another size is a mismatch either way.
	bigger := openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{llm.UserMessage("look", "high", screenshot(t, 64, 49))}}
	_, err = replayClient(t, path).CreateChatCompletion(context.Background(), bigger)
	if !errors.As(err, &mm) || mm.Field != "messages[0].content[1].image.size" {
		t.Errorf("resized image: err = %v", err)
	}
}

func TestReplayConcurrentOutOfOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	const n = 6
	s := fakeopenai.Start(t, &fakeopenai.Script{Turns: []fakeopenai.Turn{{
		Repeat: true, Min: n, Max: n, Match: &fakeopenai.Match{SystemContains: "chunk"},
		Reply: fakeopenai.Reply{Content: "summary"},
	}}})
	chunkReq := func(i int) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{
			llm.SystemMessage("summarize chunk"), {Role: "user", Content: fmt.Sprintf("chunk %d", i)},
		}}
	}
	rec := newClient(t, llm.Config{BaseURL: s.URL(), Record: path})
	for i := range n {
		if _, err := rec.CreateChatCompletion(context.Background(), chunkReq(i)); err != nil {
			t.Fatal(err)
		}
	}
	c := replayClient(t, path)
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- { // reverse order, concurrently
		wg.Go(func() {
			if _, err := c.CreateChatCompletion(context.Background(), chunkReq(i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if c.Unreplayed() != 0 {
		t.Errorf("%d not replayed", c.Unreplayed())
	}
}

func TestRecordedTransportError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	c := newClient(t, llm.Config{BaseURL: "http://127.0.0.1:1/v1", Record: path, MaxRetries: -1})
	if _, err := c.CreateChatCompletion(context.Background(), userReq("x")); err == nil {
		t.Fatal("request to a closed port succeeded")
	}
	_, err := replayClient(t, path).CreateChatCompletion(context.Background(), userReq("x"))
	if err == nil || !strings.Contains(err.Error(), "recorded transport error") {
		t.Errorf("replayed err = %v", err)
	}
}

func TestLoadCassetteErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"notjson.json":  "{",
		"version.json":  `{"version": 9, "interactions": []}`,
		"noanswer.json": `{"version": 1, "interactions": [{"request": {"method": "POST", "path": "/", "fingerprint": {"model": "m"}}}]}`,
	} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		if _, err := llm.LoadCassette(p); err == nil {
			t.Errorf("LoadCassette(%s): no error", name)
		}
	}
}

// repaint returns a w x h PNG that differs from screenshot's in pixels.
func repaint(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(img, img.Bounds(), image.NewUniform(color.RGBA{200, 30, 30, 255}), image.Point{}, draw.Src)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Data fences carry a random nonce per observation: a replay whose fences
// differ from the recording's still matches, while a change inside the
// fenced text does not.
func TestReplayIgnoresFenceNonces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	s := fakeopenai.Start(t, agentScript())
	c := newClient(t, llm.Config{BaseURL: s.URL(), Record: path, Secrets: []string{"hunter2-secret"}})
	if _, err := agentRun(t, c, "visible text <<<0a1b2c3d\nKettles: blue, red\n0a1b2c3d>>>"); err != nil {
		t.Fatal(err)
	}
	if _, err := agentRun(t, replayClient(t, path), "visible text <<<ffee0011\nKettles: blue, red\nffee0011>>>"); err != nil {
		t.Fatalf("a fresh fence nonce broke the replay: %v", err)
	}
	_, err := agentRun(t, replayClient(t, path), "visible text <<<ffee0011\nKettles: blue, rod\nffee0011>>>")
	var mm *llm.MismatchError
	if !errors.As(err, &mm) || !strings.Contains(mm.Got, "rod") {
		t.Fatalf("err = %v, want a mismatch showing the changed text", err)
	}
}
