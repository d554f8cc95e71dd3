package websurfer

import (
	"fmt"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

// TestNativeSelectAcrossDocuments chooses in native selects of several
// documents in one tab: after a choice (or a scroll) in one document, a
// choice in the next one must run in that document's own script world,
// and so must one in a document the tab comes back to.
func TestNativeSelectAcrossDocuments(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	choose := func(role, name, option string) {
		t.Helper()
		f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "option": %q}`, f.id(role, name), option))
	}

	f.visit("/actions/select.html")
	choose("combobox", "Colour", "Green")
	if got := f.js(`document.getElementById('log').textContent`); got != "native:g" {
		t.Fatalf("first document: %v", got)
	}

	// A second document of the same tab (and frame).
	f.visit("/actions/select-next.html")
	choose("combobox", "Size", "Large")
	if got := f.js(`document.getElementById('log').textContent`); got != "size:l" {
		t.Errorf("second document: %v", got)
	}

	// Back to the first: the browser may restore that very document.
	f.ok("history_back", `{}`)
	choose("combobox", "Colour", "Blue")
	if got := f.js(`document.getElementById('colour').value`); got != "b" {
		t.Errorf("the first document again: %v", got)
	}

	// A scroll runs in the page's world too, then a select in a new document.
	f.visit("/actions/long.html")
	f.ok("page_down", `{}`)
	f.visit("/actions/select-next.html")
	choose("combobox", "Size", "Medium")
	if got := f.js(`document.getElementById('log').textContent`); got != "size:m" {
		t.Errorf("after a scroll in another document: %v", got)
	}
}
