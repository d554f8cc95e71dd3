package websurfer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

// TestAXReadAhead checks the accessibility reads an observation sends
// ahead of knowing what it lists (axAhead): what they say is what the page
// says at the snapshot, not at the last observation; nodes gone are left
// out and new ones read; the observation lists exactly what it lists when
// nothing is sent ahead; and a new document gets none of the old one's.
func TestAXReadAhead(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/ahead", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><head><title>Ahead</title><style>body { font: 16px sans-serif }</style></head><body>
<h1>Reads ahead</h1>
<button id="rename" aria-label="Old name">A</button>
<button id="menu" aria-expanded="false">Menu</button>
<label><input id="agree" type="checkbox"> Agree</label>
<button id="hide">Soon hidden</button>
<button id="drop">Soon removed</button>
<a id="off" href="#x" disabled>Link</a>
<div id="more"></div>
<div style="height: 2000px">tall</div><button>Far below</button></body></html>`)
	})
	ctx := context.Background()
	s := newSurfer(t, Config{})
	gotoPage(t, s, sites.A+"/ahead")
	tb := s.tabs[s.active]

	first, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.axAhead != 0 {
		t.Fatalf("the first observation of a document took %d accessibility reads sent ahead", first.axAhead)
	}
	seen := len(tb.axSeen.ids)
	if seen == 0 {
		t.Fatal("the observation kept no accessibility nodes to read ahead")
	}
	names := func(o *Observation) []string {
		var out []string
		for _, e := range o.Elements {
			out = append(out, fmt.Sprintf("%s %q checked=%s expanded=%s disabled=%v where=%s", e.Role, e.Name, e.Checked, e.Expanded, e.Disabled, e.Where))
		}
		return out
	}
	has := func(o *Observation, sub string) bool {
		return slices.ContainsFunc(names(o), func(n string) bool { return strings.Contains(n, sub) })
	}
	for _, want := range []string{`"Old name"`, `"Soon hidden"`, `"Soon removed"`, `"Menu"`} {
		if !has(first, want) {
			t.Fatalf("the first observation lacks %s:\n%s", want, strings.Join(names(first), "\n"))
		}
	}

	// Every kind of change the accessibility tree reports, made after the
	// last observation: the reads sent ahead must see them.
	if _, err := s.Page().Evaluate(`() => {
		document.getElementById('rename').setAttribute('aria-label', 'New name');
		document.getElementById('menu').setAttribute('aria-expanded', 'true');
		document.getElementById('agree').checked = true;
		document.getElementById('hide').setAttribute('aria-hidden', 'true');
		document.getElementById('drop').remove();
		const b = document.createElement('button');
		b.textContent = 'Newly added';
		document.getElementById('more').append(b);
	}`); err != nil {
		t.Fatal(err)
	}
	ahead, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ahead.axAhead == 0 || ahead.axSent != seen {
		t.Fatalf("the second observation of the document sent %d accessibility reads ahead (want %d, one per node the first read) and took %d", ahead.axSent, seen, ahead.axAhead)
	}
	for _, c := range []struct {
		sub  string
		want bool
	}{
		{`"New name"`, true}, {`"Old name"`, false},
		{`"Soon hidden"`, false}, {`"Soon removed"`, false},
		{`"Newly added"`, true},
	} {
		if has(ahead, c.sub) != c.want {
			t.Errorf("listed %s: %v, want %v:\n%s", c.sub, !c.want, c.want, strings.Join(names(ahead), "\n"))
		}
	}
	if !has(ahead, `"Menu" checked= expanded=true`) || !has(ahead, `checkbox "Agree" checked=true`) {
		t.Errorf("the states changed since the last observation are not seen:\n%s", strings.Join(names(ahead), "\n"))
	}

	// The same page read with nothing sent ahead lists the same.
	tb.axSeen = seenNodes{}
	plain, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plain.axAhead != 0 {
		t.Fatalf("an observation with nothing sent ahead took %d reads from ahead", plain.axAhead)
	}
	if a, p := names(ahead), names(plain); !slices.Equal(a, p) {
		t.Errorf("read ahead, the observation lists\n%s\nread after the snapshot\n%s", strings.Join(a, "\n"), strings.Join(p, "\n"))
	}

	// A new document: nothing of the old one's is sent.
	gotoPage(t, s, sites.A+"/ahead?again")
	other, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if other.axSent != 0 || other.axAhead != 0 {
		t.Errorf("a new document's observation sent %d reads ahead for the old one's nodes, and took %d", other.axSent, other.axAhead)
	}
	if !has(other, `"Old name"`) || !has(other, `"Soon removed"`) {
		t.Errorf("the new document's observation:\n%s", strings.Join(names(other), "\n"))
	}
}

// TestFrameBoxesReadAhead checks the frame-box reads an observation sends
// ahead (boxAhead): an iframe moved, padded or zoomed since the last
// observation places its elements where they are at the snapshot; an
// iframe added is read as before; the same page read with nothing sent
// ahead places every element alike; and a new document gets none of the
// old one's reads.
func TestFrameBoxesReadAhead(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/boxes", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><html><head><title>Boxes</title><style>body { margin: 0; font: 16px sans-serif } iframe { border: 0; width: 300px; height: 120px; display: block }</style></head><body>
<div id="spacer" style="height: 40px"></div>
<iframe id="one" srcdoc="<body style='margin:0'><button>Inside one</button></body>"></iframe>
<iframe id="two" srcdoc="<body style='margin:0'><button>Inside two</button></body>"></iframe>
<div id="more"></div></body></html>`)
	})
	ctx := context.Background()
	s := newSurfer(t, Config{})
	gotoPage(t, s, sites.A+"/boxes")
	tb := s.tabs[s.active]
	box := func(o *Observation, name string) Box {
		t.Helper()
		for _, e := range o.Elements {
			if e.Name == name {
				return e.Box
			}
		}
		t.Fatalf("no element %q among %+v", name, o.Elements)
		return Box{}
	}

	first, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if first.boxSent != 0 || first.boxAhead != 0 {
		t.Fatalf("the first observation of a document sent %d frame-box reads ahead and took %d", first.boxSent, first.boxAhead)
	}
	if len(tb.boxSeen.ids) != 2 {
		t.Fatalf("the observation kept %d iframe elements to read ahead, want 2", len(tb.boxSeen.ids))
	}
	if b := box(first, "Inside one"); b.Y != 40 {
		t.Fatalf("the first iframe's button is at %+v, want y 40", b)
	}

	// Moved, padded and zoomed since: the reads ahead must see it.
	if _, err := s.Page().Evaluate(`() => {
		document.getElementById('spacer').style.height = '100px';
		document.getElementById('one').style.padding = '10px 0 0 30px';
		document.getElementById('two').style.zoom = '2';
		const f = document.createElement('iframe');
		f.srcdoc = "<body style='margin:0'><button>Inside three</button></body>";
		document.getElementById('more').append(f);
	}`); err != nil {
		t.Fatal(err)
	}
	if err := s.Page().Locator("iframe >> nth=2").ContentFrame().GetByText("Inside three").WaitFor(); err != nil {
		t.Fatal(err)
	}
	ahead, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ahead.boxSent != 2 || ahead.boxAhead != 2 {
		t.Fatalf("the second observation sent %d frame-box reads ahead and took %d, want 2 and 2", ahead.boxSent, ahead.boxAhead)
	}
	one, two := box(ahead, "Inside one"), box(ahead, "Inside two")
	if one.X != 30 || one.Y != 110 {
		t.Errorf("the moved, padded iframe's button is at %+v, want (30, 110)", one)
	}
	if two.Y != 230 || two.W <= box(first, "Inside two").W*1.5 {
		t.Errorf("the moved, zoomed iframe's button is at %+v (it was %+v), want y 230 (100 + 120 + 10) and twice as wide", two, box(first, "Inside two"))
	}
	box(ahead, "Inside three")

	// The same page read with nothing sent ahead places them alike.
	tb.boxSeen = seenNodes{}
	plain, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if plain.boxSent != 0 {
		t.Fatalf("an observation with nothing kept sent %d frame-box reads ahead", plain.boxSent)
	}
	for _, name := range []string{"Inside one", "Inside two", "Inside three"} {
		if a, p := box(ahead, name), box(plain, name); a != p {
			t.Errorf("%s: read ahead at %+v, read after the snapshot at %+v", name, a, p)
		}
	}

	// A new document: nothing of the old one's is sent.
	gotoPage(t, s, sites.A+"/boxes?again")
	other, err := s.ObserveFresh(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if other.boxSent != 0 || other.boxAhead != 0 {
		t.Errorf("a new document's observation sent %d frame-box reads ahead for the old one's iframes, and took %d", other.boxSent, other.boxAhead)
	}
	if b := box(other, "Inside one"); b.Y != 40 {
		t.Errorf("the new document's first iframe's button is at %+v, want y 40", b)
	}
}
