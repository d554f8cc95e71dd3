package mcpserver

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAdmitterFIFO: with one turn, waiters are admitted in the order they
// came, and a waiter that gives up leaves the queue without losing the
// turn it may have been handed.
func TestAdmitterFIFO(t *testing.T) {
	a := newAdmitter(1)
	ctx := context.Background()
	if _, err := a.acquire(ctx); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := a.acquire(ctx); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			a.release()
		}()
		waitFor(t, "the waiter to queue", 10*time.Second, func() bool { return a.waiting() == i+1 })
	}
	// One more waiter gives up while queued.
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		_, err := a.acquire(cctx)
		gaveUp <- err
	}()
	waitFor(t, "the fourth waiter to queue", 10*time.Second, func() bool { return a.waiting() == 4 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled waiter got %v, want context.Canceled", err)
	}
	if n := a.waiting(); n != 3 {
		t.Fatalf("%d waiting after one gave up, want 3", n)
	}
	a.release()
	wg.Wait()
	if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
		t.Fatalf("admitted in order %v, want [0 1 2]", order)
	}
	// Every turn was given back: a new call is admitted at once.
	if q, err := a.acquire(ctx); err != nil || q != 0 {
		t.Fatalf("acquire on an idle admitter: waited %s, err %v", q, err)
	}
}

// TestCallsQueue: with room for one browser call at a time, four sessions
// calling at once all wait their turn and succeed, even when the wait is
// longer than the call timeout (which starts once a call is admitted),
// and each result reports its wait apart from its action time.
func TestCallsQueue(t *testing.T) {
	const n = 4
	const callTimeout = 10 * time.Second
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
	}

	// Hold the only turn, so that every call queues.
	if _, err := s.admit.acquire(context.Background()); err != nil {
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
	waitFor(t, "every call to queue", time.Minute, func() bool { return s.admit.waiting() == n })
	// Keep them waiting past the call timeout: the wait must not count.
	time.Sleep(callTimeout + time.Second)
	s.admit.release()
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
	if w := s.admit.waiting(); w != 0 {
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
