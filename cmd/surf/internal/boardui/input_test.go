package boardui_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
)

// TestBoardPageInputRefused: the page's input POST reaches a session
// only while this page has it taken over, with the key its takeover
// gave; every other input (unknown worker or session, not taken over,
// another key, no key, malformed, over the size bound, cross-origin) gets
// a clear error and changes nothing.
func TestBoardPageInputRefused(t *testing.T) {
	ctx := testCtx(t)
	b := openBoard(t, ctx)
	bus, err := livebus.Follow(b.Conn())
	ok(t, err)
	t.Cleanup(bus.Close)
	base, token := serve(t, ctx, b, bus)
	hub := live.New(live.Config{})
	t.Cleanup(hub.Close)
	s, err := hub.Open(live.SessionOptions{Owner: "worker w task t", Task: "t"})
	ok(t, err)
	br, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: "w"})
	ok(t, err)
	t.Cleanup(br.Close)
	waitFor(t, "the session on the bus", func() bool { return len(bus.Sessions()) == 1 })
	sess := "/s/" + br.ID() + "/" + s.ID()

	post := func(path, origin, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, "POST", base+path, strings.NewReader(body))
		ok(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		ok(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	click := func(key string) string {
		return `{"kind":"click","x":0.5,"y":0.5,"takeover_key":"` + key + `"}`
	}
	check := func(name, path, origin, body string, status int, says string) {
		t.Helper()
		code, text := post(path, origin, body)
		if code != status || !strings.Contains(text, says) {
			t.Errorf("%s: %d %s; want %d saying %q", name, code, strings.TrimSpace(text), status, says)
		}
	}
	check("not taken over", sess+"/input", base, click("0123456789abcdef0123456789abcdef"), http.StatusConflict, "nobody has taken over")
	check("an unknown worker", "/s/nobody/"+s.ID()+"/input", base, click("k"), http.StatusNotFound, "no worker")
	check("an unknown session", "/s/"+br.ID()+"/nope/input", base, click("k"), http.StatusNotFound, "no live session")

	code, text := post(sess+"/takeover", base, "{}")
	var took struct {
		OK  bool   `json:"ok"`
		Key string `json:"key"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(text), &took) != nil || !took.OK || took.Key == "" {
		t.Fatalf("the takeover: %d %s; want ok with a key", code, text)
	}
	if sum := s.Summary(); sum.State != live.TakenOver || sum.TakenBy != "the tester" {
		t.Fatalf("after the takeover: %+v", sum)
	}
	check("cross-origin", sess+"/input", "http://evil.test", click(took.Key), http.StatusForbidden, "Forbidden")
	check("another key", sess+"/input", base, click("0123456789abcdef0123456789abcdef"), http.StatusConflict, "another page")
	check("no key", sess+"/input", base, `{"kind":"click","x":0.5,"y":0.5}`, http.StatusConflict, "take the session over from this page")
	check("not JSON", sess+"/input", base, `{"kind":`, http.StatusBadRequest, "the body")
	check("an unknown field", sess+"/input", base, `{"kind":"click","x":0.5,"y":0.5,"z":1,"takeover_key":"`+took.Key+`"}`, http.StatusBadRequest, "unknown field")
	check("an unknown kind", sess+"/input", base, `{"kind":"explode","takeover_key":"`+took.Key+`"}`, http.StatusBadRequest, "unknown kind")
	check("off the picture", sess+"/input", base, `{"kind":"click","x":2,"y":0.5,"takeover_key":"`+took.Key+`"}`, http.StatusBadRequest, "fractions")
	check("a huge payload", sess+"/input", base, `{"kind":"type","text":"`+strings.Repeat("x", 1<<20)+`","takeover_key":"`+took.Key+`"}`, http.StatusRequestEntityTooLarge, "over")
	check("text over the bound", sess+"/input", base, `{"kind":"type","text":"`+strings.Repeat("x", 5000)+`","takeover_key":"`+took.Key+`"}`, http.StatusBadRequest, "over 4096")
	// the right key reaches the worker, which has no page to send it to
	check("the right key, no page yet", sess+"/input", base, click(took.Key), http.StatusBadRequest, "no frame of the page yet")
	if sum := s.Summary(); sum.State != live.TakenOver {
		t.Fatalf("refused inputs changed the session: %+v", sum)
	}
	if code, text := post(sess+"/handback", base, "{}"); code != http.StatusOK {
		t.Fatalf("the hand-back: %d %s", code, text)
	}
	check("after the hand-back", sess+"/input", base, click(took.Key), http.StatusConflict, "nobody has taken over")
}
