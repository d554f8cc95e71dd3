package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cancelled requests get no answer. A client that sends
// notifications/cancelled has given up on the request: the SDK ends the
// handler's context (cancel.go), but then writes whatever the handler
// returns. The MCP specification says a receiver of a cancellation should
// not send a response for the cancelled request, so surf drops it: on
// stdio in the connection (cancelTransport), over HTTP in the event stream
// (dropCancelled), before and after a resumption.

// maxCancelled bounds the cancelled request ids remembered per connection
// or HTTP session; the oldest are forgotten first.
const maxCancelled = 256

// cancelSet holds the ids (their JSON) of requests a client cancelled
// whose response has not been dropped yet.
type cancelSet struct {
	mu    sync.Mutex
	ids   map[string]bool
	order []string
}

func (c *cancelSet) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ids == nil {
		c.ids = map[string]bool{}
	}
	if c.ids[id] {
		return
	}
	if len(c.order) >= maxCancelled {
		delete(c.ids, c.order[0])
		c.order = c.order[1:]
	}
	c.ids[id] = true
	c.order = append(c.order, id)
}

// take reports whether id was cancelled, and forgets it.
func (c *cancelSet) take(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ids[id] {
		return false
	}
	delete(c.ids, id)
	for i, o := range c.order {
		if o == id {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	return true
}

// idKey is the canonical JSON of a request id.
func idKey(raw any) string {
	b, err := json.Marshal(raw)
	if err != nil {
		return ""
	}
	return string(b)
}

// cancelledID returns the request id (its JSON) of a notifications/cancelled
// message's params.
func cancelledID(params json.RawMessage) (string, bool) {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.RequestID) == 0 {
		return "", false
	}
	var v any
	if json.Unmarshal(p.RequestID, &v) != nil {
		return "", false
	}
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		v = int64(f)
	}
	return idKey(v), true
}

// cancelTransport is a transport whose connection drops the responses to
// the requests its client cancelled.
type cancelTransport struct{ mcp.Transport }

func (t cancelTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cancelConn{Connection: c}, nil
}

type cancelConn struct {
	mcp.Connection
	cancelled cancelSet
}

func (c *cancelConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Request); ok && err == nil && r.Method == "notifications/cancelled" {
		if id, ok := cancelledID(r.Params); ok {
			c.cancelled.add(id)
		}
	}
	return msg, err
}

func (c *cancelConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Response); ok && r.ID.IsValid() && c.cancelled.take(idKey(r.ID.Raw())) {
		return nil // the client cancelled it
	}
	return c.Connection.Write(ctx, msg)
}

// httpCancels are the cancelled request ids of each HTTP session.
type httpCancels struct {
	mu       sync.Mutex
	sessions map[string]*cancelSet
}

func (h *httpCancels) set(session string, make bool) *cancelSet {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sessions == nil {
		h.sessions = map[string]*cancelSet{}
	}
	cs := h.sessions[session]
	if cs == nil && make {
		cs = &cancelSet{}
		h.sessions[session] = cs
	}
	return cs
}

func (h *httpCancels) forget(session string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.sessions, session)
}

// dropCancelled notes the request ids an HTTP session's client cancels
// (before the SDK sees the notification and ends the handler), and drops
// the responses to them from the session's event streams.
func (s *Server) dropCancelled(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		session := r.Header.Get("Mcp-Session-Id")
		if session == "" {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodDelete {
			defer s.cancels.forget(session)
		}
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(r.Body)
			rest := io.Reader(bytes.NewReader(body))
			if err != nil {
				rest = io.MultiReader(rest, errReader{err}) // the SDK sees the same failure
			}
			r.Body = readCloser{rest, r.Body}
			if err == nil && bytes.Contains(body, []byte("notifications/cancelled")) {
				for _, id := range cancelledIDs(body) {
					s.cancels.set(session, true).add(id)
				}
			}
		}
		next.ServeHTTP(&cancelWriter{ResponseWriter: w, cancels: func() *cancelSet { return s.cancels.set(session, false) }}, r)
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

type readCloser struct {
	io.Reader
	io.Closer
}

// cancelledIDs are the request ids of the notifications/cancelled in a
// POST body (one message or a batch).
func cancelledIDs(body []byte) []string {
	var msgs []json.RawMessage
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &msgs) != nil {
			return nil
		}
	} else {
		msgs = []json.RawMessage{body}
	}
	var ids []string
	for _, m := range msgs {
		var n struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(m, &n) == nil && n.Method == "notifications/cancelled" {
			if id, ok := cancelledID(n.Params); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// cancelWriter drops the events of an event stream that answer a
// cancelled request. (The SDK writes each event with one Write.)
type cancelWriter struct {
	http.ResponseWriter
	cancels func() *cancelSet
}

func (w *cancelWriter) Write(b []byte) (int, error) {
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") && bytes.Contains(b, []byte(`"id"`)) {
		if cs := w.cancels(); cs != nil {
			for _, line := range bytes.Split(b, []byte("\n")) {
				data, ok := bytes.CutPrefix(line, []byte("data: "))
				if !ok {
					continue
				}
				var m struct {
					ID     any             `json:"id"`
					Method string          `json:"method"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(data, &m) == nil && m.Method == "" && m.ID != nil && (m.Result != nil || m.Error != nil) {
					if f, ok := m.ID.(float64); ok && f == float64(int64(f)) {
						m.ID = int64(f)
					}
					if cs.take(idKey(m.ID)) {
						return len(b), nil // the client cancelled it
					}
				}
			}
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *cancelWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *cancelWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
