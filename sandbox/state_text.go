package sandbox

import (
	"fmt"
	"io"
	"strings"

	"github.com/surfkit/surf/internal/termsafe"
)

// WriteText writes the outline for people, one cookie or origin a line,
// no value anywhere; what came from the file is made safe for a terminal.
func (s *StateOutline) WriteText(w io.Writer) {
	enc := ""
	if s.Encrypted {
		enc = ", encrypted"
	}
	fmt.Fprintf(w, "%s: %s, %s%s\n", termsafe.String(s.Path), countOf(len(s.Cookies), "cookie"), countOf(len(s.Origins), "origin"), enc)
	if len(s.Cookies) > 0 {
		fmt.Fprintln(w, "cookies:")
	}
	for _, c := range s.Cookies {
		exp := "session"
		if c.Expires != "" {
			exp = "expires " + c.Expires
		}
		var flags []string
		if c.HTTPOnly {
			flags = append(flags, "httpOnly")
		}
		if c.Secure {
			flags = append(flags, "secure")
		}
		if c.SameSite != "" {
			flags = append(flags, "sameSite="+c.SameSite)
		}
		q := termsafe.String
		fmt.Fprintln(w, "  "+strings.TrimSpace(fmt.Sprintf("%s %s %s  %s  %s", q(c.Domain), q(c.Path), q(c.Name), q(exp), q(strings.Join(flags, " ")))))
	}
	if len(s.Origins) > 0 {
		fmt.Fprintln(w, "origins:")
	}
	for _, o := range s.Origins {
		keys := make([]string, len(o.Keys))
		for i, k := range o.Keys {
			keys[i] = termsafe.String(k)
		}
		fmt.Fprintf(w, "  %s  local storage: %s\n", termsafe.String(o.Origin), strings.Join(keys, ", "))
	}
}

// countOf is "1 cookie", "2 cookies".
func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
