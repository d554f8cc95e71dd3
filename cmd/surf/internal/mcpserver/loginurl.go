package mcpserver

import "net"

// LoginURL is the address a person opens first on a server listening on
// addr with the options o: with the token, which the server swaps for a
// cookie, and with o.PublicHost for the host when set.
func LoginURL(addr net.Addr, o HTTPOptions) string {
	host := addr.String()
	if o.PublicHost != "" {
		if _, port, err := net.SplitHostPort(host); err == nil {
			host = net.JoinHostPort(o.PublicHost, port)
		}
	}
	if o.Token == "" || o.NoToken {
		return "http://" + host + "/"
	}
	return "http://" + host + "/?token=" + o.Token
}
