package llm_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// gap returns the time between the arrivals of requests i and j (0-based)
// as the fake server recorded them.
func gap(t *testing.T, s *fakeopenai.Server, i, j int) time.Duration {
	t.Helper()
	reqs := s.Requests()
	if len(reqs) <= j {
		t.Fatalf("%d requests, want more than %d", len(reqs), j)
	}
	return reqs[j].Time.Sub(reqs[i].Time)
}

func TestRetryAfterSecondsHonoured(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Fail(429, map[string]string{"Retry-After": "1"}),
		fakeopenai.Say("ok"),
	))
	// A tiny backoff, so only Retry-After can explain a long wait.
	c := newClient(t, llm.Config{BaseURL: s.URL(), Backoff: time.Millisecond})
	resp, err := c.CreateChatCompletion(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "ok" {
		t.Errorf("content %q", resp.Choices[0].Message.Content)
	}
	if d := gap(t, s, 0, 1); d < time.Second {
		t.Errorf("retried %v after a 429 with Retry-After: 1", d)
	}
}

func TestRetryAfterMillisecondsHonoured(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Fail(429, map[string]string{"retry-after-ms": "300", "Retry-After": "0"}),
		fakeopenai.Fail(503, map[string]string{"Retry-After": "0.2"}),
		fakeopenai.Say("ok"),
	))
	c := newClient(t, llm.Config{BaseURL: s.URL(), Backoff: time.Millisecond})
	if _, err := c.CreateChatCompletion(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if d := gap(t, s, 0, 1); d < 300*time.Millisecond {
		t.Errorf("retried %v after retry-after-ms: 300", d)
	}
	if d := gap(t, s, 1, 2); d < 200*time.Millisecond {
		t.Errorf("retried %v after Retry-After: 0.2", d)
	}
}

func TestRetry5xxThenSuccess(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Fail(500, nil),
		fakeopenai.Fail(502, nil),
		fakeopenai.Say("ok"),
	))
	c := newClient(t, llm.Config{BaseURL: s.URL(), Backoff: 20 * time.Millisecond})
	resp, err := c.CreateChatCompletion(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "ok" {
		t.Errorf("content %q", resp.Choices[0].Message.Content)
	}
	// Backoff 20ms, then 40ms, each minus at most 25% jitter.
	if d := gap(t, s, 0, 1); d < 15*time.Millisecond {
		t.Errorf("first retry after %v, want >= 15ms", d)
	}
	if d := gap(t, s, 1, 2); d < 30*time.Millisecond {
		t.Errorf("second retry after %v, want >= 30ms", d)
	}
	// Every attempt carried the whole body.
	for _, r := range s.Requests() {
		if len(r.Chat.Messages) != 1 || r.Chat.Messages[0].Content != "x" {
			t.Errorf("attempt %d body %q", r.N, r.Body)
		}
	}
}

func TestNoRetry(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply fakeopenai.Reply
		cfg   llm.Config
	}{
		{"400", fakeopenai.Reply{Status: 400}, llm.Config{}},
		{"404", fakeopenai.Reply{Status: 404}, llm.Config{}},
		{"501", fakeopenai.Reply{Status: 501}, llm.Config{}},
		{"x-should-retry false", fakeopenai.Reply{Status: 503, Headers: map[string]string{"x-should-retry": "false"}}, llm.Config{}},
		{"retries disabled", fakeopenai.Reply{Status: 500}, llm.Config{MaxRetries: -1}},
		{"wait above cap", fakeopenai.Reply{Status: 429, Headers: map[string]string{"Retry-After": "120"}}, llm.Config{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Turn{Reply: tt.reply}))
			cfg := tt.cfg
			cfg.BaseURL = s.URL()
			cfg.Backoff = time.Millisecond
			c := newClient(t, cfg)
			_, err := c.CreateChatCompletion(context.Background(), userReq("x"))
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != tt.reply.Status {
				t.Errorf("err = %v, want status %d", err, tt.reply.Status)
			}
			if n := len(s.Requests()); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

func TestRetriesExhausted(t *testing.T) {
	s := fakeopenai.Start(t, &fakeopenai.Script{Turns: []fakeopenai.Turn{
		{Repeat: true, Min: 3, Max: 3, Reply: fakeopenai.Reply{Status: 503}},
	}})
	c := newClient(t, llm.Config{BaseURL: s.URL(), MaxRetries: 2, Backoff: time.Millisecond})
	_, err := c.CreateChatCompletion(context.Background(), userReq("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 503 {
		t.Errorf("err = %v, want the last 503", err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 1 + 2 retries", n)
	}
}

func TestRetryAfterConnectionClosed(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Reply: fakeopenai.Reply{Disconnect: true}},
		fakeopenai.Say("ok"),
	))
	c := newClient(t, llm.Config{BaseURL: s.URL(), Backoff: time.Millisecond})
	resp, err := c.CreateChatCompletion(context.Background(), userReq("x"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Choices[0].Message.Content != "ok" || len(s.Requests()) != 2 {
		t.Errorf("content %q after %d requests", resp.Choices[0].Message.Content, len(s.Requests()))
	}
}

func TestCancelDuringRetryWait(t *testing.T) {
	s := fakeopenai.Start(t, &fakeopenai.Script{AllowUnused: true, Turns: []fakeopenai.Turn{
		fakeopenai.Fail(429, map[string]string{"Retry-After": "3000"}),
		fakeopenai.Say("never"),
	}})
	waiting := make(chan struct{}, 1)
	log := slog.New(slog.NewTextHandler(signalWriter{"retrying model request", waiting}, nil))
	c := newClient(t, llm.Config{BaseURL: s.URL(), MaxRetryWait: 2 * time.Hour, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.CreateChatCompletion(ctx, userReq("x"))
		done <- err
	}()
	<-waiting // the 429 arrived and the transport is about to wait
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		// A watchdog, not a timing assertion: the wait asked for is 50 min.
		t.Fatal("call still waiting a minute after cancel")
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		h    map[string]string
		want time.Duration
		ok   bool
	}{
		{map[string]string{"Retry-After": "2"}, 2 * time.Second, true},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond, true},
		{map[string]string{"Retry-After": "Sun, 01 Mar 2026 12:00:07 GMT"}, 7 * time.Second, true},
		{map[string]string{"Retry-After": "Sun, 01 Mar 2026 11:00:00 GMT"}, 0, true},
		{map[string]string{"retry-after-ms": "1500", "Retry-After": "9"}, 1500 * time.Millisecond, true},
		{map[string]string{"retry-after-ms": "junk", "Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": "-1"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{}, 0, false},
	} {
		h := http.Header{}
		for k, v := range tt.h {
			h.Set(k, v)
		}
		got, ok := llm.RetryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%v) = %v, %v; want %v, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

func TestTransportAddsHeaders(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Turn{
		Expect: fakeopenai.Expect{Header: map[string]string{"HTTP-Referer": "https://surf.test", "Authorization": "Bearer gateway"}},
		Reply:  fakeopenai.Reply{Content: "ok"},
	}))
	c := newClient(t, llm.Config{BaseURL: s.URL(), APIKey: "sk-real", Headers: map[string]string{
		"HTTP-Referer": "https://surf.test", "Authorization": "Bearer gateway",
	}})
	if _, err := c.CreateChatCompletion(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
}

func TestUserHTTPClientWrapped(t *testing.T) {
	s := fakeopenai.Start(t, fakeopenai.NewScript(fakeopenai.Fail(500, nil), fakeopenai.Say("ok")))
	var seen int
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen++
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, llm.Config{BaseURL: s.URL(), HTTPClient: hc, Backoff: time.Millisecond})
	if _, err := c.CreateChatCompletion(context.Background(), userReq("x")); err != nil {
		t.Fatal(err)
	}
	if seen != 2 {
		t.Errorf("the caller's transport saw %d attempts, want 2", seen)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("fake server not on loopback: %s", s.URL())
	}
}

// signalWriter signals on c when a log line contains s.
type signalWriter struct {
	s string
	c chan struct{}
}

func (w signalWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.s) {
		select {
		case w.c <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
