package main

import (
	"context"
	"fmt"
	"time"

	"github.com/surfkit/surf/board"
)

func init() { addBoardSub("config", boardConfigUsage, boardConfig) }

const boardConfigUsage = `Usage: surf board config [--lease D] [--json]

Shows the board's settings, or changes them. They are the board's, shared
by every worker: no worker changes them by starting.

  lease     how long a claimed task stays with a worker that stopped
            heartbeating before it goes back on the queue (default 1m,
            set when the board is created). Workers heartbeat three times
            a lease (at least every 5s) and follow a change within a
            beat. A short lease brings a lost worker's task back sooner;
            one shorter than a worker's pauses (a busy machine, a NATS
            leader election) hands running tasks to another worker.

Flags:
  --lease D           set the lease, such as 30s or 2m (at least 300ms)
  --json              print the settings as JSON
` + boardFlagsHelp + `

Examples:
  surf board config
  surf board config --lease 15s`

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
