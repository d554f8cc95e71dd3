package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/sandbox"
)

func init() {
	c := &command{
		name:    "install",
		summary: "make this machine ready: the Playwright driver (from npm), and with --with-deps chromium and nodejs",
		usage: `Usage: surf install [--with-deps] [--check] [--json]

Installs the Playwright driver ` + sandbox.DriverVersion + ` (npm package playwright-core) into the
user cache and links it to the system node. Chromium is never downloaded: surf
uses the system's (SURF_CHROMIUM, then /usr/bin/chromium, chromium-browser,
google-chrome). Safe to run again.

Flags:
  --with-deps   as root on Debian/Ubuntu, apt-get install what is missing
                (chromium, nodejs, npm, bubblewrap)
  --check       change nothing; print what is installed and exit 1 with a
                hint when something is missing
  --json        print the status as JSON

Environment:
  SURF_CHROMIUM            the Chromium executable to use
  PLAYWRIGHT_DRIVER_PATH   the driver directory (default ~/.cache/ms-playwright-go/` + sandbox.DriverVersion + `)
  PLAYWRIGHT_NODEJS_PATH   the node executable (default: node on PATH)
  npm_config_registry      an npm registry mirror

Examples:
  sudo surf install --with-deps
  surf install --check`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		withDeps := fs.Bool("with-deps", false, "")
		check := fs.Bool("check", false, "")
		asJSON := fs.Bool("json", false, "")
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef(c, "unexpected argument %q", fs.Arg(0))
		}
		env := sandbox.EnvFrom(cli.Getenv)
		var st *sandbox.Status
		if *check {
			st = sandbox.Check(ctx, env)
		} else {
			var err error
			st, err = sandbox.Install(ctx, sandbox.InstallConfig{Env: env, WithDeps: *withDeps, Log: cli.Stderr, Logger: cli.Logger})
			if st == nil {
				return err
			}
		}
		if *asJSON {
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(st); err != nil {
				return err
			}
		} else {
			printStatus(cli, st)
		}
		return st.Err()
	}
	register(c)
}

func printStatus(cli *CLI, st *sandbox.Status) {
	or := func(s, alt string) string {
		if s == "" {
			return alt
		}
		return s
	}
	fmt.Fprintf(cli.Stdout, "driver:     playwright %s (%s)\n", or(st.DriverVersion, "missing"), st.DriverDir)
	fmt.Fprintf(cli.Stdout, "node:       %s (%s)\n", or(st.NodeVersion, "missing"), or(st.Node, "not found"))
	fmt.Fprintf(cli.Stdout, "chromium:   %s (%s)\n", or(st.ChromiumVersion, "missing"), or(st.Chromium, "not found"))
	fmt.Fprintf(cli.Stdout, "frames:     %s, browser %s (%s)\n", st.FrameMode, or(st.BrowserVersion, "missing"), or(st.Browser, "not found"))
	if st.FrameMode == string(sandbox.FrameOnDemand) {
		fmt.Fprintln(cli.Stdout, "            (no site isolation: the headless shell's frame control excludes --site-per-process)")
	}
	fmt.Fprintf(cli.Stdout, "bubblewrap: %s\n", or(st.Bubblewrap, "not found (the OS sandbox cannot start)"))
	fmt.Fprintf(cli.Stdout, "chromium sandbox: %s\n", st.ChromiumSandbox)
	if st.Ready() {
		fmt.Fprintln(cli.Stdout, "ready")
	}
}
