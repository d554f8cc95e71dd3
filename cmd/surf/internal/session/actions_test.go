package session_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

func action(t *testing.T, name string) *session.Action {
	t.Helper()
	for _, a := range session.Actions {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no action %q", name)
	return nil
}

// build parses args (flags and words) as the command would and returns
// its request or usage message.
func build(t *testing.T, name string, args ...string) (daemon.Request, string) {
	t.Helper()
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	b := action(t, name).Flags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return b(fs.Args())
}

func TestActionRequests(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		tool string
		args string
		msg  string
	}{
		{cmd: []string{"click", "12"}, tool: "click", args: `{"target_id":12}`},
		{cmd: []string{"click", "0"}, msg: `"0" is not an element id`},
		{cmd: []string{"click"}, msg: "it takes one element id"},
		{cmd: []string{"click-at", "412", "230.5"}, tool: "click_at", args: `{"x":412,"y":230.5}`},
		{cmd: []string{"click-at", "--", "-1", "2"}, msg: "not a coordinate"},
		{cmd: []string{"drag", "7", "300,410"}, tool: "drag", args: `{"from":{"target_id":7},"to":{"x":300,"y":410}}`},
		{cmd: []string{"drag", "7", "x"}, msg: "neither an element id"},
		{cmd: []string{"type", "4", "harbour"}, tool: "input_text", args: `{"input_field_id":4,"text_value":"harbour","press_enter":true,"delete_existing_text":true}`},
		{cmd: []string{"type", "--no-enter", "--append", "4", "x"}, tool: "input_text", args: `{"input_field_id":4,"text_value":"x","press_enter":false,"delete_existing_text":false}`},
		{cmd: []string{"select", "4", "Wednesday"}, tool: "select_option", args: `{"target_id":4,"option":"Wednesday"}`},
		{cmd: []string{"scroll", "down"}, tool: "page_down"},
		{cmd: []string{"scroll", "left", "9"}, tool: "scroll_element_left", args: `{"target_id":9}`},
		{cmd: []string{"scroll", "sideways"}, msg: "up, down, left or right"},
		{cmd: []string{"back"}, tool: "history_back"},
		{cmd: []string{"forward", "x"}, msg: "it takes no arguments"},
		{cmd: []string{"observe"}, tool: session.ReqObserve},
		{cmd: []string{"tabs"}, tool: session.ReqTabs},
		{cmd: []string{"tab", "1"}, tool: "switch_tab", args: `{"index":1}`},
		{cmd: []string{"tab", "--", "-1"}, msg: "not a tab index"},
		{cmd: []string{"screenshot", "--plain", "a.png"}, tool: session.ReqScreenshot, args: `{"plain":true}`},
		{cmd: []string{"read"}, tool: "read_page"},
		{cmd: []string{"read", "2"}, tool: "read_page", args: `{"page":2}`},
		{cmd: []string{"read", "0"}, msg: "not a page number"},
		{cmd: []string{"key", "Control+A", "Backspace"}, tool: "keypress", args: `{"keys":["Control+A","Backspace"]}`},
		{cmd: []string{"key"}, msg: "at least one key"},
		{cmd: []string{"hover", "3"}, tool: "hover", args: `{"target_id":3}`},
		{cmd: []string{"dialog", "accept", "Ada"}, tool: "answer_dialog", args: `{"accept":true,"prompt_text":"Ada"}`},
		{cmd: []string{"dialog", "maybe"}, msg: "accept or dismiss"},
		{cmd: []string{"upload", "5", "report.pdf"}, tool: "upload_file", args: `{"target_id":5,"path":"report.pdf"}`},
	} {
		req, msg := build(t, tc.cmd[0], tc.cmd[1:]...)
		if tc.msg != "" {
			if !strings.Contains(msg, tc.msg) || req.Tool != "" {
				t.Errorf("%q = %+v, %q; want the message %q", tc.cmd, req, msg, tc.msg)
			}
			continue
		}
		if msg != "" || req.Tool != tc.tool || !sameJSON(t, req.Args, tc.args) {
			t.Errorf("%q = %s %s, %q; want %s %s", tc.cmd, req.Tool, req.Args, msg, tc.tool, tc.args)
		}
	}
}

// TestActionsNameKnownTools checks that every action's request names a
// built-in or a tool of the action space, with arguments the tool takes.
func TestActionsNameKnownTools(t *testing.T) {
	builtins := map[string]bool{session.ReqObserve: true, session.ReqTabs: true, session.ReqScreenshot: true}
	samples := map[string][]string{"click": {"1"}, "click-at": {"1", "2"}, "drag": {"1", "2,3"}, "type": {"1", "x"},
		"select": {"1", "x"}, "scroll": {"up", "2"}, "back": nil, "forward": nil, "observe": nil, "tabs": nil,
		"tab": {"0"}, "screenshot": {"f.png"}, "read": {"1"}, "key": {"Enter"}, "hover": {"1"},
		"dialog": {"dismiss"}, "upload": {"1", "f"}}
	for _, a := range session.Actions {
		if a.Summary == "" || !strings.Contains(a.Usage, "Example:") {
			t.Errorf("%s: no summary or no example", a.Name)
		}
		words, ok := samples[a.Name]
		if !ok {
			t.Errorf("%s: no sample arguments in this test", a.Name)
			continue
		}
		req, msg := build(t, a.Name, words...)
		if msg != "" {
			t.Errorf("%s %q: %s", a.Name, words, msg)
			continue
		}
		if builtins[req.Tool] {
			continue
		}
		in, ok := tools.CatalogInput(req.Tool)
		if !ok {
			t.Errorf("%s: request names %q, no tool of the action space", a.Name, req.Tool)
			continue
		}
		if len(req.Args) > 0 {
			v := reflect.New(in).Interface()
			dec := json.NewDecoder(strings.NewReader(string(req.Args)))
			dec.DisallowUnknownFields()
			if err := dec.Decode(v); err != nil {
				t.Errorf("%s: %s does not fit %s's input: %v", a.Name, req.Args, req.Tool, err)
			}
		}
	}
}

func TestNewOutcome(t *testing.T) {
	ok := session.NewOutcome("s", "click", &daemon.Response{OK: true, Text: "done"})
	if !ok.OK || ok.Text != "done" || ok.ExitCode != 0 || ok.Session != "s" || ok.Command != "click" {
		t.Errorf("success: %+v", ok)
	}
	bad := session.NewOutcome("s", "click", &daemon.Response{Text: "partial", Error: "no element 99", Hint: "observe"})
	if bad.OK || bad.Text != "" || bad.ExitCode != 1 || bad.Error != "no element 99" || bad.Hint != "observe" {
		t.Errorf("failure without a code: %+v", bad)
	}
	if c := session.NewOutcome("s", "x", &daemon.Response{Error: "usage", ExitCode: 2}).ExitCode; c != 2 {
		t.Errorf("exit code %d, want 2", c)
	}
}

func TestDescribeState(t *testing.T) {
	for _, tc := range []struct {
		s    sandbox.StateSummary
		want string
	}{
		{sandbox.StateSummary{}, "0 cookies, 0 origins"},
		{sandbox.StateSummary{Cookies: 1, Origins: 2, Encrypted: true}, "1 cookie, 2 origins, encrypted"},
		{sandbox.StateSummary{Cookies: 3, Origins: 1, DroppedCookies: 2}, "3 cookies, 1 origin (dropped by the policy: 2 cookies, 0 origins)"},
	} {
		if got := session.DescribeState(tc.s); got != tc.want {
			t.Errorf("DescribeState(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestServeNeedsConfig checks that a config without what Serve needs is
// an error before anything is locked or started.
func TestServeNeedsConfig(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range []session.DaemonConfig{
		{Name: "s", Open: func(context.Context) (*session.Browser, error) { return nil, nil }},
		{Dir: dir, Open: func(context.Context) (*session.Browser, error) { return nil, nil }},
		{Dir: dir, Name: "s"},
		{Dir: dir, Name: "s", Idle: -1, Open: func(context.Context) (*session.Browser, error) { return nil, nil }},
	} {
		if err := session.Serve(context.Background(), cfg); err == nil {
			t.Errorf("Serve(%+v) = nil", cfg)
		}
	}
}

func sameJSON(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	if len(a) == 0 || b == "" {
		return len(a) == 0 && b == ""
	}
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
