package main

import (
	"context"
	"fmt"
	"time"

	"github.com/surfkit/surf/board"
)

func init() { addBoardSub("config", boardConfigUsage, boardConfig) }

var boardConfigUsage = helpText("board-config")

// boardSettings is what surf board config prints.
type boardSettings struct {
	Lease string `json:"lease"`
}

// boardConfig is surf board config.
func boardConfig(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	asJSON := fs.Bool("json", false, "")
	lease := fs.Duration("lease", 0, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "config takes no arguments; change a setting with its flag, such as --lease 30s")
	}
	if fs.Changed("lease") && *lease < board.MinLease {
		return usagef(c, "--lease must be at least %s: workers heartbeat three times a lease", board.MinLease)
	}
	b, err := bf.open(ctx, cli, func(cfg *board.Config) {
		if fs.Changed("lease") {
			cfg.Lease = *lease // the lease of a board this creates
		}
	})
	if err != nil {
		return err
	}
	defer b.Close()
	if fs.Changed("lease") {
		if err := b.SetLease(ctx, *lease); err != nil {
			return err
		}
	}
	d, err := b.Lease(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, boardSettings{Lease: d.String()})
	}
	fmt.Fprintf(cli.Stdout, "lease  %s\n", d.Round(time.Millisecond))
	return nil
}
