// Package recording is what surf record does around the browser: serve a
// site's directory on loopback to record from, sum up each page it
// visited, and describe the HAR file it wrote. The surf command opens the
// browser, visits and prints.
package recording

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// Page is a page surf record visited.
type Page struct {
	URL     string   `json:"url"`
	Title   string   `json:"title"`
	Blocked []string `json:"blocked,omitempty"`
}

// PageOf sums up the page a visit to u ended on, with what the policy
// blocked there; obs may be nil.
func PageOf(u string, obs *websurfer.Observation) Page {
	p := Page{URL: u}
	if obs == nil {
		return p
	}
	p.URL, p.Title = obs.URL, obs.Title
	p.Blocked = append(p.Blocked, obs.Blocked.Navigations...)
	if n := obs.Blocked.Requests; n > 0 {
		p.Blocked = append(p.Blocked, fmt.Sprintf("%d subresource requests (hosts %s)", n, strings.Join(obs.Blocked.Hosts, ", ")))
	}
	return p
}

// Summary is surf record --json's output: the recording and what it
// holds.
type Summary struct {
	HAR     string   `json:"har"`
	Pages   []Page   `json:"pages"`
	Entries int      `json:"entries"`
	Origins []string `json:"origins"`
	Comment string   `json:"comment,omitempty"`
	Size    int64    `json:"-"` // the file's size in bytes
}

// Summarize reads the HAR file at path, written after visiting pages.
func Summarize(path string, pages []Page) (Summary, error) {
	info, err := sandbox.InspectHAR(path)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{HAR: path, Pages: pages, Entries: info.Entries, Origins: info.Origins, Comment: info.Comment}
	if fi, err := os.Stat(path); err == nil {
		s.Size = fi.Size()
	}
	return s, nil
}

// Server is a directory served on loopback for recording.
type Server struct {
	Addr string // host:port
	srv  *http.Server
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// ErrNotDir is the error of serving something that is not a directory.
var ErrNotDir = errors.New("not a directory")

// Serve serves the files in dir on 127.0.0.1:port (0: any free port).
func Serve(dir string, port int) (*Server, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--serve %s is %w", dir, ErrNotDir)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("serving %s: %w", dir, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &Server{Addr: ln.Addr().String(), srv: srv}, nil
}

// Size formats a size for people: 512 B, 3.4 KiB, 12.0 MiB.
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
