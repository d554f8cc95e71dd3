package websurfer

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/som"
)

// inFrame finds the id of the listed element with a role and name in the
// frame whose URL contains frame.
func (f *fixture) inFrame(frame, role, name string) int {
	f.t.Helper()
	for _, e := range f.s.last.Elements {
		if e.Role == role && e.Name == name && strings.Contains(e.Frame, frame) {
			return e.ID
		}
	}
	f.t.Fatalf("no %s %q in frame %s in the observation:\n%s", role, name, frame, f.s.last.Text())
	return 0
}

// TestPaddedFrameForms fills and submits the forms inside padded
// cross-origin frames (one zoomed, one nested in another cross-origin
// frame) through the model's tools: the clicks land on the Send buttons
// only if the frames' boxes are placed inside their iframes' padding.
func TestPaddedFrameForms(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/perception/padded.html")
	f.submitFrameForms("who=cross", "who=zoomed", "who=nested-cross")
}

// submitFrameForms fills and submits the frame-form.html forms of the
// frames whose URLs contain each of whos through the model's tools, and
// checks that each sent what was typed.
func (f *fixture) submitFrameForms(whos ...string) {
	f.t.Helper()
	t := f.t
	for _, who := range whos {
		name := strings.TrimPrefix(who, "who=")
		f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "Ada %s", "press_enter": false}`, f.inFrame(who, "textbox", "Name"), name))
		f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "Paris", "press_enter": false}`, f.inFrame(who, "textbox", "City")))
		f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.inFrame(who, "button", "Send")))
		var got url.Values
		var seen []string
		for _, r := range f.sites.Requests() {
			seen = append(seen, r.Origin+" "+r.Method+" "+r.Path)
			if r.Method == "POST" && r.Path == "/perception/submitted" {
				if v, err := url.ParseQuery(r.Body); err == nil && v.Get("who") == name {
					got = v
				}
			}
		}
		if got == nil {
			t.Fatalf("the form in the %s frame was not submitted; requests: %s", name, strings.Join(seen, ", "))
		}
		if got.Get("name") != "Ada "+name || got.Get("city") != "Paris" {
			t.Errorf("the %s frame's form sent %v", name, got)
		}
	}
}

// TestMultiSelectLine checks that a <select multiple> says which options
// are selected, none included, and a single select does not.
func TestMultiSelectLine(t *testing.T) {
	for _, c := range []struct {
		e    Element
		want string
	}{
		{Element{ID: 1, Role: "listbox", Name: "Colours", Options: []string{"Red", "Blue"}, Multiple: true, SelectedOptions: []string{"Blue"}}, `1 listbox "Colours" options=["Red","Blue"] selected=["Blue"]`},
		{Element{ID: 2, Role: "listbox", Name: "Sizes", Options: []string{"S", "L"}, Multiple: true}, `2 listbox "Sizes" options=["S","L"] selected=[]`},
		{Element{ID: 3, Role: "combobox", Name: "Ship", Value: "Express", Options: []string{"Standard", "Express"}}, `3 combobox "Ship" value="Express" options=["Standard","Express"]`},
	} {
		if got := c.e.Line(); got != c.want {
			t.Errorf("line() = %s\nwant     %s", got, c.want)
		}
	}
}

// TestNativeModalDialog checks that the page behind a native modal dialog
// is listed as covered by the dialog, with its controls' labels, that a
// click on it is refused naming the dialog, and that the dialog's own
// controls work.
func TestNativeModalDialog(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/perception/modal.html")
	search := f.id("textbox", "Search the site")
	email := f.id("textbox", "Email")
	for _, e := range obs.Elements {
		inDialog := e.Name == "Email" || e.Name == "Subscribe" || e.Name == "No thanks"
		if inDialog && e.Where != InViewport {
			t.Errorf("the dialog's own %s %q is %s", e.Role, e.Name, e.Where)
		}
		if !inDialog && (e.Where != Covered || e.CoveredBy != `dialog "Subscribe"` || e.CoverID != email) {
			t.Errorf("%s %q behind the modal dialog: %s, covered by %q (id %d)", e.Role, e.Name, e.Where, e.CoveredBy, e.CoverID)
		}
	}
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, search), fmt.Sprintf(`covered by dialog "Subscribe", id %d`, email))
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Archive")), `covered by dialog "Subscribe"`)
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "No thanks")))
	if f.js(`document.getElementById('dlg').open`) != false {
		t.Fatal("the dialog's button did not close it")
	}
	// Closed, the page is free again.
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Archive")))
	if f.js("location.pathname") != "/perception/aria.html" {
		t.Errorf("after the dialog closed, the link was not followed: %v", f.js("location.href"))
	}
}

// TestCrowdedPageMarksWhatItLists observes 1,200 links on one screen: the
// text lists what its budget allows and says how the rest are reached,
// and the set-of-mark image numbers only the listed ids: where only
// unlisted links are, the image is the page as painted, and no tag sits
// far from its box.
func TestCrowdedPageMarksWhatItLists(t *testing.T) {
	sites := browsertest.ServeSites(t)
	s := newSurfer(t, Config{})
	gotoPage(t, s, sites.A+"/perception/crowd.html")
	obs := observe(t, s)
	onScreen, lines := 0, 0
	for _, e := range obs.Elements {
		if e.Where == InViewport || e.Where == Covered {
			onScreen++
		}
	}
	for _, l := range strings.Split(obs.Text(), "\n") {
		if strings.HasPrefix(l, strconv.Itoa(lines+1)+" link ") {
			lines++
		}
	}
	if onScreen != 1200 || lines < 100 || lines >= 1200 || obs.marked != lines || obs.Unlisted[InViewport] != 1200-lines {
		t.Fatalf("%d on screen, %d listed, %d marked, %d unlisted", onScreen, lines, obs.marked, obs.Unlisted[InViewport])
	}
	if want := fmt.Sprintf("… and %d more on screen (ids %d-1200, not listed and not marked in the screenshot", 1200-lines, lines+1); !strings.Contains(obs.Text(), want) {
		t.Errorf("the text does not say the rest are neither listed nor marked (%q):\n%s", want, obs.Text())
	}
	// Below the listed links, out of reach of their tags, the image is the
	// page as painted.
	bottom := 0.0
	for id := 1; id <= lines; id++ {
		bottom = max(bottom, obs.refs[id].vis.Bottom())
	}
	raw, err := s.Screenshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got, err := jpeg.Decode(bytes.NewReader(obs.Image))
	if err != nil {
		t.Fatal(err)
	}
	want, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	below := image.Rect(0, int(bottom)+maxDetachCSS+24, 1280, 690)
	if below.Dy() < 200 {
		t.Fatalf("only %v is left below the listed links", below)
	}
	if d := meanDiff(got.(subImager).SubImage(below), want.(subImager).SubImage(below)); d > 0.5 {
		t.Errorf("below the listed links (%v) the image differs from the page by %.2f per channel: unlisted links are marked", below, d)
	}
	// Every tag drawn is near its box.
	var marks []som.Mark
	for id := 1; id <= lines; id++ {
		v := obs.refs[id].vis
		marks = append(marks, som.Mark{ID: id, Box: som.Rect{X: v.X, Y: v.Y, W: v.W, H: v.H}})
	}
	labels := som.Layout(got.Bounds(), marks, som.Options{Text: obs.texts, MaxDetach: maxDetach(som.Options{})})
	if m := som.Measure(got.Bounds(), labels); m.MaxDist > maxDetachCSS || m.Overlapping != 0 || m.Tags+m.Dropped != lines {
		t.Errorf("layout of the listed marks: %+v", m)
	}
}

type subImager interface {
	SubImage(image.Rectangle) image.Image
}

// TestNoteDropped checks the line that names the ids drawn without a
// number: before the element list, at most eight ids named, within the
// budget.
func TestNoteDropped(t *testing.T) {
	s := &Surfer{cfg: Config{TokenBudget: DefaultTokenBudget}}
	obs := &Observation{text: "observation 1: url \"u\" title \"t\"\nelements on screen (id role \"name\" state):\n1 link \"a\"\n"}
	s.noteDropped(obs, nil)
	if len(obs.Notes) != 0 {
		t.Fatalf("a note for no dropped tag: %v", obs.Notes)
	}
	s.noteDropped(obs, []int{3, 5, 7, 9, 11, 13, 15, 17, 19, 21})
	want := "observation 1: url \"u\" title \"t\"\nnote: no room near their boxes for the numbers of ids 3, 5, 7, 9, 11, 13, 15, 17 and 2 more in the screenshot (outlined only)\nelements on screen"
	if !strings.HasPrefix(obs.Text(), want) || len(obs.Notes) != 1 || obs.Tokens != tokensOf(obs.Text()) {
		t.Errorf("text:\n%s\nnotes %v, tokens %d", obs.Text(), obs.Notes, obs.Tokens)
	}
	// The longest note: four-digit ids.
	long := &Observation{text: obs.text}
	s.noteDropped(long, []int{1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011})
	if n := tokensOf("note: " + long.Notes[0]); n > droppedNoteTokens {
		t.Errorf("the note is %d tokens, over the %d kept for it", n, droppedNoteTokens)
	}
}

// TestSameProcessFrameUnderOverlay: an overlay of the page over a
// same-origin frame (which the browser runs in the page's process, and
// DOMSnapshot reads as a second document) covers the frame's controls,
// however many layers the frame paints: DOMSnapshot numbers the paint
// order across the page's documents (the frame's between its iframe and
// the layers the page paints after it).
func TestSameProcessFrameUnderOverlay(t *testing.T) {
	sites := browsertest.ServeSites(t)
	sites.Handle("/covered-frame", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Covered frame</title><body style="margin:0;font:16px sans-serif">
<iframe src="/covered-frame-child" style="position:absolute;left:0;top:0;width:400px;height:200px;border:0"></iframe>
<div style="position:absolute;left:0;top:0;width:400px;height:200px;background:rgba(0,0,0,.6);color:#fff;z-index:5">Cookie notice</div>
<button style="position:absolute;left:0;top:300px">Accept</button>`)
	})
	sites.Handle("/covered-frame-child", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><body style="margin:0">`+strings.Repeat(`<div style="position:relative;width:4px;height:1px"></div>`, 30)+
			`<button style="position:relative;z-index:3;width:300px;height:100px">In the frame</button>`)
	})
	s := newSurfer(t, Config{})
	gotoPage(t, s, sites.A+"/covered-frame")
	obs := observe(t, s)
	var found bool
	for _, e := range obs.Elements {
		switch e.Name {
		case "In the frame":
			found = true
			if e.Where != Covered || !strings.Contains(e.CoveredBy, "Cookie notice") {
				t.Errorf("the frame's button under the page's overlay: %s, covered by %q", e.Where, e.CoveredBy)
			}
		case "Accept":
			if e.Where != InViewport {
				t.Errorf("the page's own button is %s", e.Where)
			}
		}
	}
	if !found {
		t.Fatalf("the frame's button is not listed:\n%s", obs.Text())
	}
}
