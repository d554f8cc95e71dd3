// Package benchsite is the small static website "surf bench actions" serves
// on loopback to time each kind of browser action: a start page with a
// link, a button that changes the page in place, a search form that submits
// to a results page and a select, plus a second page and a long page to
// scroll.
package benchsite

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strings"
)

//go:embed site/*.html
var files embed.FS

var pages = template.Must(template.ParseFS(files, "site/*.html"))

// Paths of the site's pages.
const (
	Start   = "/"        // "Bench start": link "Next page", button "Show details", textbox "Search", combobox "Colour"
	Next    = "/next"    // "Second page"
	Results = "/results" // "Results for Q", the search form's target (GET, q=)
	Long    = "/long"    // "Long read": 40 sections, many screens high
)

// LongSections is the number of sections of the long page.
const LongSections = 40

type section struct {
	N    int
	Text string
}

// Handler serves the site. Unknown paths are 404.
func Handler() http.Handler {
	mux := http.NewServeMux()
	render := func(w http.ResponseWriter, name string, data any) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := pages.ExecuteTemplate(w, name, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { render(w, "start.html", nil) })
	mux.HandleFunc("GET "+Next, func(w http.ResponseWriter, r *http.Request) { render(w, "next.html", nil) })
	mux.HandleFunc("GET "+Results, func(w http.ResponseWriter, r *http.Request) {
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		var res []string
		for i := 1; i <= 3; i++ {
			res = append(res, fmt.Sprintf("%s, result %d", q, i))
		}
		render(w, "results.html", map[string]any{"Q": q, "Results": res})
	})
	mux.HandleFunc("GET "+Long, func(w http.ResponseWriter, r *http.Request) {
		var s []section
		for i := 1; i <= LongSections; i++ {
			s = append(s, section{N: i, Text: strings.Repeat(fmt.Sprintf("Section %d goes on about one thing and then another, as long pages do. ", i), 4)})
		}
		render(w, "long.html", map[string]any{"Sections": s})
	})
	return mux
}

// StartServer serves the site on 127.0.0.1 (a free port); Close it when done.
func StartServer() *httptest.Server {
	return httptest.NewServer(Handler())
}
