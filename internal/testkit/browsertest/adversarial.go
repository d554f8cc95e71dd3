package browsertest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"text/template"
)

// ServeAdversarial serves pages of testdata/adversarial under
// /adversarial/NAME on both origins, as templates of the sites ({{.A}},
// {{.B}}): the pages whose attacks are on what surf does in a page (secrets,
// focus, action rules) rather than on the network.
func (s *Sites) ServeAdversarial(t testing.TB, names ...string) {
	t.Helper()
	for _, name := range names {
		src, err := os.ReadFile(filepath.Join(RepoRoot(), "testdata", "adversarial", name))
		if err != nil {
			t.Fatal(err)
		}
		tmpl, err := template.New(name).Parse(string(src))
		if err != nil {
			t.Fatal(err)
		}
		s.Handle("/adversarial/"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			if err := tmpl.Execute(w, s); err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
			}
		})
	}
}
