package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
	"github.com/surfkit/surf/sandbox"
)

// benchActionsUsage is the usage of "surf bench actions".
const benchActionsUsage = `Usage: surf bench actions [--rounds N] [--pwmcp CMD] [--with-screenshot] [--json] [--phases]

Serves a small fixture site on loopback and drives two MCP servers over
stdio, in the same run: surf itself ("surf serve", this executable, with
its default flags and the site's origin allowed) and Playwright MCP
(pinned in testdata/pwmcp, installed by "make setup"). For each kind of
action it times the call until the settled page the model reads is back:
  click_link    click a link (a navigation)
  click_button  click a button that changes the page in place
  type_submit   type into a search field and press Enter (a form submit)
  select        choose an option of a select
  scroll        scroll the page down by a screen
  back          go back in history
surf's tools return the page with the action (click, input_text with
press_enter, select_option, page_down, history_back). Playwright MCP
0.0.83's action replies link the page snapshot as a file instead of
including it, so each of its actions (browser_click, browser_type with
submit, browser_select_option, browser_press_key PageDown,
browser_navigate_back) is followed by browser_snapshot, timed with it;
a reply that does include the snapshot is not followed by one. (How
long each server waits for the page differs: Playwright MCP 0.0.83 waits
500 ms after browser_click and browser_type, and for the load when they
navigate; browser_select_option and browser_press_key do not wait, and
browser_navigate_back waits for the commit only. surf waits up to 150 ms
for a reaction to begin after every action, then for what began.)
Each sample starts from a fresh navigation to the kind's start page (not
timed); element ids and refs are read from that page's reply by role and
name. A sample also checks the action's effect (the next page, the
changed text, the scroll position): an error result or a missing effect
is a failure, reported and never timed. Which server goes first
alternates from sample to sample. The browser's start is not timed.

Playwright MCP runs with --headless --isolated and a config giving the
Chromium surf uses, a 1280x720 viewport and the flags surf passes its
browser (--disable-background-networking --disable-component-update
--disable-sync --no-first-run; --no-sandbox as root).

Flags:
  --rounds N          samples per action kind and server (default 5)
  --pwmcp CMD         the command that starts Playwright MCP, split at
                      spaces; the flags above are appended (default: node
                      testdata/pwmcp/node_modules/@playwright/mcp/cli.js,
                      looked for in the current directory and its parents)
  --with-screenshot   also time a screenshot after each of Playwright MCP's
                      actions (browser_take_screenshot, JPEG, after the
                      snapshot): like for like with surf, whose reply
                      carries one
  --json              print one JSON object
  --phases            also split surf's time into its phases, from its
                      progress notifications: act, settle (waiting for a
                      reaction to begin, a page to load, the network to go
                      quiet) and observe

It prints, per kind, p50/p90 of the time for each server, the ratio of the
p50s (surf / Playwright MCP) and the p50 of the reply's text tokens (o200k;
surf's reply also carries a screenshot, whose size is in the JSON). It
exits 1 when any sample failed.

Example:
  surf bench actions --rounds 5`

func benchActions(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	rounds := fs.Int("rounds", 5, "")
	pwcmd := fs.String("pwmcp", "", "")
	asJSON := fs.Bool("json", false, "")
	phases := fs.Bool("phases", false, "")
	withShot := fs.Bool("with-screenshot", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "bench actions takes no arguments, got %q", fs.Arg(0))
	}
	if *rounds < 1 || *rounds > 100 {
		return usagef(c, "--rounds must be 1 to 100")
	}
	if fs.Changed("pwmcp") && len(strings.Fields(*pwcmd)) == 0 {
		return usagef(c, "--pwmcp needs a command")
	}
	pwArgv := strings.Fields(*pwcmd)
	if len(pwArgv) == 0 {
		cliJS, err := bench.FindPWMCP()
		if err != nil {
			return withHint(err, "run make setup in surf's repository (it runs npm ci --prefix testdata/pwmcp), or name its command with --pwmcp")
		}
		pwArgv = []string{"node", cliJS}
	}
	if _, err := exec.LookPath(pwArgv[0]); err != nil {
		return withHint(fmt.Errorf("starting Playwright MCP: %w", err), "install Node.js (surf install --with-deps does), or name Playwright MCP's command with --pwmcp")
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding surf's executable: %w", err)
	}
	chromium, err := sandbox.FindChromium(cli.Getenv("SURF_CHROMIUM"))
	if err != nil {
		return err
	}
	res, err := bench.Actions(ctx, bench.ActionsConfig{Rounds: *rounds, Surf: exe, PWMCP: pwArgv, Chromium: chromium, Phases: *phases, WithScreenshot: *withShot})
	var pe *bench.PWMCPError
	if errors.As(err, &pe) {
		return withHint(err, "install it with make setup (npm ci --prefix testdata/pwmcp), or name its command with --pwmcp")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(cli.Stdout).Encode(res); err != nil {
			return err
		}
	} else {
		bench.WriteActions(cli.Stdout, res)
	}
	if res.Failed > 0 {
		return fmt.Errorf("%d samples failed", res.Failed)
	}
	return nil
}
