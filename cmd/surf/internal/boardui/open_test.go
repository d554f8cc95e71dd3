package boardui_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/boardui"
	"github.com/surfkit/surf/cmd/surf/internal/live"
)

// TestOpenPublishesHub: a page opened with a hub (surf serve --board's)
// lists that hub's sessions as its worker's, followed over the board's
// NATS like any worker's; after Close the page's bridge is gone from
// the bus, and another page no longer lists them.
func TestOpenPublishesHub(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx)
	if _, err := boardui.Open(ctx, boardui.OpenConfig{}); err == nil {
		t.Error("Open without a board made a page")
	}
	hub := live.New(live.Config{})
	defer hub.Close()
	ls, err := hub.Open(live.SessionOptions{Owner: "an MCP client"})
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	page, err := boardui.Open(ctx, boardui.OpenConfig{Board: b, Hub: hub, Worker: "serve@test"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := boardui.Open(ctx, boardui.OpenConfig{Board: b})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	listed := func(h http.Handler) bool {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/board", nil))
		var v boardui.View
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Sessions {
			if s.Worker == "serve@test" && s.ID == ls.ID() {
				return true
			}
		}
		return false
	}
	waitFor(t, "the hub's session on both pages", func() bool { return listed(page) && listed(other) })
	page.Close()
	page.Close() // twice is fine
	waitFor(t, "the hub's session to leave the other page", func() bool { return !listed(other) })
}
