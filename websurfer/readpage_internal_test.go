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
