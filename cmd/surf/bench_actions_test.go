package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// needPWMCP fails the test when Playwright MCP is not installed: the
// benchmark compares surf with it, and make setup installs it.
func needPWMCP(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", "..", "testdata", "pwmcp", "node_modules", "@playwright", "mcp", "cli.js")); err != nil {
		t.Fatalf("Playwright MCP is not installed (%v): run make setup (it runs npm ci --prefix testdata/pwmcp; surf install --with-deps installs node and npm)", err)
	}
}

// surf bench actions drives surf serve and Playwright MCP over stdio on
// its fixture site: every kind of action succeeds on both servers (the
// effect checked on the page read back), with the calls each timed and
// its reply measured; --with-screenshot adds Playwright MCP's screenshot
// to its timed calls. Timings are not asserted.
func TestBenchActions(t *testing.T) {
	needPWMCP(t)
	for _, shot := range []bool{false, true} {
		t.Run(fmt.Sprintf("with-screenshot=%v", shot), func(t *testing.T) { testBenchActions(t, shot) })
	}
}

func testBenchActions(t *testing.T, withShot bool) {
	args := []string{"bench", "actions", "--rounds", "1", "--json", "--phases"}
	if withShot {
		args = append(args, "--with-screenshot")
	}
	cmd := surfCmd(args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("surf bench actions: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	var res benchActionsResult
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("decoding the JSON: %v\n%s", err, stdout.String())
	}
	if res.Rounds != 1 || res.Failed != 0 || !strings.HasPrefix(res.Site, "http://127.0.0.1:") {
		t.Errorf("rounds %d, failed %d, site %q", res.Rounds, res.Failed, res.Site)
	}
	if res.Surf.Name != "surf" || res.PWMCP.Package != "@playwright/mcp 0.0.83" {
		t.Errorf("servers: %+v, %+v", res.Surf, res.PWMCP)
	}
	var kinds []string
	for _, k := range res.Kinds {
		kinds = append(kinds, k.Kind)
		for name, s := range map[string]actionSeries{"surf": k.Surf, "pwmcp": k.PWMCP} {
			if s.OK != 1 || s.Failed != 0 || len(s.Errors) != 0 {
				t.Errorf("%s on %s: ok %d, failed %d, errors %q", k.Kind, name, s.OK, s.Failed, s.Errors)
			}
			if s.MSP50 <= 0 || s.MSP90 < s.MSP50 || s.TokensP50 <= 0 {
				t.Errorf("%s on %s: %+v", k.Kind, name, s)
			}
		}
		if k.RatioP50 <= 0 {
			t.Errorf("%s: ratio %v", k.Kind, k.RatioP50)
		}
		// surf's reply is the observation, with its screenshot; it says
		// how long the action took, and its progress splits that time.
		if !slices.Equal(k.Surf.Tools, []string{wantSurfTool[k.Kind]}) || k.Surf.ImageBytesP50 <= 0 {
			t.Errorf("%s on surf: tools %q, image %d bytes", k.Kind, k.Surf.Tools, k.Surf.ImageBytesP50)
		}
		if ph := k.Surf.PhasesMSP50; k.Surf.ServerMSP50 <= 0 || len(ph) != 3 || ph["act"] <= 0 || ph["settle"] <= 0 || ph["observe"] <= 0 {
			t.Errorf("%s on surf: action_ms %v, phases %v", k.Kind, k.Surf.ServerMSP50, ph)
		}
		if k.PWMCP.ServerMSP50 != 0 || k.PWMCP.PhasesMSP50 != nil {
			t.Errorf("%s on Playwright MCP: action_ms %v, phases %v (it reports neither)", k.Kind, k.PWMCP.ServerMSP50, k.PWMCP.PhasesMSP50)
		}
		// Playwright MCP 0.0.83 links the snapshot from its action
		// replies: each action is followed by browser_snapshot (and, with
		// --with-screenshot, browser_take_screenshot).
		wantTools, wantShots := []string{wantPWTool[k.Kind], "browser_snapshot"}, 0
		if withShot {
			wantTools, wantShots = append(wantTools, "browser_take_screenshot"), 1
		}
		if !slices.Equal(k.PWMCP.Tools, wantTools) || k.PWMCP.SnapshotCalls != 1 || k.PWMCP.ScreenshotCalls != wantShots {
			t.Errorf("%s on Playwright MCP: tools %q, snapshot calls %d, screenshot calls %d", k.Kind, k.PWMCP.Tools, k.PWMCP.SnapshotCalls, k.PWMCP.ScreenshotCalls)
		}
	}
	if want := []string{"click_link", "click_button", "type_submit", "select", "scroll", "back"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %q, want %q", kinds, want)
	}
	// Screenshots go to the benchmark's temporary directory, not here.
	if left, _ := filepath.Glob("*.jpeg"); len(left) > 0 {
		t.Errorf("the benchmark left %q in the working directory", left)
	}
}

var (
	wantSurfTool = map[string]string{"click_link": "click", "click_button": "click", "type_submit": "input_text", "select": "select_option", "scroll": "page_down", "back": "history_back"}
	wantPWTool   = map[string]string{"click_link": "browser_click", "click_button": "browser_click", "type_submit": "browser_type", "select": "browser_select_option", "scroll": "browser_press_key", "back": "browser_navigate_back"}
)

func TestBenchActionsUsage(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"--rounds 0", "--rounds must be 1 to 100"},
		{"--rounds 101", "--rounds must be 1 to 100"},
		{"extra", `bench actions takes no arguments, got "extra"`},
		{"--pwmcp=", "--pwmcp needs a command"},
		{"--pwmcp /nonexistent/node", "starting Playwright MCP"},
	} {
		cmd := surfCmd(append([]string{"bench", "actions"}, strings.Fields(c.args)...)...)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("bench actions %s: %v\n%s", c.args, err, out)
		}
	}
}

func TestSnapshotRef(t *testing.T) {
	snap := "```yaml\n- generic [ref=e1]:\n  - navigation [ref=e4]:\n    - link \"Next page\" [ref=e5] [cursor=pointer]:\n      - /url: /next\n    - link \"Next page two\" [ref=e6]\n  - button \"Go\" [ref=f1e7]\n  - button \"Twice\" [ref=e8]\n  - button \"Twice\" [ref=e9]\n```"
	for _, c := range []struct{ role, name, want, err string }{
		{"link", "Next page", "e5", ""},
		{"link", "Next page two", "e6", ""},
		{"button", "Go", "f1e7", ""},
		{"button", "Twice", "", `2 elements button "Twice"`},
		{"button", "Next page", "", `no button "Next page"`},
	} {
		got, err := snapshotRef(snap, c.role, c.name)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("snapshotRef(%s %q) = %q, %v; want %q, %q", c.role, c.name, got, err, c.want, c.err)
		}
	}
}

func TestObservationID(t *testing.T) {
	obs := "observation 1: url \"http://127.0.0.1/\" title \"Bench start\"\nelements on screen (id role \"name\" state):\n1 link \"Next page\"\n3 button \"Show details\"\n12 combobox \"Colour\" value=\"Red\" collapsed\nbelow the viewport (1): 13 link \"Next page\"\nvisible text <<<x\n4 button \"Show details\"\nx>>>\n"
	for _, c := range []struct {
		role, name string
		want       int
		err        string
	}{
		{"link", "Next page", 1, ""},
		{"combobox", "Colour", 12, ""},
		{"textbox", "Search", 0, `no textbox "Search"`},
	} {
		got, err := observationID(obs, c.role, c.name)
		if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("observationID(%s %q) = %d, %v; want %d, %q", c.role, c.name, got, err, c.want, c.err)
		}
	}
	// The page's own text cannot pass for an element line.
	if id, err := observationID(obs, "button", "Show details"); id != 3 || err != nil {
		t.Errorf("a line of the visible text read as an element: %d, %v", id, err)
	}
	dup := strings.Replace(obs, "3 button", "2 link \"Next page\"\n3 button", 1)
	if _, err := observationID(dup, "link", "Next page"); err == nil || !strings.Contains(err.Error(), `2 elements link "Next page"`) {
		t.Errorf("two elements of the same role and name: %v", err)
	}
}

// A failed sample is counted and reported, never timed.
func TestActionSeries(t *testing.T) {
	var s actionSeries
	s.add(sampleResult{ms: 100, tokens: 50, imageBytes: 1000, serverMS: 90})
	s.add(sampleResult{ms: 5, err: errors.New("click: error result: no element 99 on this page")})
	s.add(sampleResult{ms: 300, tokens: 70, imageBytes: 3000, serverMS: 280, snapshot: true})
	s.finish()
	if s.OK != 2 || s.Failed != 1 || s.MSP50 != 100 || s.MSP90 != 300 || s.TokensP50 != 50 || s.ImageBytesP50 != 1000 || s.ServerMSP50 != 90 || s.SnapshotCalls != 1 {
		t.Errorf("%+v", s)
	}
	if len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "no element 99") {
		t.Errorf("errors %q", s.Errors)
	}
}
