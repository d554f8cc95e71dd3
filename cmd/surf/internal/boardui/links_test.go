package boardui_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/boardui"
)

// TestLinks: the header links to the pages Config.Links names, their
// text escaped; a link that is not a path of the same server is refused
// and makes no page.
func TestLinks(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx)
	for _, bad := range []boardui.Link{
		{Text: "elsewhere", Path: "https://evil.example/"},
		{Text: "elsewhere", Path: "//evil.example/"},
		{Text: "relative", Path: "live/"},
		{Text: "script", Path: "javascript:alert(1)"},
		{Text: " ", Path: "/live/"},
	} {
		if ui, err := boardui.New(ctx, boardui.Config{Board: b, Links: []boardui.Link{bad}}); err == nil {
			ui.Close()
			t.Errorf("New accepted the link %+v", bad)
		}
	}
	ui, err := boardui.New(ctx, boardui.Config{Board: b, Links: []boardui.Link{{Text: "<b>this</b> server's live view", Path: "/live/"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ui.Close()
	rec := httptest.NewRecorder()
	ui.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /: %d", rec.Code)
	}
	want := `<nav class="links"><a href="/live/">&lt;b&gt;this&lt;/b&gt; server&#39;s live view</a></nav></header>`
	if !strings.Contains(string(body), want) {
		t.Errorf("the page's header has no %s:\n%s", want, body)
	}
}
