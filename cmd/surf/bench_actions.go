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
