package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
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
	var res bench.ActionsResult
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
		for name, s := range map[string]bench.Series{"surf": k.Surf, "pwmcp": k.PWMCP} {
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
