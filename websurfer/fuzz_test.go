package websurfer

import (
	"context"
	"encoding/json"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// fuzzState is one surfer shared by the fuzz iterations of a process: a
// browser session per input would make the fuzzer too slow to find
// anything.
var fuzzState struct {
	once  sync.Once
	f     *fixture
	names []string
	base  int
}

func FuzzDispatch(f *testing.F) {
	for _, seed := range []struct{ tool, args string }{
		{"click", `{"target_id": 1}`},
		{"click", `{"target_id": -1}`},
		{"WebSurfer_click", `{"target_id": "2"}`},
		{"input_text", `{"input_field_id": 1, "text_value": "hi", "press_enter": false}`},
		{"select_option", `{"target_id": 3, "option": "Blue"}`},
		{"keypress", `{"keys": ["Tab", "Shift+Tab"]}`},
		{"scroll_element_down", `{"target_id": 1}`},
		{"visit_url", `{"url": "javascript:alert(1)"}`},
		{"visit_url", `{"url": "http://127.0.0.1:1/"}`},
		{"create_tab", `{"url": "file:///etc/passwd"}`},
		{"switch_tab", `{"index": 3}`},
		{"close_tab", `{"index": 0}`},
		{"upload_file", `{"target_id": 1, "path": "../../etc/passwd"}`},
		{"read_page", `{"page": 0}`},
		{"sleep", `{"seconds": 0.01}`},
		{"hover", `{}`},
		{"page_down", `null`},
		{"history_back", `[]`},
		{"stop_action", `{"answer": 7}`},
		{"nope", `{"a":`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		st := &fuzzState
		st.once.Do(func() {
			// A fixture that outlives this first iteration's test.
			sites := browsertest.ServeSites(keepAlive{t})
			serveActionHandlers(sites)
			sess, err := browsertest.Sandbox(t).NewSession(context.Background(), sandbox.SessionConfig{})
			if err != nil {
				t.Fatal(err)
			}
			browsertest.AtExit(func() { sess.Close() })
			s, err := New(context.Background(), Config{Session: sess, Policy: loopbackPolicy(t, sites), SearchURL: sites.A + "/search?q=%s", ActionTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			st.f = &fixture{sites: sites, s: s, reg: s.Tools()}
			st.names = st.f.reg.Names()
			if _, err := s.VisitURL(context.Background(), sites.A+"/perception/native.html"); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			st.base = runtime.NumGoroutine()
		})
		fx := st.f
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		res, err := fx.reg.Call(ctx, tool, json.RawMessage(args), st.names...)
		if err != nil && ctx.Err() == nil {
			t.Fatalf("%s(%q): a runtime error from bad input: %v", tool, args, err)
		}
		if err == nil && res == nil {
			t.Fatalf("%s(%q): no result and no error", tool, args)
		}
		// Every page the browser has is a tab surf knows.
		fx.s.mu.Lock()
		fx.s.adoptPopups(context.Background(), false)
		tabs := len(fx.s.tabs)
		fx.s.mu.Unlock()
		if pages := len(fx.s.sess.Context().Pages()); pages != tabs {
			t.Fatalf("%s(%q): %d pages but %d tabs", tool, args, pages, tabs)
		}
		// Keep the page usable for the next input.
		if tabs > 3 {
			for tabs > 1 {
				fx.s.CloseTab(context.Background(), tabs-1)
				tabs--
			}
		}
		if g := runtime.NumGoroutine(); g > st.base+200 {
			t.Fatalf("%d goroutines, from %d at the start", g, st.base)
		}
	})
}

// keepAlive lets the fuzz fixture's servers outlive the iteration that
// made them: they close when the process ends.
type keepAlive struct{ testing.TB }

func (keepAlive) Cleanup(func()) {}

var _ testing.TB = keepAlive{}
