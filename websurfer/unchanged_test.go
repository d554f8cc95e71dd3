package websurfer

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/perception"
)

// unchangedPage is a page with a button, a field, some text and (when the
// query asks for them) a same-origin frame, a canvas, another origin's
// frame or an animation.
func unchangedPage(sites *browsertest.Sites) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		extra := ""
		if q.Has("frame") {
			extra += `<iframe id="f" src="/unchanged-frame" width="300" height="80"></iframe>`
		}
		if q.Has("canvas") {
			extra += `<canvas width="50" height="50"></canvas>`
		}
		if q.Has("foreign") {
			extra += `<iframe src="` + sites.B + `/unchanged-frame" width="300" height="80"></iframe>`
		}
		if q.Has("spin") {
			extra += `<div style="width:20px;height:20px;background:red;animation:spin 1s linear infinite"></div>`
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Unchanged</title>
<style>@keyframes spin { to { transform: rotate(360deg); } } body { font: 16px sans-serif }</style></head><body>
<h1 id="h">Hello</h1><button id="b" onclick="document.getElementById('h').textContent = 'Clicked'">Press</button>
<input id="i" aria-label="Name"> %s
<div style="height: 3000px">tall</div></body></html>`, extra)
	}
}

func TestObserveUnchangedPageAgain(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/unchanged", unchangedPage(sites))
	sites.Handle("/unchanged-frame", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><p id="p">In the frame</p>`)
	})
	ctx := context.Background()

	// fresh opens the page and takes its first observation.
	fresh := func(t *testing.T, query string) (*Surfer, *Observation) {
		s := newSurfer(t, Config{})
		gotoPage(t, s, sites.A+"/unchanged"+query)
		return s, observe(t, s)
	}
	// again observes once more and reports whether it was handed out again.
	again := func(t *testing.T, s *Surfer, first *Observation) *Observation {
		t.Helper()
		o := observe(t, s)
		if o.Again && (o.Seq != first.Seq || o.Text() != first.Text() || !bytes.Equal(o.Image, first.Image)) {
			t.Errorf("an observation handed out again differs from the first: seq %d vs %d", o.Seq, first.Seq)
		}
		return o
	}

	t.Run("unchanged", func(t *testing.T) {
		s, first := fresh(t, "")
		if first.Again {
			t.Fatal("the first observation of a page is marked as handed out again")
		}
		o := again(t, s, first)
		if !o.Again {
			t.Fatal("an unchanged page was read again")
		}
		if _, err := s.Resolve(1); err != nil {
			t.Errorf("the ids of the observation handed out again do not resolve: %v", err)
		}
		if o2 := again(t, s, first); !o2.Again {
			t.Error("a third observation of the unchanged page was read again")
		}
		if f, err := s.ObserveFresh(ctx); err != nil || f.Again || f.Seq == first.Seq {
			t.Errorf("ObserveFresh handed out the old observation (again %v, seq %d, err %v)", f != nil && f.Again, f.Seq, err)
		}
	})

	// Each change the page makes by itself is seen.
	for _, c := range []struct{ name, query, script, want string }{
		{"text changed by the page", "", `() => { document.getElementById('h').textContent = 'Changed by a timer'; }`, "Changed by a timer"},
		{"attribute changed", "", `() => { document.getElementById('i').setAttribute('aria-label', 'Surname'); }`, "Surname"},
		{"scrolled by the page", "", `() => { scrollTo(0, 400); }`, ""},
		{"frame text changed", "?frame", `() => { document.getElementById('f').contentDocument.getElementById('p').textContent = 'Frame changed'; }`, "Frame changed"},
		{"value typed without a mutation", "", `() => { const i = document.getElementById('i'); i.value = 'Typed'; i.dispatchEvent(new Event('input')); }`, "Typed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, first := fresh(t, c.query)
			if c.query == "?frame" {
				// Let the frame load, then take the baseline.
				first = observe(t, s)
				if o := again(t, s, first); !o.Again {
					t.Fatal("a page with an unchanged same-origin frame was read again")
				}
			}
			if _, err := s.Page().Evaluate(c.script); err != nil {
				t.Fatal(err)
			}
			o := observe(t, s)
			if o.Again {
				t.Fatalf("a changed page was handed out again")
			}
			if c.want != "" && !strings.Contains(o.Text(), c.want) {
				t.Errorf("the new observation lacks %q", c.want)
			}
			if c.name == "scrolled by the page" && o.Viewport.Position == first.Viewport.Position {
				t.Errorf("the new observation has the old scroll position %v", o.Viewport.Position)
			}
		})
	}

	// An action always reads the page anew, and so does the observation
	// after it.
	t.Run("after an action", func(t *testing.T) {
		s, first := fresh(t, "")
		var press int
		for _, e := range first.Elements {
			if e.Name == "Press" {
				press = e.ID
			}
		}
		res, err := s.Click(ctx, press)
		if err != nil {
			t.Fatal(err)
		}
		if res.Observation.Again || !strings.Contains(res.Observation.Text(), "Clicked") {
			t.Fatalf("the click's observation was not read anew:\n%s", res.Observation.Text())
		}
		if o := observe(t, s); !o.Again {
			t.Error("the page unchanged since the click's observation was read again")
		}
	})

	// A change the page makes after its snapshot, while the observation is
	// still being made, is not counted as seen by it: the next observation
	// reads the page anew.
	t.Run("changed while read", func(t *testing.T) {
		s, _ := fresh(t, "")
		pg := s.Page()
		s.recordCapture = func(*perception.Capture, map[*cdpSession]map[cdp.BackendNodeID]*accessibility.Node, perception.RenderInput) {
			s.recordCapture = nil
			if _, err := pg.Evaluate(`() => { document.getElementById('h').textContent = 'Changed while read'; }`); err != nil {
				t.Error(err)
			}
		}
		read, err := s.ObserveFresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(read.Text(), "Changed while read") {
			t.Fatal("the change was made before the snapshot; the test does not test what it should")
		}
		o := observe(t, s)
		if o.Again || !strings.Contains(o.Text(), "Changed while read") {
			t.Errorf("a page changed while it was read was handed out again (again %v):\n%s", o.Again, o.Text())
		}
	})

	// Once the watch was read in a document's world, the next observation
	// only sends its script ahead of the snapshot; a new document the
	// renderer's count has not shown yet is found by its frame tree, and
	// its watch counts as not read, so nothing is handed out again.
	t.Run("read ahead", func(t *testing.T) {
		s, first := fresh(t, "")
		tb := s.tabs[s.active]
		at := tb.watchAt
		if at.dw.id == 0 || !first.watch.ok {
			t.Fatal("the first observation kept no world for its watch")
		}
		o, err := s.ObserveFresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !o.watch.ok || tb.watchAt != at {
			t.Fatalf("the watch read ahead: ok %v, world %+v, want %+v", o.watch.ok, tb.watchAt, at)
		}
		if o2 := observe(t, s); !o2.Again {
			t.Error("the page unchanged since a watch read ahead was read again")
		}
		// A new document, as if its commit were still on its way to surf.
		gotoPage(t, s, sites.A+"/unchanged?other")
		tb.watchAt.rnav = tb.rnav.Load()
		o, err = s.ObserveFresh(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if o.watch.ok || tb.watchAt.dw.id != 0 {
			t.Fatalf("the old document's watch was taken for the new one's (ok %v)", o.watch.ok)
		}
		if o2 := observe(t, s); o2.Again || !o2.watch.ok || tb.watchAt.dw.id == 0 || tb.watchAt.dw == at.dw {
			t.Errorf("after a watch not read: again %v, ok %v, world %+v (old %+v)", o2.Again, o2.watch.ok, tb.watchAt.dw, at.dw)
		}
	})

	// Pages that may change without the watch seeing it are always read.
	for _, q := range []string{"?canvas", "?foreign", "?spin"} {
		t.Run("never "+q, func(t *testing.T) {
			s, _ := fresh(t, q)
			observe(t, s)
			if o := observe(t, s); o.Again {
				t.Errorf("a page with %s was handed out again", q[1:])
			}
		})
	}

	// The watch is invisible to the page.
	t.Run("invisible", func(t *testing.T) {
		s, _ := fresh(t, "")
		v, err := s.Page().Evaluate(`() => typeof globalThis.__surfWatch`)
		if err != nil {
			t.Fatal(err)
		}
		if v != "undefined" {
			t.Errorf("the page sees surf's watch: typeof __surfWatch = %v", v)
		}
	})
}
