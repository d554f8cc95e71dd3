// Package fakeopenai is a scripted OpenAI-compatible chat-completions server
// for tests.
//
// It answers POST .../chat/completions (so /v1/chat/completions,
// /chat/completions and Azure's /openai/deployments/NAME/chat/completions)
// on loopback as a Script says, checks each request against the script's
// expectations, and records every request. Tests reach it only through the
// real go-openai client, so the HTTP boundary is the only thing faked.
//
// In Go tests use Start (which checks the script at cleanup); from the CLI's
// testscript files use TestscriptCmd; as a process, Serve.
package fakeopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/internal/tokens"
)

// Request is a request the server received.
type Request struct {
	N      int       // 1-based arrival number
	Turn   int       // 1-based turn that answered it; 0 if none
	Time   time.Time // arrival
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	// Chat is Body parsed; Tokens its estimated prompt tokens.
	Chat   openai.ChatCompletionRequest
	Tokens int
}

// Server is a running fake. It is safe for concurrent requests.
type Server struct {
	srv       *httptest.Server
	script    *Script
	closing   chan struct{} // closed by Close: cuts scripted delays short
	closeOnce sync.Once

	mu       sync.Mutex
	pos      int   // first turn not yet left behind
	counts   []int // requests answered per turn
	reqs     []Request
	failures []string
}

// New starts a server for script on a loopback port. Close it when done.
// It panics if the script is invalid, as httptest does on listen errors;
// use Listen to get an error instead.
func New(script *Script) *Server {
	s, err := Listen("127.0.0.1:0", script)
	if err != nil {
		panic("fakeopenai: " + err.Error())
	}
	return s
}

// Listen starts a server for script on addr (e.g. "127.0.0.1:0").
func Listen(addr string, script *Script) (*Server, error) {
	if script == nil {
		return nil, errors.New("no script")
	}
	if err := script.Validate(); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{script: script, counts: make([]int, len(script.Turns)), closing: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.handle))
	s.srv.Listener.Close()
	s.srv.Listener = l
	s.srv.Start()
	return s, nil
}

// Start starts a server for script, closes it when the test ends and then
// reports its failures and unused turns with t.Errorf.
func Start(t testing.TB, script *Script) *Server {
	t.Helper()
	s, err := Listen("127.0.0.1:0", script)
	if err != nil {
		t.Fatalf("fakeopenai: %v", err)
	}
	t.Cleanup(func() {
		s.Close()
		s.Check(t)
	})
	return s
}

// StartFile is Start with a script file.
func StartFile(t testing.TB, path string) *Server {
	t.Helper()
	script, err := Load(path)
	if err != nil {
		t.Fatalf("fakeopenai: %v", err)
	}
	return Start(t, script)
}

// URL returns the base URL for clients, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close shuts the server down. Requests waiting out a scripted delay are
// answered at once; Close returns when no request is in flight. It may be
// called more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.closing) })
	s.srv.Close()
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Failures returns the failures recorded so far: failed expectations,
// unmatched requests, bad requests. It does not include unused turns.
func (s *Server) Failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.failures...)
}

// Err returns the failures and, unless the script allows it, the turns that
// were not requested (enough), as one error; nil if all went as scripted.
func (s *Server) Err() error {
	msgs := s.problems()
	if len(msgs) == 0 {
		return nil
	}
	return errors.New("fakeopenai: " + strings.Join(msgs, "\nfakeopenai: "))
}

// Check reports each problem of Err with t.Errorf.
func (s *Server) Check(t testing.TB) {
	t.Helper()
	for _, m := range s.problems() {
		t.Errorf("fakeopenai: %s", m)
	}
}

func (s *Server) problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]string(nil), s.failures...)
	if s.script.AllowUnused {
		return out
	}
	for i := range s.script.Turns {
		t := &s.script.Turns[i]
		switch n := s.counts[i]; {
		case !t.Repeat && n == 0:
			out = append(out, fmt.Sprintf("%s was never requested", t.label(i)))
		case t.Repeat && n < t.min():
			out = append(out, fmt.Sprintf("%s answered %d requests, want at least %d", t.label(i), n, t.min()))
		}
	}
	return out
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	req := Request{Time: now, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body}

	s.mu.Lock()
	req.N = len(s.reqs) + 1
	fail := func(status int, format string, args ...any) {
		msg := fmt.Sprintf("request %d: ", req.N) + fmt.Sprintf(format, args...)
		s.failures = append(s.failures, msg)
		s.reqs = append(s.reqs, req)
		s.mu.Unlock()
		writeError(w, status, msg)
	}
	switch {
	case err != nil:
		fail(http.StatusBadRequest, "reading body: %v", err)
		return
	case r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions"):
		fail(http.StatusNotFound, "unexpected %s %s (only POST .../chat/completions is served)", r.Method, r.URL.Path)
		return
	}
	if err := json.Unmarshal(body, &req.Chat); err != nil {
		fail(http.StatusBadRequest, "body is not a chat-completion request: %v", err)
		return
	}
	req.Tokens = tokens.CountRequest(req.Chat)
	i, why := s.pick(&req.Chat)
	if i < 0 {
		fail(http.StatusInternalServerError, "%s", why)
		return
	}
	req.Turn = i + 1
	turn := &s.script.Turns[i]
	if problems := turn.Expect.check(&req); len(problems) > 0 {
		fail(http.StatusBadRequest, "%s: %s", turn.label(i), strings.Join(problems, "; "))
		return
	}
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()

	s.reply(w, r, &req, turn)
}

// pick chooses the turn for a request and counts it, or returns -1 and why
// none fits. Called with s.mu held.
func (s *Server) pick(req *openai.ChatCompletionRequest) (int, string) {
	why := ""
	for i := s.pos; i < len(s.script.Turns); i++ {
		t := &s.script.Turns[i]
		exhausted := t.Repeat && t.Max > 0 && s.counts[i] >= t.Max
		if !exhausted {
			if ok, miss := t.Match.matches(req); ok {
				s.counts[i]++
				s.pos = i
				if !t.Repeat {
					s.pos = i + 1
				}
				return i, ""
			} else if why == "" {
				why = fmt.Sprintf("no turn matches; next is %s, whose match failed: %s", t.label(i), miss)
			}
		}
		if !t.Repeat || s.counts[i] < t.min() {
			break // this turn must be answered before any later one
		}
	}
	if why == "" {
		why = fmt.Sprintf("script exhausted: all %d turns were used", len(s.script.Turns))
	}
	return -1, why
}

func (m *Match) matches(req *openai.ChatCompletionRequest) (bool, string) {
	if m == nil {
		return true, ""
	}
	if m.Model != "" && req.Model != m.Model {
		return false, fmt.Sprintf("model is %q, not %q", req.Model, m.Model)
	}
	if m.SystemContains != "" && !strings.Contains(roleText(req, openai.ChatMessageRoleSystem), m.SystemContains) {
		return false, fmt.Sprintf("no system message contains %q", m.SystemContains)
	}
	if m.UserContains != "" && !strings.Contains(lastText(req, openai.ChatMessageRoleUser), m.UserContains) {
		return false, fmt.Sprintf("last user message does not contain %q", m.UserContains)
	}
	if m.Tool != "" && !hasTool(req, m.Tool) {
		return false, fmt.Sprintf("tool %q is not offered", m.Tool)
	}
	return true, ""
}

func (e *Expect) check(r *Request) []string {
	req := &r.Chat
	var p []string
	if e.Model != "" && req.Model != e.Model {
		p = append(p, fmt.Sprintf("model is %q, want %q", req.Model, e.Model))
	}
	if e.Image != nil {
		has := false
		if m, ok := last(req, openai.ChatMessageRoleUser); ok {
			for _, part := range m.MultiContent {
				if part.ImageURL != nil && strings.HasPrefix(part.ImageURL.URL, "data:image/") {
					has = true
				}
			}
		}
		if has != *e.Image {
			if *e.Image {
				p = append(p, "last user message has no data-URL image")
			} else {
				p = append(p, "last user message has an image, want none")
			}
		}
	}
	user := lastText(req, openai.ChatMessageRoleUser)
	for _, s := range e.UserContains {
		if !strings.Contains(user, s) {
			p = append(p, fmt.Sprintf("last user message does not contain %q; it is %s", s, excerpt(user)))
		}
	}
	for _, s := range e.UserExcludes {
		if strings.Contains(user, s) {
			p = append(p, fmt.Sprintf("last user message contains %q", s))
		}
	}
	if len(e.ToolContains) > 0 {
		tool, ok := last(req, openai.ChatMessageRoleTool)
		for _, s := range e.ToolContains {
			switch {
			case !ok:
				p = append(p, fmt.Sprintf("no tool message (want one containing %q)", s))
			case !strings.Contains(text(tool), s):
				p = append(p, fmt.Sprintf("last tool message does not contain %q; it is %s", s, excerpt(text(tool))))
			}
		}
	}
	system := roleText(req, openai.ChatMessageRoleSystem)
	for _, s := range e.SystemContains {
		if !strings.Contains(system, s) {
			p = append(p, fmt.Sprintf("system messages do not contain %q", s))
		}
	}
	for _, name := range e.ToolsInclude {
		if !hasTool(req, name) {
			p = append(p, fmt.Sprintf("tool %q is not offered (offered: %s)", name, strings.Join(toolNames(req), ", ")))
		}
	}
	for _, name := range e.ToolsExclude {
		if hasTool(req, name) {
			p = append(p, fmt.Sprintf("tool %q is offered, want it not to be", name))
		}
	}
	if e.MaxTokens > 0 && r.Tokens > e.MaxTokens {
		p = append(p, fmt.Sprintf("request has about %d tokens, want at most %d", r.Tokens, e.MaxTokens))
	}
	if e.Messages > 0 && len(req.Messages) != e.Messages {
		p = append(p, fmt.Sprintf("request has %d messages, want %d", len(req.Messages), e.Messages))
	}
	for k, v := range e.Header {
		if got := r.Header.Get(k); got != v {
			p = append(p, fmt.Sprintf("header %s is %q, want %q", k, got, v))
		}
	}
	return p
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, req *Request, turn *Turn) {
	rep := &turn.Reply
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		case <-s.closing:
			t.Stop()
		}
	}
	if rep.Disconnect {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // closes the connection without a response
	}
	for k, v := range rep.Headers {
		w.Header().Set(k, v)
	}
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	if rep.Body != "" {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		io.WriteString(w, rep.Body)
		return
	}
	if status >= 400 {
		writeError(w, status, fmt.Sprintf("scripted status %d", status))
		return
	}

	// The response is written with local types: go-openai's would add
	// empty Azure content-filter fields to every choice.
	type call struct {
		ID       string              `json:"id"`
		Type     string              `json:"type"`
		Function openai.FunctionCall `json:"function"`
	}
	type message struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	type choice struct {
		Index        int     `json:"index"`
		Message      message `json:"message"`
		FinishReason string  `json:"finish_reason"`
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	type response struct {
		ID      string   `json:"id"`
		Object  string   `json:"object"`
		Created int64    `json:"created"`
		Model   string   `json:"model"`
		Choices []choice `json:"choices"`
		Usage   usage    `json:"usage"`
	}

	msg := message{Role: openai.ChatMessageRoleAssistant, Content: rep.Content}
	// Estimated only when not scripted: counting costs time on huge replies.
	count := func(s string) int {
		if rep.Usage != nil {
			return 0
		}
		return tokens.Count(s)
	}
	completion := count(rep.Content)
	for j, c := range rep.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", req.N, j+1)
		}
		msg.ToolCalls = append(msg.ToolCalls, call{ID: id, Type: "function", Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		completion += tokens.ToolOverhead + count(c.Name) + count(c.Arguments)
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(msg.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	u := usage{PromptTokens: req.Tokens, CompletionTokens: completion}
	if rep.Usage != nil {
		u = usage{PromptTokens: rep.Usage.PromptTokens, CompletionTokens: rep.Usage.CompletionTokens}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	b, err := json.Marshal(response{
		ID:      "chatcmpl-fake-" + strconv.Itoa(req.N),
		Object:  "chat.completion",
		Created: 1700000000,
		Model:   req.Chat.Model,
		Choices: []choice{{Index: 0, Message: msg, FinishReason: finish}},
		Usage:   u,
	})
	if err != nil {
		// Only strings and numbers: this cannot fail.
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": "fakeopenai: " + msg,
		"type":    "fakeopenai_error",
		"code":    nil,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Serve runs a server for script on addr until ctx is done, first writing
// "OPENAI_BASE_URL=<url>" and a newline to w. It returns the server's Err.
// It is meant for a helper process, e.g. a CLI test's background command.
func Serve(ctx context.Context, addr string, script *Script, w io.Writer) error {
	s, err := Listen(addr, script)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "OPENAI_BASE_URL=%s\n", s.URL()); err != nil {
		s.Close()
		return err
	}
	<-ctx.Done()
	s.Close()
	return s.Err()
}

func last(req *openai.ChatCompletionRequest, role string) (openai.ChatCompletionMessage, bool) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == role {
			return req.Messages[i], true
		}
	}
	return openai.ChatCompletionMessage{}, false
}

func lastText(req *openai.ChatCompletionRequest, role string) string {
	m, _ := last(req, role)
	return text(m)
}

func roleText(req *openai.ChatCompletionRequest, role string) string {
	var parts []string
	for _, m := range req.Messages {
		if m.Role == role {
			parts = append(parts, text(m))
		}
	}
	return strings.Join(parts, "\n")
}

func text(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.ImageURL == nil {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(req *openai.ChatCompletionRequest) []string {
	var names []string
	for _, t := range req.Tools {
		if t.Function != nil {
			names = append(names, t.Function.Name)
		}
	}
	return names
}

func hasTool(req *openai.ChatCompletionRequest, name string) bool {
	for _, n := range toolNames(req) {
		if n == name {
			return true
		}
	}
	return false
}

func excerpt(s string) string {
	const max = 200
	if len(s) > max {
		return strconv.Quote(textcut.Prefix(s, max)) + "…"
	}
	return strconv.Quote(s)
}
