package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/surfkit/surf/board"
)

func init() { addBoardSub("migrate", boardMigrateUsage, boardMigrate) }

var boardMigrateUsage = helpText("board-migrate")

func boardMigrate(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	force := fs.Bool("force", false, "")
	asJSON := fs.Bool("json", false, "")
	err := parseFlags(c, fs, args)
	if err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "migrate takes no arguments, got %q", fs.Arg(0))
	}
	if fs.Changed("data") {
		return usagef(c, "the source is --from DIR, the target --to URL")
	}
	if *to != "" {
		if fs.Changed("nats") && bf.nats != *to {
			return usagef(c, "--to and --nats name two targets")
		}
		bf.nats = *to
	}
	if bf.nats == "" && cli.Getenv("SURF_NATS_URL") == "" {
		return usagef(c, "name the target with --to URL")
	}
	if *from, err = migrateSource(cli, *from); err != nil {
		return err
	}
	src, err := board.Open(ctx, board.Config{Dir: *from, Logger: cli.Logger})
	if err != nil {
		return withHint(fmt.Errorf("opening the source board: %w", err), "--from names the embedded board's data directory")
	}
	defer src.Close()
	dst, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer dst.Close()
	progress := func(s board.BucketStats) {}
	if !*asJSON {
		progress = func(s board.BucketStats) {
			fmt.Fprintf(cli.Stderr, "surf: %s: %d of %d copied, %d already there\n", s.Name, s.Copied, s.Total, s.Same)
		}
	}
	stats, err := board.Migrate(ctx, src, dst, board.MigrateOptions{Force: *force, Progress: progress})
	var ce *board.ConflictError
	switch {
	case errors.As(err, &ce):
		return withHint(err, "--force replaces them with the source's; what the target holds under other names is left alone")
	case errors.Is(err, board.ErrRunning):
		return withHint(err, "'surf board list --state running --data "+*from+"' shows them")
	case err != nil:
		return withHint(err, "what was copied stays on the target: run the same command again")
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, stats)
	}
	w := tabwriter.NewWriter(cli.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "BUCKET\tKIND\tCOPIED\tALREADY THERE\tTOTAL")
	for _, s := range stats {
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\n", s.Name, s.Kind, s.Copied, s.Same, s.Total)
	}
	return w.Flush()
}

// migrateSource is the data directory of the board to migrate: dir, else
// $SURF_BOARD_DIR, else the default one; it must hold a board.
func migrateSource(cli *CLI, dir string) (string, error) {
	if dir == "" {
		dir = cli.Getenv("SURF_BOARD_DIR")
	}
	if dir == "" {
		d, err := board.DefaultDir()
		if err != nil {
			return "", err
		}
		dir = d
	}
	if !board.HasData(dir) {
		return "", withHint(fmt.Errorf("no board in %s", dir), "--from names the data directory of an embedded board (where 'surf board add --data DIR' put it)")
	}
	return dir, nil
}
