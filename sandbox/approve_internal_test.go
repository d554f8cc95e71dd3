package sandbox

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/surfkit/surf/policy"
)

// TestProxyHonoursApprovals: the egress proxy lets an approved ask host
// through (requests and CONNECT), and only it: another host of an ask
// entry, not approved, is still refused, and nothing reaches it.
func TestProxyHonoursApprovals(t *testing.T) {
	approved, approvedHits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	other, otherHits := serveOn(t, "127.0.0.3", http.HandlerFunc(hello))
	cfg := policy.Config{}
	for _, r := range []struct {
		list *[]policy.HostRule
		pat  string
	}{{&cfg.Allow, "127.0.0.1"}, {&cfg.Ask, "127.0.0.2"}, {&cfg.Ask, "127.0.0.3"}} {
		hr, err := policy.ParseHostRule(r.pat)
		if err != nil {
			t.Fatal(err)
		}
		*r.list = append(*r.list, hr)
	}
	approvals := policy.NewApprovals()
	p := newTestProxy(t, policy.MustNew(cfg).WithApprovals(approvals), nil, "", "")
	c := p.client("", "")

	if code, _, _ := get(t, c, approved.URL+"/"); code != http.StatusForbidden {
		t.Fatalf("before the approval: %d, want 403", code)
	}
	if n := approvedHits.Load(); n != 0 {
		t.Fatalf("the ask host saw %d connections before its approval", n)
	}
	if err := approvals.Approve("127.0.0.2", 0); err != nil {
		t.Fatal(err)
	}
	if code, body, _ := get(t, c, approved.URL+"/page"); code != 200 || body != "hello from "+approved.Listener.Addr().String() {
		t.Errorf("after the approval: %d %q", code, body)
	}
	if code, _, _ := get(t, c, other.URL+"/"); code != http.StatusForbidden {
		t.Errorf("another ask host, not approved: %d, want 403", code)
	}
	// CONNECT (what https and WebSockets use) agrees.
	for _, c := range []struct {
		target string
		want   int
	}{{approved.Listener.Addr().String(), 200}, {other.Listener.Addr().String(), 403}} {
		conn, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", c.target, c.target)
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
		conn.Close()
		if err != nil {
			t.Fatalf("CONNECT %s: %v", c.target, err)
		}
		if resp.StatusCode != c.want {
			t.Errorf("CONNECT %s: %d, want %d", c.target, resp.StatusCode, c.want)
		}
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the ask host that was not approved saw %d connections", n)
	}
}
