package websurfer

import (
	"context"
	"strings"
	"testing"
)

func TestMarkdownKeepsTables(t *testing.T) {
	src := `<html><body><main><h1>Opening hours</h1>
<table><tr><th>Day</th><th>Hours</th></tr>
<tr><td>Saturday</td><td>10:00 to 14:00</td></tr>
<tr><td>Sunday</td><td><del>10:00 to 12:00</del> closed</td></tr>
<tr><td></td><td></td></tr></table></main></body></html>`
	md, err := htmlToMarkdown(context.Background(), src, "http://127.0.0.1/")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Opening hours", "| Day", "| Saturday | 10:00 to 14:00 |", "~~10:00 to 12:00~~ closed"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Saturday10:00") {
		t.Errorf("cells run together:\n%s", md)
	}
	if n := strings.Count(md, "\n|"); n != 4 { // header, separator, two rows; the empty row is dropped
		t.Errorf("want 4 table lines, got %d:\n%s", n, md)
	}
}

// TestMarkdownListsSelectOptions: a select's options are a list with the
// selected one marked, not run together ("Choose a colourRedGreenBlue").
func TestMarkdownListsSelectOptions(t *testing.T) {
	src := `<html><body><main><p>Pick one <select><option>Choose a colour</option><option>Red</option>
<option selected>Green</option><optgroup label="Dark"><option>Navy</option></optgroup></select> please.</p></main></body></html>`
	md, err := htmlToMarkdown(context.Background(), src, "http://127.0.0.1/")
	if err != nil {
		t.Fatal(err)
	}
	want := "(select: Choose a colour | Red | Green (selected) | Dark: Navy)"
	if !strings.Contains(md, want) || strings.Contains(md, "colourRed") {
		t.Errorf("markdown %q; want it to hold %q", md, want)
	}
}
