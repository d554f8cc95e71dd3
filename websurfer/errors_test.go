package websurfer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// The causes of a refused action a caller branches on are typed errors;
// each is a tool error whose text is the one the model has always read.
// These tests call the actions on fixture pages and check both.

// refused checks that err is a tool error whose text is want, and that the
// same call through the tool registry (unless tool is "") gives the model
// that text.
func (f *fixture) refused(err error, want, tool, args string) {
	f.t.Helper()
	if err == nil {
		f.t.Fatalf("%s(%s) succeeded; want %q", tool, args, want)
	}
	if !tools.IsToolError(err) {
		f.t.Fatalf("%s(%s): %v is not a tool error", tool, args, err)
	}
	if err.Error() != want {
		f.t.Errorf("%s(%s) error\n got %q\nwant %q", tool, args, err.Error(), want)
	}
	if tool == "" {
		return
	}
	if res := f.call(tool, args); !res.IsError || res.Text != want {
		f.t.Errorf("%s(%s) through the registry: error=%v\n got %q\nwant %q", tool, args, res.IsError, res.Text, want)
	}
}

// causes are the sentinels of refused actions: an error matches one.
var causes = []error{ErrStale, ErrNoElement, ErrCovered, ErrOffscreen, ErrNotEditable, ErrDenied}

// cause checks that err matches sentinel and no other cause, and returns
// its typed form.
func cause[T error](t *testing.T, err error, sentinel error) T {
	t.Helper()
	for _, c := range causes {
		if got := errors.Is(err, c); got != (c == sentinel) {
			t.Errorf("errors.Is(%q, %v) = %v", err, c, got)
		}
	}
	var e T
	if !errors.As(err, &e) {
		t.Fatalf("%q is not a %T", err, e)
	}
	return e
}

// fieldsPage has fields that take no input.
const fieldsPage = `<!doctype html><title>Fields</title>
<label>Locked <input id=locked disabled value=x></label>
<label>Fixed <input id=fixed readonly value=y></label>
<label>Open <input id=open></label>`

func serveFields(sites *browsertest.Sites) {
	sites.Handle("/errors/fields", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, fieldsPage) })
}

func TestActionErrorCovered(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/covered.html")
	ctx := context.Background()
	buy, accept := f.id("button", "Buy now"), f.id("button", "Accept cookies")
	want := fmt.Sprintf(`element %d button "Buy now" is covered by dialog "Cookie consent", id %d; deal with that first (for example close or accept it)`, buy, accept)
	for _, c := range []struct {
		tool string
		do   func() (*ActionResult, error)
	}{
		{"click", func() (*ActionResult, error) { return f.s.Click(ctx, buy) }},
		{"hover", func() (*ActionResult, error) { return f.s.Hover(ctx, buy) }},
	} {
		_, err := c.do()
		f.refused(err, want, c.tool, fmt.Sprintf(`{"target_id": %d}`, buy))
		got := *cause[*CoveredError](t, err, ErrCovered)
		if w := (CoveredError{ID: buy, Role: "button", Name: "Buy now", By: `dialog "Cookie consent"`, ByID: accept}); got != w {
			t.Errorf("%s: %+v; want %+v", c.tool, got, w)
		}
	}
	if f.js("document.title") == "bought" {
		t.Fatal("the covered button was clicked")
	}
}

func TestActionErrorOffscreen(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	ctx := context.Background()
	f.visit("/actions/long.html")
	bottom := f.id("button", "Bottom button")
	_, err := f.s.Click(ctx, bottom)
	f.refused(err, fmt.Sprintf(`element %d button "Bottom button" is below the viewport; scroll to it first (page_down)`, bottom), "click", fmt.Sprintf(`{"target_id": %d}`, bottom))
	if e := cause[*OffscreenError](t, err, ErrOffscreen); e.ID != bottom || e.Where != Below || e.Scroll != "page_down" || e.Container != 0 {
		t.Errorf("below: %+v", e)
	}

	f.visit("/actions/inner-scroll.html")
	deep, box := f.id("button", "Deep button"), f.id("log", "Messages")
	_, err = f.s.Click(ctx, deep)
	f.refused(err, fmt.Sprintf(`element %d button "Deep button" is scrolled out of view inside element %d; scroll that element first with scroll_element_down`, deep, box), "click", fmt.Sprintf(`{"target_id": %d}`, deep))
	if e := cause[*OffscreenError](t, err, ErrOffscreen); e.ID != deep || e.Where != Clipped || e.Container != box || e.Scroll != "scroll_element_down" {
		t.Errorf("clipped: %+v", e)
	}
	// The wheel turns only over an element on screen.
	_, err = f.s.ScrollElement(ctx, deep, 1)
	f.refused(err, fmt.Sprintf(`element %d button "Deep button" is not on screen (clipped); scroll the page to it first`, deep), "scroll_element_down", fmt.Sprintf(`{"target_id": %d}`, deep))
	if e := cause[*OffscreenError](t, err, ErrOffscreen); e.ID != deep || e.Where != Clipped || e.Container != box {
		t.Errorf("wheel: %+v", e)
	}
}

func TestActionErrorStaleAndUnknown(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	ctx := context.Background()
	_, err := f.s.Click(ctx, 1)
	// Before the first observation click is not offered: no registry call.
	f.refused(err, "there is no element 1: nothing has been observed yet", "", "")
	if e := cause[*NoElementError](t, err, ErrNoElement); *e != (NoElementError{ID: 1}) {
		t.Errorf("before any observation: %+v", e)
	}

	obs := f.visit("/actions/form.html")
	n := len(obs.Elements)
	_, err = f.s.Click(ctx, 999)
	f.refused(err, fmt.Sprintf("there is no element 999 in the latest observation (ids 1-%d)", n), "click", `{"target_id": 999}`)
	if e := cause[*NoElementError](t, err, ErrNoElement); *e != (NoElementError{ID: 999, Seq: obs.Seq, Count: n}) {
		t.Errorf("unknown id: %+v", e)
	}
	if _, err := f.s.Resolve(999); !errors.Is(err, ErrNoElement) {
		t.Errorf("Resolve(999): %v", err)
	}

	if _, err := f.s.Page().Goto(f.sites.A + "/actions/select.html"); err != nil {
		t.Fatal(err)
	}
	_, err = f.s.Click(ctx, 1)
	f.refused(err, fmt.Sprintf("element 1 is from observation %[1]d, but the page has navigated since (observe again); use the ids of observation %[1]d", obs.Seq), "click", `{"target_id": 1}`)
	if e := cause[*StaleError](t, err, ErrStale); e.ID != 1 || e.Seq != obs.Seq {
		t.Errorf("stale: %+v", e)
	}
}

func TestActionErrorDenied(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveFields(sites)
	pol := secretPolicy(t, sites, policy.ActionRule{Rule: "no-clicks", Tools: []string{"click"}, Verdict: policy.Deny})
	f := newFixtureOn(t, sites, Config{Policy: pol}, sandbox.SessionConfig{})
	ctx := context.Background()
	f.visit("/actions/form.html")

	_, err := f.s.VisitURL(ctx, "http://127.0.0.9:1/secret")
	f.refused(err, `denied: 127.0.0.9 is a private address (loopback) (rule private-networks)`, "visit_url", `{"url": "http://127.0.0.9:1/secret"}`)
	if e := cause[*policy.DeniedError](t, err, ErrDenied); e.Rule != "private-networks" || e.URL != "http://127.0.0.9:1/secret" {
		t.Errorf("denied visit: %+v", e)
	}

	search := f.id("button", "Search")
	_, err = f.s.Click(ctx, search)
	f.refused(err, `denied: click on button "Search" is not allowed (rule no-clicks)`, "click", fmt.Sprintf(`{"target_id": %d}`, search))
	if e := cause[*policy.DeniedError](t, err, policy.ErrDenied); e.Rule != "no-clicks" {
		t.Errorf("denied click: %+v", e)
	}

	// A secret typed on a host that is not the secret's.
	f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, sites.B+"/errors/fields"))
	open := f.id("textbox", "Open")
	_, err = f.s.InputText(ctx, open, "<secret:PASSWORD>", false, true)
	f.refused(err, "secret PASSWORD may not be used on 127.0.0.2", "input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "<secret:PASSWORD>", "press_enter": false}`, open))
	if e := cause[*policy.SecretError](t, err, ErrDenied); e.Name != "PASSWORD" || e.Host != "127.0.0.2" {
		t.Errorf("denied secret: %+v", e)
	}
}

func TestActionErrorNotEditable(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveFields(sites)
	f := newFixtureOn(t, sites, Config{Policy: secretPolicy(t, sites)}, sandbox.SessionConfig{})
	ctx := context.Background()
	f.visit("/errors/fields")
	locked, fixed := f.id("textbox", "Locked"), f.id("textbox", "Fixed")
	for _, c := range []struct {
		id   int
		text string
		want string
		is   NotEditableError
	}{
		{locked, "abc", fmt.Sprintf(`element %d textbox "Locked" is disabled; it takes no input`, locked), NotEditableError{ID: locked, Role: "textbox", Name: "Locked", Disabled: true}},
		{fixed, "abc", fmt.Sprintf(`element %d textbox "Fixed" is read-only; it takes no input`, fixed), NotEditableError{ID: fixed, Role: "textbox", Name: "Fixed", Readonly: true}},
		{fixed, "<secret:PASSWORD>", fmt.Sprintf(`element %d textbox "Fixed" is read-only; it takes no input`, fixed), NotEditableError{ID: fixed, Role: "textbox", Name: "Fixed", Readonly: true}},
	} {
		_, err := f.s.InputText(ctx, c.id, c.text, false, true)
		f.refused(err, c.want, "input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": %q, "press_enter": false}`, c.id, c.text))
		if e := cause[*NotEditableError](t, err, ErrNotEditable); *e != c.is {
			t.Errorf("%q into %d: %+v; want %+v", c.text, c.id, e, c.is)
		}
	}
	// A field the page made read-only after it was observed: the page
	// itself refuses the secret.
	open := f.id("textbox", "Open")
	f.js(`document.getElementById('open').readOnly = true`)
	_, err := f.s.InputText(ctx, open, "<secret:PASSWORD>", false, true)
	f.refused(err, fmt.Sprintf(`element %d textbox "Open" is disabled or read-only; it takes no input`, open), "input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "<secret:PASSWORD>", "press_enter": false}`, open))
	if e := cause[*NotEditableError](t, err, ErrNotEditable); *e != (NotEditableError{ID: open, Role: "textbox", Name: "Open"}) {
		t.Errorf("refused by the page: %+v", e)
	}
	if got := f.js(`document.getElementById('open').value`); got != "" {
		t.Errorf("the read-only field holds %q", got)
	}
}
