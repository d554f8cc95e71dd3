package main

import (
	"context"
	"encoding/json"

	"github.com/spf13/pflag"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
	"github.com/surfkit/surf/sandbox"
)

// stateUsage is the usage text of surf state.
var stateUsage = helpText("state")

func init() {
	c := &command{
		name:    "state",
		summary: "show what a saved-login state file holds (never values), or save a session's now",
		usage:   stateUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runState(ctx, cli, c, args) }
	register(c)
}

// runState is surf state.
func runState(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	asJSON := fs.Bool("json", false, "")
	sf := addStateFlags(fs)
	fs.Lookup("state").Hidden = true
	session := addSessionFlag(fs, cli)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 1 && fs.Arg(0) == "save" {
		if fs.NFlag() > 0 && !(fs.NFlag() == 1 && fs.Changed("session")) {
			return usagef(c, "'surf state save' takes only --session: the session keeps the file and key it was opened with")
		}
		return saveSessionState(ctx, cli, *session)
	}
	if fs.NArg() != 2 || fs.Arg(0) != "show" {
		return usagef(c, "the state commands are 'surf state show FILE' and 'surf state save'")
	}
	if fs.Changed("session") {
		return usagef(c, "--session goes with 'surf state save'")
	}
	if sf.Path != "" {
		return usagef(c, "name the file as 'surf state show FILE', not with --state")
	}
	file, err := sf.key(fs.Arg(1), cli.Getenv)
	if err != nil {
		return err
	}
	shown, err := sandbox.ReadStateOutline(file)
	if err != nil {
		return stateError(err)
	}
	if *asJSON {
		enc := json.NewEncoder(cli.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(shown)
	}
	shown.WriteText(cli.Stdout)
	return nil
}

// saveSessionState is surf state save: the session saves its state file.
func saveSessionState(ctx context.Context, cli *CLI, name string) error {
	resp, err := callSession(ctx, cli, name, daemon.Request{Tool: session.ReqSaveState})
	if err != nil {
		return err
	}
	printText(cli, resp.Text)
	return nil
}

// addSandboxFlags registers the flags that weaken the sandbox, for
// commands that start a browser without the other browser flags.
func addSandboxFlags(fs *pflag.FlagSet) *browserFlags {
	bf := &browserFlags{}
	fs.BoolVar(&bf.noOSBox, "no-os-sandbox", false, "")
	fs.BoolVar(&bf.noCrBox, "no-chromium-sandbox", false, "")
	return bf
}
