package mcpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/surfkit/surf/tools"
)

// MaxRequestBytes caps one message from an MCP client, an HTTP request
// body or a stdio line: the most a tool call's arguments may be
// (tools.DefaultMaxArgBytes) plus room for the JSON-RPC envelope. Nothing
// larger is buffered: over HTTP it is refused with 413 and a message
// naming the limit; on stdio the MCP SDK ends the connection.
const MaxRequestBytes = tools.DefaultMaxArgBytes + 64<<10

// limitBody refuses, unread, a request whose declared body is larger than
// MaxRequestBytes, saying so; a body without a declared length is cut off
// at the limit by the SDK (StreamableHTTPOptions.MaxRequestBodyBytes).
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxRequestBytes {
			msg := tooLargeRequest(r.ContentLength)
			w.Header().Set("Connection", "close") // the rest is not read
			// Answer the JSON-RPC request, so that the client's call
			// fails with the message rather than a bare 413.
			head, _ := io.ReadAll(io.LimitReader(r.Body, 4<<10))
			if m := requestID.FindSubmatch(head); m != nil {
				b, _ := json.Marshal(map[string]any{
					"jsonrpc": "2.0", "id": json.RawMessage(m[1]),
					"error": map[string]any{"code": -32600, "message": msg},
				})
				w.Header().Set("Content-Type", "application/json")
				w.Write(b)
				return
			}
			http.Error(w, msg, http.StatusRequestEntityTooLarge)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requestID finds the id of a JSON-RPC request in the start of its body.
var requestID = regexp.MustCompile(`^\s*\{(?:[^{}]*?,)?\s*"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\]|\\.){0,256}")\s*[,}]`)

func tooLargeRequest(n int64) string {
	return fmt.Sprintf("request body of %d bytes refused: surf accepts MCP requests of at most %d bytes (a tool call's arguments at most %d bytes, and each text field at most its maxLength)", n, MaxRequestBytes, tools.DefaultMaxArgBytes)
}

// frameTooLarge reports whether err is the SDK's end of a stdio
// connection whose client sent a line over the limit.
func frameTooLarge(err error) bool {
	return err != nil && strings.Contains(err.Error(), "exceeded the configured maximum line length")
}
