package websurfer

import (
	"fmt"
	"strings"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

// TestScrollSideways reaches a card scrolled out of view to the right of a
// carousel by scrolling the carousel sideways, and clicks it; then scrolls
// the page itself, which is wider than the window, right and back.
func TestScrollSideways(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/perception/hscroll.html")
	offers := f.id("region", "Offers")
	var braga *Element
	for i, e := range obs.Elements {
		if e.Name == "Book Braga" {
			braga = &obs.Elements[i]
		}
	}
	if braga == nil {
		t.Fatalf("the last card's button is not listed:\n%s", obs.Text())
	}
	if braga.Where != Clipped || braga.Container != offers || braga.ClippedSide != Right {
		t.Errorf("the last card's button should be clipped to the right inside %d: %+v", offers, *braga)
	}
	if want := fmt.Sprintf("(inside %d, to the right)", offers); !strings.Contains(obs.Text(), want) {
		t.Errorf("the observation does not say %q:\n%s", want, obs.Text())
	}
	for _, name := range []string{"scroll_element_left", "scroll_element_right", "page_right"} {
		if !contains(f.s.Offered(), name) {
			t.Errorf("%s is not offered: %v", name, f.s.Offered())
		}
	}
	if contains(f.s.Offered(), "page_left") {
		t.Errorf("page_left is offered at the left edge: %v", f.s.Offered())
	}
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, braga.ID), "with scroll_element_right")

	for i := 0; i < 4 && f.where("Book Braga") != InViewport; i++ {
		f.ok("scroll_element_right", fmt.Sprintf(`{"target_id": %d}`, f.id("region", "Offers")))
	}
	if left, _ := f.js(`document.getElementById('cards').scrollLeft`).(int); left == 0 {
		t.Fatal("the carousel did not scroll sideways")
	}
	if f.js("scrollX") != 0 {
		t.Errorf("the page scrolled sideways instead of the carousel")
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Book Braga")))
	if got := f.js(`document.getElementById('log').textContent`); got != "booked Braga" {
		t.Errorf("after scrolling the carousel, the page logged %v", got)
	}
	f.ok("scroll_element_left", fmt.Sprintf(`{"target_id": %d}`, f.id("region", "Offers")))

	// The page: the far link is off to the right until page_right.
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Far right link")), "page_right")
	if !strings.Contains(f.s.last.Text(), "more to the right") {
		t.Errorf("the viewport line does not say the page is wider:\n%s", f.s.last.Text())
	}
	for i := 0; i < 3 && contains(f.s.Offered(), "page_right"); i++ {
		f.ok("page_right", `{}`)
	}
	if x, _ := f.js("scrollX").(int); x == 0 {
		t.Fatal("page_right did not scroll the page")
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Far right link")))
	if got := f.js(`document.getElementById('log').textContent`); got != "booked far" {
		t.Errorf("the far link: the page logged %v", got)
	}
	for i := 0; i < 3 && contains(f.s.Offered(), "page_left"); i++ {
		f.ok("page_left", `{}`)
	}
	if got := f.js("scrollX"); got != 0 {
		t.Errorf("page_left scrolled back to %v", got)
	}
	f.fail("page_left", `{}`, "not available")
}

// TestSidewaysToolsOnlyWhereTheyScroll: a page with a box that scrolls only
// up and down offers no sideways tool.
func TestSidewaysToolsOnlyWhereTheyScroll(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/inner-scroll.html")
	if !contains(f.s.Offered(), "scroll_element_down") {
		t.Fatalf("the vertical box is not scrollable: %v", f.s.Offered())
	}
	for _, name := range []string{"scroll_element_left", "scroll_element_right", "page_left", "page_right"} {
		if contains(f.s.Offered(), name) {
			t.Errorf("%s is offered: %v", name, f.s.Offered())
		}
	}
}

// where is the location of the listed element with a name.
func (f *fixture) where(name string) Location {
	f.t.Helper()
	for _, e := range f.s.last.Elements {
		if e.Name == name {
			return e.Where
		}
	}
	f.t.Fatalf("no element %q in the observation:\n%s", name, f.s.last.Text())
	return ""
}
