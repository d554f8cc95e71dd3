package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// stuckSite serves a page that never finishes loading: /stuck sends its
// head and the start of its body, then nothing more (its request is held
// until the test ends). The part sent reports, with a request to
// /committed, that the page has committed and is loading.
type stuckSite struct {
	URL     string
	arrived chan struct{}
}

func serveStuck(t *testing.T) *stuckSite {
	t.Helper()
	st := &stuckSite{arrived: make(chan struct{}, 16)}
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stuck":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><title>Stuck</title><p>loading<script>fetch("/committed")</script>`)
			w.(http.Flusher).Flush()
			<-release
		case "/committed":
			st.arrived <- struct{}{}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: Close waits for handlers
	st.URL = srv.URL + "/stuck"
	return st
}

// await waits until the stuck page is loading, and then a moment more, so
// that the call is waiting for the page to load (not yet for it to
// commit).
func (st *stuckSite) await(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case <-st.arrived:
	case err := <-done:
		t.Fatalf("the call ended before the stuck page committed: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the stuck page never committed")
	}
	time.Sleep(500 * time.Millisecond)
}

// stuckServer is a server that may visit the fixture and the stuck site,
// with navigation and call timeouts far longer than any test: only a
// cancellation can end a call to the stuck page.
func stuckServer(t *testing.T, f *fixture, st *stuckSite, edit func(*Config)) *Server {
	t.Helper()
	r, err := policy.ParseHostRule(strings.TrimPrefix(strings.TrimSuffix(st.URL, "/stuck"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, f, func(c *Config) {
		c.Policy = sitePolicy(t, f, policy.Config{Allow: []policy.HostRule{r}})
		c.Surfer = websurfer.Config{ActionTimeout: time.Hour}
		c.CallTimeout = time.Hour
		if edit != nil {
			edit(c)
		}
	})
}

// callAsync calls a tool in the background; the call's error (nil for any
// result) arrives on the channel.
func callAsync(ctx context.Context, cs *mcp.ClientSession, name string, args any) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		done <- err
	}()
	return done
}

// TestCancelledCallFreesSession cancels a call to a page that never
// answers (the client sends notifications/cancelled); the next call of
// the same session runs and shows its page, while the stuck page is still
// stuck.
func TestCancelledCallFreesSession(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	s := stuckServer(t, f, st, nil)
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	for round := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		done := callAsync(ctx, cs, "visit_url", map[string]any{"url": st.URL})
		st.await(t, done)
		t0 := time.Now()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: the cancelled call returned %v", round, err)
		}
		// The stuck page would hold the session for the hour of its
		// navigation timeout: a minute is plenty for a call that is not
		// held up.
		nctx, ncancel := context.WithTimeout(context.Background(), time.Minute)
		res, err := cs.CallTool(nctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": f.URL + "/cookie?set=after"}})
		ncancel()
		if err != nil {
			t.Fatalf("round %d: the call after the cancelled one: %v", round, err)
		}
		t.Logf("round %d: the next call returned %s after the cancel", round, time.Since(t0).Round(time.Millisecond))
		if !strings.Contains(text(res), "cookie set to after") {
			t.Fatalf("round %d: the call after the cancelled one does not show its page:\n%s", round, text(res))
		}
		if s.Sessions() != 1 {
			t.Fatalf("round %d: %d browser sessions, want 1 (the same)", round, s.Sessions())
		}
	}
}

// TestDeleteStopsCall: a client that ends its session (an HTTP DELETE)
// with a call in flight gets its DELETE answered, and the session's
// browser context closes, though the page it was loading never answers.
func TestDeleteStopsCall(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	s := stuckServer(t, f, st, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{})
	cs := connect(t, endpoint, nil, nil)
	done := callAsync(context.Background(), cs, "visit_url", map[string]any{"url": st.URL})
	st.await(t, done)
	// The go-sdk client's Close waits for its calls before it sends the
	// DELETE; other clients (and terminateSession in the TypeScript SDK)
	// do not.
	req, err := http.NewRequest(http.MethodDelete, endpoint, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Authorization", "Bearer "+testToken)
	t0 := time.Now()
	hc := &http.Client{Timeout: time.Minute} // the stuck page holds its navigation for an hour
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("the DELETE: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("the DELETE: %s, want 204", resp.Status)
	}
	t.Logf("the DELETE took %s", time.Since(t0).Round(time.Millisecond))
	waitFor(t, "the session's browser context to close", time.Minute, func() bool { return s.Sessions() == 0 })
	t.Logf("the browser context closed %s after the DELETE began", time.Since(t0).Round(time.Millisecond))
}

// TestCloseStopsCalls: closing the server with calls in flight stops them
// and closes every browser context.
func TestCloseStopsCalls(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	s := stuckServer(t, f, st, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{})
	for range 2 {
		cs := connect(t, endpoint, nil, nil)
		st.await(t, callAsync(context.Background(), cs, "visit_url", map[string]any{"url": st.URL}))
	}
	closed := make(chan error, 1)
	t0 := time.Now()
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("closing the server: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Close did not return with calls to a stuck page in flight")
	}
	t.Logf("Close took %s", time.Since(t0).Round(time.Millisecond))
	if n := s.Sessions(); n != 0 {
		t.Errorf("%d browser sessions open after Close", n)
	}
}

// errorLog records the log records at level Error and above.
type errorLog struct {
	slog.Handler
	mu  sync.Mutex
	buf bytes.Buffer
}

func newErrorLog() *errorLog {
	l := &errorLog{}
	l.Handler = slog.NewTextHandler(&lockedWriter{l}, &slog.HandlerOptions{Level: slog.LevelError})
	return l
}

type lockedWriter struct{ l *errorLog }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.l.buf.Write(p)
}

func (l *errorLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestServeTransportStops: ServeTransport returns when its context ends,
// idle or with a call to a stuck page in flight, and an ordinary stop logs
// no error.
func TestServeTransportStops(t *testing.T) {
	f := serveFixture(t)
	st := serveStuck(t)
	for _, busy := range []bool{false, true} {
		log := newErrorLog()
		s := stuckServer(t, f, st, func(c *Config) { c.Logger = slog.New(log) })
		ct, tt := mcp.NewInMemoryTransports()
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- s.ServeTransport(ctx, tt) }()
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		if busy {
			st.await(t, callAsync(context.Background(), cs, "visit_url", map[string]any{"url": st.URL}))
		}
		t0 := time.Now()
		cancel()
		select {
		case err := <-served:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("busy=%v: ServeTransport returned %v, want context.Canceled", busy, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("busy=%v: ServeTransport did not return after its context ended", busy)
		}
		t.Logf("busy=%v: ServeTransport returned %s after its context ended", busy, time.Since(t0).Round(time.Millisecond))
		if err := s.Close(); err != nil {
			t.Errorf("busy=%v: closing the server: %v", busy, err)
		}
		if n := s.Sessions(); n != 0 {
			t.Errorf("busy=%v: %d browser sessions open after the stop", busy, n)
		}
		if got := log.String(); got != "" {
			t.Errorf("busy=%v: stopping logged errors:\n%s", busy, got)
		}
		cs.Close()
	}
}
