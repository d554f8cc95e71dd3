package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/websurfer"
)

// hangFixture serves the pages of testdata/sites/hang (pages whose script
// never yields) and a plain page, /ok.
func hangFixture(t *testing.T) *fixture {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/hang/", http.StripPrefix("/hang/", http.FileServer(http.Dir("../../../../testdata/sites/hang"))))
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) { page(w, "Fine", "<p>This page answers.</p>") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &fixture{URL: srv.URL, Host: strings.TrimPrefix(srv.URL, "http://")}
}

// TestStuckPagesDoNotStarveSessions (issue 28): with room for two calls at
// the browser, two sessions whose pages never yield (a busy loop, endless
// alerts) and action and hang timeouts too long to matter, a third session's call
// is still served: a call's turn ends with the call's timeout. Each stuck
// call answers, and its session's next call works.
func TestStuckPagesDoNotStarveSessions(t *testing.T) {
	f := hangFixture(t)
	s := newServer(t, f, func(c *Config) {
		c.MaxActive = 2
		c.CallTimeout = 10 * time.Second
		c.QueueTimeout = 3 * time.Minute // a starved call fails instead of hanging the test
		c.Image = ImageNone
		c.Surfer = websurfer.Config{ActionTimeout: time.Hour, HangTimeout: time.Hour}
	})
	endpoint := serveHTTP(t, s, HTTPOptions{})
	stuck := []*mcp.ClientSession{connect(t, endpoint, nil, nil), connect(t, endpoint, nil, nil)}
	other := connect(t, endpoint, nil, nil)

	type answer struct {
		res *mcp.CallToolResult
		err error
	}
	answers := make([]chan answer, len(stuck))
	for i, cs := range stuck {
		answers[i] = make(chan answer, 1)
		u := f.URL + []string{"/hang/busy.html", "/hang/alerts.html"}[i]
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": u}})
			answers[i] <- answer{res, err}
		}()
	}
	waitFor(t, "both stuck calls to hold their turns", 2*time.Minute, func() bool { return s.admit.Active() == 2 })

	res := call(t, other, "visit_url", map[string]any{"url": f.URL + "/ok"})
	if res.IsError || !strings.Contains(text(res), "This page answers.") {
		t.Fatalf("another session's call while two pages are stuck: %s", textcut.Line(text(res), 300))
	}

	for i, cs := range stuck {
		var a answer
		select {
		case a = <-answers[i]:
		case <-time.After(4 * time.Minute): // a hang guard, not a timing check
			t.Fatalf("the call on stuck page %d never answered", i)
		}
		if a.err != nil {
			t.Fatalf("the call on stuck page %d: %v", i, a.err)
		}
		if !a.res.IsError {
			t.Errorf("the call on stuck page %d succeeded: %s", i, textcut.Line(text(a.res), 300))
		}
		t.Logf("stuck page %d: %s", i, textcut.Line(text(a.res), 300))
		next := call(t, cs, "visit_url", map[string]any{"url": f.URL + "/ok"})
		if next.IsError || !strings.Contains(text(next), "This page answers.") {
			t.Errorf("the next call of the session whose page was stuck: %s", textcut.Line(text(next), 300))
		}
	}
	waitFor(t, "every turn to come back", time.Minute, func() bool { return s.admit.Active() == 0 })
}
