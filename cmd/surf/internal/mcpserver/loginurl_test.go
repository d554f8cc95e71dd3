package mcpserver

import (
	"net"
	"testing"
)

func TestLoginURL(t *testing.T) {
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8932}
	for _, c := range []struct {
		o    HTTPOptions
		want string
	}{
		{HTTPOptions{}, "http://127.0.0.1:8932/"},
		{HTTPOptions{Token: "t0k"}, "http://127.0.0.1:8932/?token=t0k"},
		{HTTPOptions{Token: "t0k", NoToken: true}, "http://127.0.0.1:8932/"},
		{HTTPOptions{Token: "t0k", PublicHost: "surf.example"}, "http://surf.example:8932/?token=t0k"},
	} {
		if got := LoginURL(addr, c.o); got != c.want {
			t.Errorf("LoginURL(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
