package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// TestLimitBody: a request body declared over MaxRequestBytes never
// reaches the MCP handler; a JSON-RPC request gets a JSON-RPC error for
// its id naming the limit, anything else a 413.
func TestLimitBody(t *testing.T) {
	reached := false
	h := limitBody(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	srv := httptest.NewServer(h)
	defer srv.Close()
	huge := strings.Repeat("x", MaxRequestBytes)
	for _, tc := range []struct {
		body   string
		status int
		id     string
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"input_text","arguments":{"text_value":"` + huge + `"}}}`, 200, "7"},
		{`{"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{"arguments":{"x":"` + huge + `"}}}`, 200, `"a\"b"`},
		{`{"method":"tools/call","params":{"id":1,"x":"` + huge + `"}}`, http.StatusRequestEntityTooLarge, ""},
	} {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !bytes.Contains(b, []byte(strconv.Itoa(MaxRequestBytes))) || bytes.Contains(b, []byte("xxxxxxxxxx")) {
			t.Errorf("status %d, body %.300s; want %d naming the limit, not quoting the body", resp.StatusCode, b, tc.status)
			continue
		}
		if tc.id != "" {
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error struct{ Message string }
			}
			if err := json.Unmarshal(b, &m); err != nil || string(m.ID) != tc.id || m.Error.Message == "" {
				t.Errorf("not a JSON-RPC error for id %s: %s (%v)", tc.id, b, err)
			}
		}
	}
	if reached {
		t.Error("an oversized request reached the handler")
	}
}
