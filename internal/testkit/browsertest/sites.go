package browsertest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"text/template"
)

// Sites serves the fixture sites under testdata/sites on two loopback
// origins: A on 127.0.0.1 and B on 127.0.0.2. They are different sites, so
// Chromium puts frames from B into their own process. Files ending in .html
// are Go templates that can name either origin: {{.A}} and {{.B}}; a
// folder's path serves its index.html.
//
// Every request is logged, so a test can assert what the browser sent;
// every page links the fixture fonts (see FontsPath), whose requests are
// not logged.
type Sites struct {
	A, B string

	mu       sync.Mutex
	log      []Request
	handlers map[string]http.HandlerFunc
	root     string
	a, b     *httptest.Server
}

// Request is one logged request.
type Request struct {
	Origin string // "A" or "B"
	Method string
	Path   string // path and query
	Body   string
	Header http.Header
}

// RepoRoot is the directory holding go.mod.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// ServeSites starts the two origins; they stop when the test ends.
func ServeSites(t testing.TB) *Sites {
	t.Helper()
	s, err := StartSites()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// StartSites starts the two origins outside a test (an Example has no
// testing.TB); the caller stops them with Close.
func StartSites() (*Sites, error) {
	s := &Sites{handlers: map[string]http.HandlerFunc{}, root: filepath.Join(RepoRoot(), "testdata", "sites")}
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		return nil, fmt.Errorf("listening on 127.0.0.2: %w", err)
	}
	s.a = httptest.NewServer(s.handler("A"))
	s.b = httptest.NewUnstartedServer(s.handler("B"))
	s.b.Listener.Close()
	s.b.Listener = ln
	s.b.Start()
	s.A, s.B = s.a.URL, s.b.URL
	return s, nil
}

// Close stops both origins.
func (s *Sites) Close() {
	s.a.Close()
	s.b.Close()
}

// HostA is origin A's host:port, the form a policy's host rule takes.
func (s *Sites) HostA() string { return strings.TrimPrefix(s.A, "http://") }

// Handle adds a dynamic handler for an exact path on both origins; it wins
// over files.
func (s *Sites) Handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	s.handlers[path] = h
	s.mu.Unlock()
}

// Requests returns the requests received so far.
func (s *Sites) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// Requested reports whether a request for path (path and query, or just a
// path prefix ending in "*") reached either origin.
func (s *Sites) Requested(path string) bool {
	for _, r := range s.Requests() {
		if r.Path == path || (strings.HasSuffix(path, "*") && strings.HasPrefix(r.Path, strings.TrimSuffix(path, "*"))) {
			return true
		}
	}
	return false
}

func (s *Sites) handler(origin string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// The fixture fonts are not the page's requests: not logged.
		if serveFont(w, r) {
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.log = append(s.log, Request{Origin: origin, Method: r.Method, Path: r.URL.RequestURI(), Body: string(body), Header: r.Header.Clone()})
		h := s.handlers[r.URL.Path]
		s.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		s.serveFile(w, r)
	}
}

func (s *Sites) serveFile(w http.ResponseWriter, r *http.Request) {
	rel := filepath.FromSlash(strings.TrimPrefix(r.URL.Path, "/"))
	if strings.HasSuffix(r.URL.Path, "/") {
		rel = filepath.Join(rel, "index.html")
	}
	p := filepath.Join(s.root, filepath.Clean("/"+rel))
	if !strings.HasPrefix(p, s.root) {
		http.NotFound(w, r)
		return
	}
	if fi, err := os.Stat(p); err == nil && fi.IsDir() {
		p = filepath.Join(p, "index.html") // a folder is its index page, slash or not
	}
	if !strings.HasSuffix(p, ".html") {
		http.ServeFile(w, r, p)
		return
	}
	src, err := os.ReadFile(p)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	tmpl, err := template.New(filepath.Base(p)).Parse(string(src))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, s); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(withFonts(page.Bytes()))
}
