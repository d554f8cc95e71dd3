package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/browsertest"
)

// TestLaunchProxyNeedsCredentials: the browser-wide proxy started at
// launch, like the sessions' proxies, refuses clients without its
// credentials (407): another local user cannot use it to reach what the
// sandbox's policy allows (here loopback). The browser's own contexts
// still get through (TestLaunchProxyCoversRawContexts).
func TestLaunchProxyNeedsCredentials(t *testing.T) {
	sb := browsertest.Sandbox(t)
	info := sb.Info().EgressProxy
	_, addr, ok := strings.Cut(info, "launch proxy ")
	if !ok {
		t.Fatalf("no launch proxy in the sandbox info %q", info)
	}
	addr = strings.Fields(addr)[0]
	var hits atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	target := "http://" + ln.Addr().String() + "/"

	for _, user := range []*url.Userinfo{nil, url.UserPassword("surf-guess", "guess"), url.User("surf")} {
		pu := &url.URL{Scheme: "http", Host: addr, User: user}
		c := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu), DisableKeepAlives: true}, Timeout: 10 * time.Second}
		resp, err := c.Get(target)
		if err != nil {
			t.Fatalf("GET through the launch proxy as %v: %v", user, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusProxyAuthRequired {
			t.Errorf("GET through the launch proxy as %v: status %d, want 407", user, resp.StatusCode)
		}
	}
	// CONNECT too.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", ln.Addr(), ln.Addr())
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusProxyAuthRequired {
		t.Errorf("CONNECT through the launch proxy without credentials: %d, want 407", resp.StatusCode)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times through the launch proxy without credentials", n)
	}
}
