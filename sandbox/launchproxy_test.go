package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// TestAdversarialOtherLocalUser: another user of the machine can reach
// every loopback port, surf's egress proxies included. The browser-wide
// proxy started at launch, like each session's, refuses a client without
// its credentials (407), so that user cannot borrow the sandbox's policy
// (here it allows loopback) to reach the canary; the canary stays silent.
// The browser's own contexts still get through
// (TestLaunchProxyCoversRawContexts). The MCP endpoint's side is
// cmd/surf's TestServeHTTPToken.
func TestAdversarialOtherLocalUser(t *testing.T) {
	sb := browsertest.Sandbox(t)
	info := sb.Info().EgressProxy
	_, launch, ok := strings.Cut(info, "launch proxy ")
	if !ok {
		t.Fatalf("no launch proxy in the sandbox info %q", info)
	}
	launch = strings.Fields(launch)[0]
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	c := newCanary(t)
	target := c.origin() + "/other-user"

	for _, proxy := range []struct{ name, addr string }{{"launch proxy", launch}, {"session proxy", sess.Info().Proxy}} {
		for _, user := range []*url.Userinfo{nil, url.UserPassword("surf-guess", "guess"), url.User("surf")} {
			pu := &url.URL{Scheme: "http", Host: proxy.addr, User: user}
			hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 10 * time.Second}
			resp, err := hc.Get(target)
			if err != nil {
				t.Fatalf("GET through the %s as %v: %v", proxy.name, user, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusProxyAuthRequired {
				t.Errorf("GET through the %s as %v: status %d, want 407", proxy.name, user, resp.StatusCode)
			}
		}
		conn, err := net.Dial("tcp", proxy.addr)
		if err != nil {
			t.Fatal(err)
		}
		hp := net.JoinHostPort(c.ip, fmt.Sprint(c.port))
		fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hp, hp)
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("CONNECT through the %s without credentials: %d, want 407", proxy.name, resp.StatusCode)
		}
	}
	if c.hits() != 0 {
		t.Errorf("the canary was reached through surf's proxies without credentials: %s", c)
	}
}
