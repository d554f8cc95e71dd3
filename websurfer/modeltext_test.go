package websurfer

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
)

// TestObservationKeepsHTMLCharacters: &, < and > in titles, names and URLs
// reach the model as themselves, not as \u0026, \u003c and \u003e.
func TestObservationKeepsHTMLCharacters(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Fish &amp; Chips &lt;today&gt;</title>
<a href="/menu?a=1&amp;b=2">Salt &amp; vinegar &lt;extra&gt;</a>`))
	}))
	defer srv.Close()
	s := newSurfer(t, Config{})
	res, err := s.VisitURL(context.Background(), srv.URL+"/?x=1&y=2")
	if err != nil {
		t.Fatal(err)
	}
	text := res.Text()
	for _, want := range []string{`"Fish & Chips <today>"`, `link "Salt & vinegar <extra>"`, `?x=1&y=2"`} {
		if !strings.Contains(text, want) {
			t.Errorf("observation lacks %s:\n%s", want, text)
		}
	}
	for _, esc := range []string{`\u0026`, `\u003c`, `\u003e`} {
		if strings.Contains(text, esc) {
			t.Errorf("observation escapes HTML characters (%s):\n%s", esc, text)
		}
	}
}

// TestUnavailableToolsSayWhy: a tool that makes no sense now is refused
// with the reason a person would give, not the list of other tools; and a
// surfer without a model does not offer the tools that need one.
func TestUnavailableToolsSayWhy(t *testing.T) {
	sites := browsertest.ServeSites(t)
	s := newSurfer(t, Config{})
	reg := s.Tools()
	call := func(tool, args string) string {
		t.Helper()
		res, err := reg.Call(context.Background(), tool, json.RawMessage(args), s.Offered()...)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError {
			t.Fatalf("%s %s ran: %s", tool, args, res.Text)
		}
		return res.Text
	}
	if got := call("click", `{"target_id": 3}`); !strings.Contains(got, "no page is open yet: start with visit_url") {
		t.Errorf("click on a fresh session: %q", got)
	}
	for _, tool := range []string{"summarize_page", "answer_question"} {
		for _, o := range s.Offered() {
			if o == tool {
				t.Errorf("%s offered without a model", tool)
			}
		}
	}
	if got := call("summarize_page", `{}`); !strings.Contains(got, "no model") || strings.Contains(got, "available:") {
		t.Errorf("summarize_page without a model: %q", got)
	}
	if _, err := s.VisitURL(context.Background(), sites.A+"/actions/long.html"); err != nil {
		t.Fatal(err)
	}
	if got := call("page_up", `{}`); got != "page_up is not available now: already at the top of the page" {
		t.Errorf("page_up at the top: %q", got)
	}
	if got := call("switch_tab", `{"index": 0}`); !strings.Contains(got, "there is only one tab") {
		t.Errorf("switch_tab with one tab: %q", got)
	}
}

// TestTimingJSONInMilliseconds: durations in JSON are milliseconds, named
// so, like every duration surf writes.
func TestTimingJSONInMilliseconds(t *testing.T) {
	in := Timing{Total: 63125 * time.Microsecond, Screenshot: 40 * time.Millisecond}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"total_ms":63.125`) || !strings.Contains(string(b), `"screenshot_ms":40.000`) {
		t.Errorf("timing as JSON: %s", b)
	}
	var out Timing
	if err := json.Unmarshal(b, &out); err != nil || out != in {
		t.Errorf("round trip: %+v, %v; want %+v", out, err, in)
	}
}
