package fakeopenai_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

func client(s *fakeopenai.Server) *openai.Client {
	cfg := openai.DefaultConfig("test-key")
	cfg.BaseURL = s.URL()
	return openai.NewClientWithConfig(cfg)
}

// recTB collects what Check reports instead of failing the test.
type recTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recTB) Helper() {}
func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func pngDataURL(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 64, 32))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func tools(names ...string) []openai.Tool {
	var out []openai.Tool
	for _, n := range names {
		out = append(out, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: n, Parameters: map[string]any{"type": "object"},
		}})
	}
	return out
}

func TestAgentScript(t *testing.T) {
	s := fakeopenai.StartFile(t, "testdata/agent.yaml")
	c := client(s)
	ctx := context.Background()

	msgs := []openai.ChatCompletionMessage{
		{Role: "system", Content: "You are surf, a browsing agent."},
		{Role: "user", MultiContent: []openai.ChatMessagePart{
			{Type: "text", Text: "Task: find the price.\n<page>Welcome to the shop</page>"},
			{Type: "image_url", ImageURL: &openai.ChatMessageImageURL{URL: pngDataURL(t), Detail: "low"}},
		}},
	}
	req := openai.ChatCompletionRequest{Model: "test-model", Messages: msgs, Tools: tools("visit_url", "click")}
	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "click" || calls[0].Function.Arguments != `{"target_id": 12, "reasoning": "open pricing"}` {
		t.Fatalf("tool calls = %+v", calls)
	}
	if resp.Choices[0].FinishReason != openai.FinishReasonToolCalls {
		t.Errorf("finish reason %q", resp.Choices[0].FinishReason)
	}
	if resp.Usage.PromptTokens <= 85 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage %+v: want estimated prompt tokens including the image", resp.Usage)
	}

	req.Messages = append(req.Messages, resp.Choices[0].Message,
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: calls[0].ID, Content: "denied: host not in allowlist"},
		openai.ChatCompletionMessage{Role: "user", Content: "<page>Welcome</page>"})
	_, err = c.CreateChatCompletion(ctx, req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
		t.Fatalf("second request: err = %v, want scripted 429", err)
	}
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0].Message.Content; got != "The price is 12 EUR." {
		t.Errorf("content %q", got)
	}
	if resp.Usage.PromptTokens != 1200 || resp.Usage.CompletionTokens != 9 || resp.Usage.TotalTokens != 1209 {
		t.Errorf("usage %+v, want scripted 1200+9", resp.Usage)
	}

	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	for i, r := range reqs {
		if r.N != i+1 || r.Turn != i+1 || r.Path != "/v1/chat/completions" || r.Chat.Model != "test-model" {
			t.Errorf("request %d recorded as %+v", i+1, r)
		}
		if r.Header.Get("Authorization") != "Bearer test-key" {
			t.Errorf("request %d: Authorization %q", i+1, r.Header.Get("Authorization"))
		}
	}
	if !reqs[1].Time.After(reqs[0].Time) && !reqs[1].Time.Equal(reqs[0].Time) {
		t.Error("request times out of order")
	}
}

func TestReplies(t *testing.T) {
	script := &fakeopenai.Script{Turns: []fakeopenai.Turn{
		{Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
			{Name: "click", Arguments: `{"target_id": 3}`},
			{ID: "mine", Name: "type_text", Arguments: `{"text": "unterminated`},
		}}},
		{}, // no call, no content
		{Reply: fakeopenai.Reply{Body: `{"not": "a completion"`, Status: 200}},
		{Reply: fakeopenai.Reply{Status: 500, Headers: map[string]string{"X-Why": "scripted"}}},
		{Reply: fakeopenai.Reply{Content: "late", Delay: 50 * time.Millisecond}},
	}}
	s := fakeopenai.Start(t, script)
	c := client(s)
	ctx := context.Background()
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}}}

	resp, err := c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Choices[0].Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "call_1_1" || calls[1].ID != "mine" || calls[1].Function.Arguments != `{"text": "unterminated` {
		t.Errorf("calls = %+v", calls)
	}

	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if m := resp.Choices[0].Message; m.Content != "" || len(m.ToolCalls) != 0 || resp.Choices[0].FinishReason != "stop" {
		t.Errorf("empty reply = %+v", resp.Choices[0])
	}

	if _, err = c.CreateChatCompletion(ctx, req); err == nil {
		t.Error("malformed body: no error")
	}

	_, err = c.CreateChatCompletion(ctx, req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "scripted status 500") {
		t.Errorf("err = %v, want scripted 500", err)
	}

	start := time.Now()
	resp, err = c.CreateChatCompletion(ctx, req)
	if err != nil || resp.Choices[0].Message.Content != "late" {
		t.Fatalf("delayed reply: %v %+v", err, resp)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Errorf("delayed reply came after %v", d)
	}
}

func TestDisconnect(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Turn{Reply: fakeopenai.Reply{Disconnect: true}}))
	_, err := client(s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}},
	})
	if err == nil || !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want a connection closed without response", err)
	}
}

func TestExpectationFailures(t *testing.T) {
	script, err := fakeopenai.Parse([]byte(`
turns:
  - name: strict
    expect:
      model: gpt-4o
      image: true
      user_contains: needle
      user_excludes: secret
      tool_contains: denied
      system_contains: You are surf
      tools_include: [click]
      tools_exclude: [scroll_up]
      max_tokens: 5
      messages: 1
      header: {X-Team: surf}
    reply: {content: never sent}
`))
	if err != nil {
		t.Fatal(err)
	}
	s := fakeopenai.New(script)
	defer s.Close()
	_, err = client(s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
		Model: "gpt-3", Tools: tools("scroll_up"),
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "You are a pirate."},
			{Role: "user", Content: "a haystack with a secret, a long one to exceed five tokens"},
		},
	})
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 {
		t.Fatalf("err = %v, want a 400", err)
	}
	for _, want := range []string{
		`request 1: turn 1 "strict"`,
		`model is "gpt-3", want "gpt-4o"`,
		"last user message has no data-URL image",
		`last user message does not contain "needle"`,
		`last user message contains "secret"`,
		`no tool message (want one containing "denied")`,
		`system messages do not contain "You are surf"`,
		`tool "click" is not offered`,
		`tool "scroll_up" is offered`,
		"want at most 5",
		"request has 2 messages, want 1",
		`header X-Team is "", want "surf"`,
	} {
		if !strings.Contains(apiErr.Message, want) {
			t.Errorf("error message lacks %q:\n%s", want, apiErr.Message)
		}
	}
	tb := &recTB{TB: t}
	s.Check(tb)
	if len(tb.errs) != 1 || !strings.Contains(tb.errs[0], `turn 1 "strict"`) || !strings.Contains(tb.errs[0], "needle") {
		t.Errorf("Check reported %q", tb.errs)
	}
	if s.Err() == nil {
		t.Error("Err() = nil after a failed expectation")
	}
}

func TestExhaustedAndUnused(t *testing.T) {
	s := fakeopenai.New(fakeopenai.NewScript(fakeopenai.Say("one")))
	defer s.Close()
	c := client(s)
	req := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}}}
	if _, err := c.CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := c.CreateChatCompletion(context.Background(), req)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || !strings.Contains(apiErr.Message, "script exhausted") {
		t.Fatalf("err = %v, want 500 script exhausted", err)
	}
	if e := s.Err(); e == nil || !strings.Contains(e.Error(), "request 2: script exhausted") {
		t.Errorf("Err() = %v", e)
	}

	s2 := fakeopenai.New(fakeopenai.NewScript(fakeopenai.Say("one"), fakeopenai.Say("two")))
	defer s2.Close()
	if _, err := client(s2).CreateChatCompletion(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if e := s2.Err(); e == nil || !strings.Contains(e.Error(), "turn 2 was never requested") {
		t.Errorf("Err() = %v, want turn 2 unused", e)
	}
	s2.Close()
}

func TestNotChatCompletions(t *testing.T) {
	s := fakeopenai.New(fakeopenai.NewScript(fakeopenai.Say("one")))
	defer s.Close()
	resp, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /v1/models: %d", resp.StatusCode)
	}
	resp, err = http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader("{not json"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Errorf("bad JSON: %d", resp.StatusCode)
	}
	if n := len(s.Failures()); n != 2 {
		t.Errorf("%d failures recorded, want 2: %q", n, s.Failures())
	}
}

// TestMapReduce sends chunk requests concurrently, then the reduce request,
// as the summarizer does; the repeat turn takes the chunks in any order.
func TestMapReduce(t *testing.T) {
	s := fakeopenai.StartFile(t, "testdata/mapreduce.yaml")
	c := client(s)
	ctx := context.Background()
	const chunks = 5
	var wg sync.WaitGroup
	results := make([]string, chunks)
	for i := range chunks {
		wg.Go(func() {
			resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
				{Role: "system", Content: "You summarize chunk text."},
				{Role: "user", Content: fmt.Sprintf("chunk %d: some page text", i)},
			}})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = resp.Choices[0].Message.Content
		})
	}
	wg.Wait()
	resp, err := c.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{
		{Role: "system", Content: "You combine summaries."},
		{Role: "user", Content: strings.Join(results, "\n")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "the whole summary" {
		t.Errorf("reduce reply %q", resp.Choices[0].Message.Content)
	}
	reqs := s.Requests()
	if len(reqs) != chunks+1 {
		t.Fatalf("%d requests", len(reqs))
	}
	for _, r := range reqs[:chunks] {
		if r.Turn != 1 || r.Tokens > 300 {
			t.Errorf("chunk request %d: turn %d, %d tokens", r.N, r.Turn, r.Tokens)
		}
	}
}

func TestRepeatBounds(t *testing.T) {
	script := &fakeopenai.Script{Turns: []fakeopenai.Turn{
		{Name: "chunks", Match: &fakeopenai.Match{SystemContains: "chunk"}, Repeat: true, Min: 2, Max: 2, Reply: fakeopenai.Reply{Content: "c"}},
		{Name: "reduce", Match: &fakeopenai.Match{SystemContains: "combine"}, Reply: fakeopenai.Reply{Content: "r"}},
	}}
	chunk := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "chunk"}, {Role: "user", Content: "x"}}}
	reduce := openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "system", Content: "combine"}, {Role: "user", Content: "x"}}}
	ctx := context.Background()

	// Too few chunks: the reduce request does not match the unsatisfied
	// repeat turn.
	s := fakeopenai.New(script)
	c := client(s)
	if _, err := c.CreateChatCompletion(ctx, chunk); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateChatCompletion(ctx, reduce); err == nil {
		t.Error("reduce after one chunk of two: no error")
	}
	if e := s.Err(); e == nil || !strings.Contains(e.Error(), `next is turn 1 "chunks"`) || !strings.Contains(e.Error(), "answered 1 requests, want at least 2") {
		t.Errorf("Err() = %v", e)
	}
	s.Close()

	// Too many chunks: the third exceeds max.
	s = fakeopenai.New(script)
	c = client(s)
	for range 2 {
		if _, err := c.CreateChatCompletion(ctx, chunk); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateChatCompletion(ctx, chunk); err == nil {
		t.Error("third chunk of at most two: no error")
	}
	s.Close()
}

func TestParseErrors(t *testing.T) {
	for _, src := range []string{
		"turns: []",
		"turns:\n  - expct: {model: x}\n",
		"turns:\n  - reply: {tool_calls: [{arguments: '{}'}]}\n",
		"turns:\n  - min: 2\n    reply: {content: x}\n",
		"turns:\n  - repeat: true\n    min: 3\n    max: 2\n",
		"turns:\n  - reply: {status: 999}\n",
		"turns:\n  - reply: {delay: soon}\n",
		"[not a script",
	} {
		if _, err := fakeopenai.Parse([]byte(src)); err == nil {
			t.Errorf("Parse(%q): no error", src)
		}
	}
	s, err := fakeopenai.Parse([]byte("turns:\n  - reply: {delay: 250ms}\n    expect: {user_contains: [a, b], tools_include: click}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Turns[0].Reply.Delay != 250*time.Millisecond || len(s.Turns[0].Expect.UserContains) != 2 || s.Turns[0].Expect.ToolsInclude[0] != "click" {
		t.Errorf("parsed %+v", s.Turns[0])
	}
	if _, err := fakeopenai.Load("testdata/missing.yaml"); err == nil {
		t.Error("Load of a missing file: no error")
	}
}

func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- fakeopenai.Serve(ctx, "127.0.0.1:0", fakeopenai.NewScript(fakeopenai.Say("hi")), pw)
		pw.Close()
	}()
	line := make([]byte, 100)
	n, err := pr.Read(line)
	if err != nil {
		t.Fatal(err)
	}
	base, ok := strings.CutPrefix(strings.TrimSpace(string(line[:n])), "OPENAI_BASE_URL=")
	if !ok || !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("Serve printed %q", line[:n])
	}
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = base
	resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}},
	})
	if err != nil || resp.Choices[0].Message.Content != "hi" {
		t.Fatalf("%v %+v", err, resp)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	io.Copy(io.Discard, pr)
}

func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"fakeopenai": fakeopenai.TestscriptCmd(),
			// chat TEXT sends one user message and prints the reply.
			"chat": func(ts *testscript.TestScript, neg bool, args []string) {
				cfg := openai.DefaultConfig(ts.Getenv("OPENAI_API_KEY"))
				cfg.BaseURL = ts.Getenv("OPENAI_BASE_URL")
				resp, err := openai.NewClientWithConfig(cfg).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
					Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: strings.Join(args, " ")}},
				})
				if (err != nil) != neg {
					ts.Fatalf("chat: %v", err)
				}
				if err == nil {
					fmt.Fprintln(ts.Stdout(), resp.Choices[0].Message.Content)
				}
			},
		},
	})
}

func TestCloseCutsDelays(t *testing.T) {
	s := fakeopenai.New(fakeopenai.NewScript(fakeopenai.Turn{Reply: fakeopenai.Reply{Content: "late", Delay: time.Hour}}))
	done := make(chan error, 1)
	go func() {
		_, err := client(s).CreateChatCompletion(context.Background(), openai.ChatCompletionRequest{
			Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}},
		})
		done <- err
	}()
	for len(s.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Minute): // watchdog: the scripted delay is an hour
		t.Fatal("Close still waiting a minute later")
	}
	<-done
	s.Close() // twice is fine
}
