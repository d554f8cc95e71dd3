package llm_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/llm"
)

// TestMaxResponseBytes: a model response over the cap is an error naming
// the limit, whether the server declares its length or streams it.
func TestMaxResponseBytes(t *testing.T) {
	args := strings.Repeat("x", 10_000)
	body := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"1","type":"function","function":{"name":"click","arguments":"` + args + `"}}]},"finish_reason":"tool_calls"}]}`
	for _, chunked := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if chunked {
				w.Write([]byte(body[:100]))
				w.(http.Flusher).Flush() // no Content-Length
				w.Write([]byte(body[100:]))
				return
			}
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write([]byte(body))
		}))
		c := newClient(t, llm.Config{BaseURL: srv.URL + "/v1", MaxResponseBytes: 4096, MaxRetries: -1})
		_, err := c.CreateChatCompletion(context.Background(), userReq("hi"))
		srv.Close()
		if !errors.Is(err, llm.ErrResponseTooLarge) || !strings.Contains(fmt.Sprint(err), "4096 bytes") {
			t.Errorf("chunked=%v: err = %v, want ErrResponseTooLarge naming 4096 bytes", chunked, err)
		}
		if strings.Contains(fmt.Sprint(err), "xxxxxxxxxx") {
			t.Errorf("chunked=%v: the error quotes the response: %.300v", chunked, err)
		}
		// Under the cap, the same response is read.
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}))
		c = newClient(t, llm.Config{BaseURL: srv.URL + "/v1", MaxRetries: -1})
		resp, err := c.CreateChatCompletion(context.Background(), userReq("hi"))
		srv.Close()
		if err != nil || len(resp.Choices) != 1 || len(resp.Choices[0].Message.ToolCalls[0].Function.Arguments) != len(args) {
			t.Errorf("a response under the cap: %v", err)
		}
	}
}
