package mcpserver

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// noDelete is an HTTP client that never sends a DELETE: it is the MCP
// inspector, or the TypeScript SDK's close(), which just go away.
func noDelete() *http.Client {
	return &http.Client{Transport: dropDelete{bearer{testToken}}}
}

type dropDelete struct{ next http.RoundTripper }

func (d dropDelete) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodDelete {
		return nil, errors.New("this client does not end its sessions")
	}
	return d.next.RoundTrip(r)
}

// TestGoneClientsFreeSlots: many clients, one after the other, each leaving
// without ending its session, are all served by a server with the default
// limit of browser sessions: those of the clients that went away make room.
func TestGoneClientsFreeSlots(t *testing.T) {
	f := serveFixture(t)
	s := newServer(t, f, func(c *Config) { c.DisconnectGrace = time.Hour })
	endpoint := serveHTTP(t, s, HTTPOptions{})
	const clients = 3*DefaultMaxSessions - 2
	for i := range clients {
		cs := connect(t, endpoint, nil, noDelete())
		res := call(t, cs, "visit_url", map[string]any{"url": f.URL + "/"})
		if res.IsError {
			t.Fatalf("client %d was not served: %s", i, text(res))
		}
		cs.Close()
	}
	if n := s.Sessions(); n > DefaultMaxSessions {
		t.Errorf("%d browser sessions open, more than the limit %d", n, DefaultMaxSessions)
	}
}

// TestGoneClientReleased: the session of a client that went away without
// ending it closes after the grace, with its browser context; the session
// of a client still connected stays, however long it is quiet.
func TestGoneClientReleased(t *testing.T) {
	f := serveFixture(t)
	const grace = 200 * time.Millisecond
	s := newServer(t, f, func(c *Config) { c.DisconnectGrace = grace })
	endpoint := serveHTTP(t, s, HTTPOptions{})
	stays := connect(t, endpoint, nil, nil)
	mustCall(t, stays, "visit_url", map[string]any{"url": f.URL + "/cookie?set=stays"})
	goes := connect(t, endpoint, nil, noDelete())
	mustCall(t, goes, "visit_url", map[string]any{"url": f.URL + "/"})
	if n := s.Sessions(); n != 2 {
		t.Fatalf("%d browser sessions, want 2", n)
	}
	goes.Close()
	waitFor(t, "the gone client's session to close", time.Minute, func() bool { return s.Sessions() == 1 })
	// Many graces later, the connected client's session is still there:
	// same context, same cookie, no note.
	time.Sleep(10 * grace)
	res := mustCall(t, stays, "visit_url", map[string]any{"url": f.URL + "/cookie"})
	if got := text(res); !strings.Contains(got, "cookie is stays") || strings.Contains(got, "note:") {
		t.Errorf("the connected client's session did not stay:\n%s", got)
	}
	if n := s.Sessions(); n != 1 {
		t.Errorf("%d browser sessions, want 1", n)
	}
}
