// Package demosite is the small library website "surf demo" and the CLI's
// tests serve on loopback, and the scripted tour "surf demo" takes of it.
//
// Start serves the site; a Tour walks it with an open surfer and a
// journal:
//
//	site, err := demosite.Start()
//	defer site.Close()
//	tour := &demosite.Tour{Surfer: s, Journal: j, URL: site.URL, Out: os.Stdout}
//	err = tour.Run(ctx)
package demosite

import (
	"embed"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
)

//go:embed site/*.html
var files embed.FS

var pages = template.Must(template.ParseFS(files, "site/*.html"))

// Branch is a library branch.
type Branch struct {
	ID      string
	Name    string
	Address string
	Hours   []Hours
}

// Hours is a day's opening hours.
type Hours struct{ Day, Time string }

// Branches are the site's content.
var Branches = []Branch{
	{ID: "harbour", Name: "Harbour Branch", Address: "12 Quay Street", Hours: []Hours{
		{"Monday", "9:00 to 17:00"}, {"Tuesday", "9:00 to 17:00"}, {"Wednesday", "9:00 to 20:00"},
		{"Thursday", "9:00 to 17:00"}, {"Friday", "9:00 to 17:00"}, {"Saturday", "10:00 to 14:00"}, {"Sunday", "closed"},
	}},
	{ID: "central", Name: "Central Library", Address: "1 Market Square", Hours: []Hours{
		{"Monday", "8:00 to 20:00"}, {"Tuesday", "8:00 to 20:00"}, {"Wednesday", "8:00 to 20:00"},
		{"Thursday", "8:00 to 20:00"}, {"Friday", "8:00 to 18:00"}, {"Saturday", "10:00 to 16:00"}, {"Sunday", "closed"},
	}},
	{ID: "hill", Name: "Hill Street Reading Room", Address: "40 Hill Street", Hours: []Hours{
		{"Monday", "closed"}, {"Tuesday", "10:00 to 16:00"}, {"Wednesday", "10:00 to 16:00"},
		{"Thursday", "10:00 to 16:00"}, {"Friday", "10:00 to 16:00"}, {"Saturday", "closed"}, {"Sunday", "closed"},
	}},
}

type result struct{ Name, URL, Summary string }

// Handler serves the site: a search form, results, branch pages with a
// select, a link that opens a new tab and a download.
func Handler() http.Handler {
	mux := http.NewServeMux()
	render := func(w http.ResponseWriter, name string, data map[string]any) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := pages.ExecuteTemplate(w, name, data); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	}
	find := func(id string) (Branch, bool) {
		for _, b := range Branches {
			if b.ID == id {
				return b, true
			}
		}
		return Branch{}, false
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, "home.html", map[string]any{"Title": "Riverside Library"})
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.TrimSpace(r.URL.Query().Get("q"))
		var res []result
		words := strings.Fields(strings.ToLower(q))
		for _, b := range Branches {
			text := strings.ToLower(b.Name + " " + b.Address + " opening hours branch library")
			match := len(words) > 0
			for _, w := range words {
				if !strings.Contains(text, w) {
					match = false
				}
			}
			if match {
				res = append(res, result{Name: b.Name, URL: "/branch/" + b.ID, Summary: b.Address + ": opening hours, map and timetable"})
			}
		}
		render(w, "search.html", map[string]any{"Title": fmt.Sprintf("Search: %s - Riverside Library", q), "Query": q, "Results": res})
	})
	mux.HandleFunc("GET /branches", func(w http.ResponseWriter, r *http.Request) {
		render(w, "branches.html", map[string]any{"Title": "Branches - Riverside Library", "Branches": Branches})
	})
	mux.HandleFunc("GET /branch/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, ok := find(r.PathValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		render(w, "branch.html", map[string]any{"Title": b.Name + " - Riverside Library", "Branch": b})
	})
	mux.HandleFunc("GET /map/{id}", func(w http.ResponseWriter, r *http.Request) {
		b, ok := find(r.PathValue("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		render(w, "map.html", map[string]any{"Title": "Map: " + b.Name, "Branch": b})
	})
	mux.HandleFunc("GET /timetable/{file}", func(w http.ResponseWriter, r *http.Request) {
		b, ok := find(strings.TrimSuffix(r.PathValue("file"), ".csv"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-timetable.csv"`, b.ID))
		fmt.Fprintln(w, "day,hours")
		for _, h := range b.Hours {
			fmt.Fprintf(w, "%s,%s\n", h.Day, h.Time)
		}
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	return mux
}

// Server is the site running on loopback.
type Server struct {
	srv *httptest.Server
	// URL is the site's origin, such as http://127.0.0.1:41234.
	URL string
	// Host is the host:port the policy must allow.
	Host string
}

// Start serves the site on a free loopback port.
func Start() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("serving the demo site: %w", err)
	}
	srv := httptest.NewUnstartedServer(Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return &Server{srv: srv, URL: srv.URL, Host: ln.Addr().String()}, nil
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }
