package recording

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/surfkit/surf/websurfer"
)

func TestServe(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<title>hi</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv, err := Serve(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get("http://" + srv.Addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "<title>hi</title>" {
		t.Errorf("served %q", body)
	}
	if _, err := Serve(filepath.Join(dir, "index.html"), 0); !errors.Is(err, ErrNotDir) {
		t.Errorf("serving a file: got %v, want ErrNotDir", err)
	}
	if _, err := Serve(filepath.Join(dir, "missing"), 0); !errors.Is(err, ErrNotDir) {
		t.Errorf("serving nothing: got %v, want ErrNotDir", err)
	}
}

func TestPageOf(t *testing.T) {
	if p := PageOf("http://a.test/", nil); p.URL != "http://a.test/" || p.Title != "" || p.Blocked != nil {
		t.Errorf("no observation: %+v", p)
	}
	obs := &websurfer.Observation{URL: "http://a.test/b", Title: "B"}
	obs.Blocked.Navigations = []string{"http://c.test/"}
	obs.Blocked.Requests, obs.Blocked.Hosts = 2, []string{"d.test", "e.test"}
	p := PageOf("http://a.test/", obs)
	if p.URL != "http://a.test/b" || p.Title != "B" || len(p.Blocked) != 2 || p.Blocked[1] != "2 subresource requests (hosts d.test, e.test)" {
		t.Errorf("got %+v", p)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{512: "512 B", 3482: "3.4 KiB", 12 << 20: "12.0 MiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
