package mcpserver

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallsQueue: with room for one browser call at a time, four sessions
// calling at once all wait their turn and succeed, even when the wait is
// longer than the call timeout (which starts once a call is admitted),
// and each result reports its wait apart from its action time.
func TestCallsQueue(t *testing.T) {
	const n = 4
	const callTimeout = 20 * time.Second // a visit on a busy machine takes seconds
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) {
		c.MaxActive = 1
		c.CallTimeout = callTimeout
		c.Image = ImageNone
	})
	endpoint := serveHTTP(t, s, HTTPOptions{})
	clients := make([]*mcp.ClientSession, n)
	for i := range clients {
		clients[i] = connect(t, endpoint, nil, nil)
		// each session's browser context opens now, not in the timed call
		mustCall(t, clients[i], "visit_url", map[string]any{"url": f.URL + "/"})
	}

	// Hold the only turn, so that every call queues.
	if _, err := s.admit.Acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	results := make([]*mcp.CallToolResult, n)
	var wg sync.WaitGroup
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = call(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
		}()
	}
	waitFor(t, "every call to queue", time.Minute, func() bool { return s.admit.Waiting() == n })
	// Keep them waiting past the call timeout: the wait must not count.
	time.Sleep(callTimeout + time.Second)
	s.admit.Release()
	wg.Wait()

	for i, res := range results {
		if res.IsError {
			t.Errorf("session %d: error result: %s", i, text(res))
			continue
		}
		queued, ok1 := metaMS(res, MetaQueuedMS)
		action, ok2 := metaMS(res, MetaActionMS)
		if !ok1 || !ok2 {
			t.Errorf("session %d: _meta %v lacks %s or %s", i, res.Meta, MetaQueuedMS, MetaActionMS)
			continue
		}
		if queued <= callTimeout.Milliseconds() {
			t.Errorf("session %d: queued_ms %d, want more than the %s it was held", i, queued, callTimeout)
		}
		if action <= 0 {
			t.Errorf("session %d: action_ms %d, want the visit's own time", i, action)
		}
	}
	if w := s.admit.Waiting(); w != 0 {
		t.Errorf("%d calls still waiting", w)
	}
}

// metaMS reads a millisecond count from a result's _meta.
func metaMS(res *mcp.CallToolResult, key string) (int64, bool) {
	v, ok := res.Meta[key]
	if !ok {
		return 0, false
	}
	f, ok := v.(float64) // decoded JSON
	return int64(f), ok
}
