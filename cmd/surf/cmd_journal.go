package main

import (
	"context"
	"fmt"

	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/journal"
)

func init() {
	c := &command{
		name:    "journal",
		summary: "print a run's journal readably",
		usage:   helpText("journal"),
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() != 2 || fs.Arg(0) != "show" {
			return usagef(c, "journal takes: show FILE")
		}
		entries, err := journal.Read(fs.Arg(1))
		if err != nil && len(entries) == 0 {
			return withHint(err, "the journal is the file given to 'surf run --journal' (default surf-run/journal.jsonl)")
		}
		journal.WriteText(termsafe.Writer(cli.Stdout), entries)
		if err != nil {
			fmt.Fprintf(cli.Stdout, "\n(the journal ends in a partial line: %s)\n", termsafe.String(err.Error()))
		}
		return nil
	}
	register(c)
}
