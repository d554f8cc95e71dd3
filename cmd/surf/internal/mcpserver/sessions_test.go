package mcpserver

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestSessionsIsolated runs eight MCP sessions at once: each sets its own
// cookie, opens a second tab, and must see only its own cookie and tabs.
// Then every client disconnects, and their browser contexts close.
func TestSessionsIsolated(t *testing.T) {
	const n = 8
	f := serveFixture(t)
	s := newServer(t, f, nil)
	endpoint := serveHTTP(t, s, HTTPOptions{})
	sb := browsertest.Sandbox(t)
	// Contexts by identity: one that an earlier test is still closing
	// must not count against these.
	before := map[playwright.BrowserContext]bool{}
	for _, c := range sb.Browser().Contexts() {
		before[c] = true
	}

	clients := make([]*mcp.ClientSession, n)
	for i := range clients {
		clients[i] = connect(t, endpoint, nil, nil)
	}
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i, cs := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = isolatedSession(t, cs, f, i)
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("session %d: %s", i, e)
		}
	}
	if got := s.Sessions(); got != n {
		t.Errorf("%d browser sessions open, want %d", got, n)
	}
	fresh := func() int {
		c := 0
		for _, x := range sb.Browser().Contexts() {
			if !before[x] {
				c++
			}
		}
		return c
	}
	if got := fresh(); got != n {
		t.Errorf("%d new browser contexts, want %d", got, n)
	}

	// Each session's browser context, to watch them close.
	s.mu.Lock()
	var done []<-chan struct{}
	for _, cl := range s.clients {
		for _, se := range cl.sessions {
			if se.b != nil {
				done = append(done, se.b.sess.Done())
			}
		}
	}
	s.mu.Unlock()
	if len(done) != n {
		t.Fatalf("%d sessions with a browser, want %d", len(done), n)
	}

	// Dropping one client releases its context only.
	clients[0].Close()
	waitFor(t, "the first client's browser session to close", 30*time.Second, func() bool { return s.Sessions() == n-1 })
	closed := func() int {
		c := 0
		for _, d := range done {
			select {
			case <-d:
				c++
			default:
			}
		}
		return c
	}
	waitFor(t, "one browser context to close", 20*time.Second, func() bool { return closed() >= 1 })
	time.Sleep(500 * time.Millisecond)
	if c := closed(); c != 1 {
		t.Errorf("%d browser contexts closed after one client left, want 1", c)
	}
	for _, cs := range clients[1:] {
		cs.Close()
	}
	waitFor(t, "every browser session to close", 60*time.Second, func() bool { return s.Sessions() == 0 })
	for i, d := range done {
		select {
		case <-d:
		case <-time.After(10 * time.Second):
			t.Errorf("browser context %d still open", i)
		}
	}
	waitFor(t, "the browser's contexts to go", 20*time.Second, func() bool { return fresh() == 0 })
}

// isolatedSession is one session's part of TestSessionsIsolated; it
// returns what went wrong, or "".
func isolatedSession(t *testing.T, cs *mcp.ClientSession, f *fixture, i int) string {
	me := fmt.Sprintf("client%d", i)
	res := call(t, cs, "visit_url", map[string]any{"url": f.URL + "/cookie?set=" + me})
	if res.IsError {
		return "setting the cookie: " + text(res)
	}
	res = call(t, cs, "create_tab", map[string]any{"url": f.URL + "/cookie"})
	if res.IsError {
		return "opening a tab: " + text(res)
	}
	obs := text(res)
	if !strings.Contains(obs, "cookie is "+me) {
		return "the new tab does not show this session's cookie:\n" + obs
	}
	for j := range 8 {
		if j != i && strings.Contains(obs, fmt.Sprintf("client%d", j)) {
			return fmt.Sprintf("session %d sees client%d:\n%s", i, j, obs)
		}
	}
	// The tab list names this session's two tabs, and no others.
	want := fmt.Sprintf(`tabs: 0 "Cookie set %s"; 1 "Cookie %s" (active)`, me, me)
	if !strings.Contains(obs, want+"\n") {
		return fmt.Sprintf("the tab list is not %s:\n%s", want, obs)
	}
	return ""
}

// TestIdleTimeout closes an idle session's browser context; the next call
// opens a fresh one and says so.
func TestIdleTimeout(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.IdleTimeout = 1500 * time.Millisecond })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/cookie?set=before"})
	if s.Sessions() != 1 {
		t.Fatalf("%d sessions, want 1", s.Sessions())
	}
	waitFor(t, "the idle session to close", 30*time.Second, func() bool { return s.Sessions() == 0 })
	res := mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/cookie"})
	got := text(res)
	if !strings.Contains(got, "closed after 1.5s without a call") {
		t.Errorf("the first call after the idle timeout does not say the context is new:\n%s", got)
	}
	if !strings.Contains(got, "cookie is none") {
		t.Errorf("the new context kept the old cookie:\n%s", got)
	}
	// The note is said once.
	res = mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
	if strings.Contains(text(res), "note:") {
		t.Errorf("the note came twice:\n%s", text(res))
	}
}
