package main

import (
	"context"
	"os"
	"path/filepath"

	"github.com/surfkit/surf/cmd/surf/internal/shell"
	"github.com/surfkit/surf/websurfer"
)

func init() {
	c := &command{
		name:    "shell",
		summary: "an interactive session: one action per line, each printing the new observation",
		usage:   helpText("shell"),
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) (err error) {
		fs := newFlags(c)
		out := fs.String("out", "surf-shell", "")
		bf := addBrowserFlags(fs)
		bf.state = addStateFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() > 1 {
			return usagef(c, "shell takes at most one URL")
		}
		b, err := bf.open(ctx, cli, openOptions{})
		if err != nil {
			return err
		}
		defer b.closeInto(&err)
		sh := shell.New(shell.Config{Surfer: b.Surfer(), Stdin: cli.Stdin, Stdout: cli.Stdout, Stderr: cli.Stderr,
			Dir: *out, HistoryFile: shellHistory()})
		if fs.NArg() == 1 {
			if err := b.checkURL(fs.Arg(0)); err != nil {
				return err
			}
			sh.Exec(ctx, "visit_url "+shell.Quote(fs.Arg(0)))
		} else if obs, err := b.Surfer().Observe(ctx); err == nil {
			sh.Show(&websurfer.ActionResult{Summary: "a blank tab is open", Observation: obs})
		}
		return sh.Loop(ctx)
	}
	register(c)
}

// shellHistory is the file of surf shell's line history on a terminal,
// in the user's cache directory ("" when there is none).
func shellHistory() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "surf", "shell_history")
}
