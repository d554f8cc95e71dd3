package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

func TestMain(m *testing.M) { browsertest.Main(m) }

// hinted is an error with advice, as the CLI's errors carry it.
type hinted struct{ error }

func (hinted) Hint() string { return "ask the admin" }

func TestHandler(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Harbour</title><h1>Harbour Branch</h1><a href="/hours">Opening hours</a>`)
	}))
	defer srv.Close()
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: browsertest.Policy()})
	s, err := websurfer.New(ctx, websurfer.Config{Session: sess, Policy: browsertest.Policy()})
	if err != nil {
		t.Fatal(err)
	}
	closed := 0
	b := &session.Browser{Session: sess, Surfer: s,
		CheckURL: func(u string) error {
			if strings.Contains(u, "forbidden") {
				return hinted{errors.New("denied: " + u)}
			}
			return nil
		},
		Close: func() error { closed++; s.Close(); return nil }}
	h := session.NewHandler(b, session.HandlerConfig{Name: "work", Flags: []string{"--allow=127.0.0.1"}})

	call := func(tool string, args any) daemon.Response {
		t.Helper()
		var raw json.RawMessage
		if args != nil {
			raw, _ = json.Marshal(args)
		}
		return h.Handle(ctx, daemon.Request{Tool: tool, Args: raw})
	}

	var st session.Status
	if r := call(session.ReqStatus, nil); !r.OK || json.Unmarshal([]byte(r.Text), &st) != nil || st.Session != "work" || len(st.Flags) != 1 || st.PID == 0 {
		t.Errorf("status: %+v (%+v)", r, st)
	}
	r := call(session.ReqOpen, map[string]string{"url": srv.URL})
	if !r.OK || !strings.Contains(r.Text, "Harbour Branch") || len(r.Observation) == 0 {
		t.Fatalf("open: %+v", r)
	}
	if r := call(session.ReqTabs, nil); !r.OK || !strings.Contains(r.Text, `* 0 "Harbour"`) {
		t.Errorf("tabs: %+v", r)
	}
	if r := call(session.ReqScreenshot, nil); !r.OK || len(r.Image) == 0 || r.Observation != nil {
		t.Errorf("screenshot: OK %v, %d bytes of image, observation %s", r.OK, len(r.Image), r.Observation)
	}
	for _, tc := range []struct {
		tool string
		args any
		code int
		msg  string
		hint string
	}{
		{tool: "teleport", code: daemon.ExitUsage, msg: `unknown action "teleport"`},
		{tool: session.ReqOpen, args: map[string]any{"url": srv.URL, "colour": "red"}, code: daemon.ExitUsage, msg: "bad arguments"},
		{tool: session.ReqOpen, args: map[string]any{"url": srv.URL + "/forbidden"}, code: daemon.ExitFailed, msg: "denied: ", hint: "ask the admin"},
		{tool: "click", args: map[string]any{"target_id": 99}, code: daemon.ExitFailed, msg: "99"},
		{tool: session.ReqSaveState, code: daemon.ExitFailed, msg: `session "work" has no state file`, hint: "--state FILE"},
	} {
		r := call(tc.tool, tc.args)
		if r.OK || r.ExitCode != tc.code || !strings.Contains(r.Error, tc.msg) || !strings.Contains(r.Hint, tc.hint) {
			t.Errorf("%s %v = %+v; want exit code %d, error with %q, hint with %q", tc.tool, tc.args, r, tc.code, tc.msg, tc.hint)
		}
	}
	if r := call("click", map[string]any{"target_id": 1}); !r.OK || !strings.Contains(r.Text, "Opening hours") {
		t.Errorf("click: OK %v, %q, %q", r.OK, r.Text, r.Error)
	}

	select {
	case <-h.Stop():
		t.Fatal("stopped before close")
	default:
	}
	if r := call(session.ReqClose, nil); !r.OK || r.Text != `session "work" closed` || r.Observation != nil {
		t.Errorf("close: %+v", r)
	}
	select {
	case <-h.Stop():
	default:
		t.Error("close did not stop the daemon")
	}
	if err := h.CloseBrowser(); err != nil || closed != 1 {
		t.Errorf("closed %d times, err %v; want once", closed, err)
	}
}
