package login

import (
	"bufio"
	"fmt"
	"io"
	"net/url"
)

// HasDisplay tells whether a headed login has a display for its window:
// $DISPLAY (X11, also ssh -X) or $WAYLAND_DISPLAY is set.
func HasDisplay(getenv func(string) string) bool {
	return getenv != nil && (getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "")
}

// EnterPressed returns a channel for Config.Done that is closed when a
// line (the person pressing Enter) is read from r; headless, also at the
// end of r (a script's stdin). With a window, the end of r means no one
// will press Enter: the window closing ends the wait instead.
func EnterPressed(r io.Reader, headless bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		_, err := bufio.NewReader(r).ReadString('\n')
		if err == nil || headless {
			close(done)
		}
	}()
	return done
}

// ParseURL parses the URL a login opens: http or https, with a host.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL", raw)
	}
	return u, nil
}
