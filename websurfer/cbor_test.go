package websurfer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

// TestSnapshotReadFromCBOR checks that an observation reads the page's
// snapshot from the browser's CBOR (the relay's pipe speaks it), not from
// a conversion to JSON, and reads every kind of string right: 16-bit
// strings (CJK, emoji), Latin-1 and escapes.
func TestSnapshotReadFromCBOR(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/cbor", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>CBOR 日本語</title></head><body>
<h1>Grüße, 日本語 😀</h1><button>Café "quoted" \ back</button><a href="#x">עברית link</a></body></html>`)
	})
	ctx := context.Background()
	s := newSurfer(t, Config{})
	gotoPage(t, s, sites.A+"/cbor")
	before := snapshotsFromCBOR.Load()
	obs, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snapshotsFromCBOR.Load() == before {
		t.Error("the observation did not decode its snapshot from CBOR")
	}
	text := obs.Text()
	for _, want := range []string{"CBOR 日本語", "Grüße, 日本語 😀", `Café "quoted" \ back`, "עברית link"} {
		if !strings.Contains(text, want) {
			t.Errorf("the observation lacks %q:\n%s", want, text)
		}
	}
}
