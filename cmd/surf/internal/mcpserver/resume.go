package mcpserver

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Resumable calls. A websurfer run or a board_wait lasts minutes; a
// client whose connection drops meanwhile must not lose the result. So
// the HTTP handler keeps every session's stream events in an event store
// (mcp.StreamableHTTPOptions.EventStore): each event of a call's stream
// has an id, the stream opens with a priming event (an id and no data)
// and tells the client how long to wait before it reconnects (the SSE
// retry field), and a client that reconnects with Last-Event-ID gets the
// events it missed, the result too.

// eventStoreBytes bounds the events kept for resumption, over all
// sessions: the oldest go first. A result with a screenshot is a few
// hundred kilobytes.
const eventStoreBytes = 64 << 20

// RetryDelay is the reconnection delay a call's event stream asks of its
// client (the SSE retry field).
const RetryDelay = time.Second

// primingVersion is the first protocol version with priming events
// (SEP-1699), which the SDK sends only to requests that declare it.
const primingVersion = "2025-11-25"

// resumable wraps the streamable handler: event streams carry the retry
// field, and a request of a session that negotiated a version with
// priming events gets them whatever older version its header claims.
func (s *Server) resumable(next http.Handler) http.Handler {
	retry := []byte("retry: " + strconv.FormatInt(RetryDelay.Milliseconds(), 10) + "\n")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v < primingVersion {
				if nv := s.negotiated(id); nv >= primingVersion && nv > v {
					r.Header.Set("Mcp-Protocol-Version", nv)
				}
			}
		}
		next.ServeHTTP(&retryWriter{ResponseWriter: w, retry: retry}, r)
	})
}

// negotiated is the protocol version of the MCP session with this HTTP
// session id: the client's, if the server speaks it, else the newest the
// server speaks. "" for an unknown session.
func (s *Server) negotiated(id string) string {
	ss := s.mcpSession(id)
	if ss == nil || ss.InitializeParams() == nil {
		return ""
	}
	versions := legacyVersions()
	if v := ss.InitializeParams().ProtocolVersion; slices.Contains(versions, v) {
		return v
	}
	return slices.Max(versions)
}

// retryWriter puts the retry field in the first event of an event stream.
// (The SDK writes each event with one Write.)
type retryWriter struct {
	http.ResponseWriter
	retry []byte
	done  bool
}

func (w *retryWriter) Write(b []byte) (int, error) {
	if w.done || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.done = true
		return w.ResponseWriter.Write(b)
	}
	w.done = true
	n, err := w.ResponseWriter.Write(append(bytes.Clone(w.retry), b...))
	return max(0, n-len(w.retry)), err
}

func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *retryWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// newEventStore is the event store of a server's HTTP handler.
func newEventStore() mcp.EventStore {
	es := mcp.NewMemoryEventStore(nil)
	es.SetMaxBytes(eventStoreBytes)
	return es
}
