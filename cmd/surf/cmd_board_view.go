package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/boardcli"
)

func init() {
	addBoardSub("list", boardListUsage, boardList)
	addBoardSub("show", boardShowUsage, boardShow)
	addBoardSub("watch", boardWatchUsage, boardWatch)
	addBoardSub("export", boardExportUsage, boardExport)
}

// ---- list ----

var boardListUsage = helpText("board-list")

func boardList(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	sel := addSelectionFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "list takes no arguments; to see one task, run 'surf board show %s'", fs.Arg(0))
	}
	recs, all, err := sel.records(ctx, cli, c, bf)
	if err != nil {
		return err
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, recs)
	}
	if len(recs) == 0 {
		if len(all) == 0 {
			fmt.Fprintln(cli.Stdout, "no tasks on the board")
		} else {
			fmt.Fprintf(cli.Stdout, "no tasks match (%d on the board)\n", len(all))
		}
		return nil
	}
	boardcli.Table(cli.Stdout, recs, time.Now(), boardcli.TermWidth(cli.Stdout))
	return nil
}

// ---- show ----

var boardShowUsage = helpText("board-show")

func boardShow(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "show takes one task id, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, fs.Arg(0))
	if errors.Is(err, board.ErrNotFound) {
		if shown, err := showPlan(ctx, cli, b, fs.Arg(0), *asJSON); shown {
			return err
		}
	}
	if err != nil {
		return notFoundHint(err)
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, r)
	}
	boardcli.Show(cli.Stdout, r, time.Now())
	return nil
}

// ---- watch ----

var boardWatchUsage = helpText("board-watch")

func boardWatch(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	once := fs.Bool("once", false, "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "watch takes no arguments")
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	w := &boardcli.Watcher{Out: cli.Stdout, JSON: *asJSON, TTY: boardcli.IsTerminal(cli.Stdout)}
	return w.Run(ctx, b, *once)
}

// ---- export ----

var boardExportUsage = helpText("board-export")

func boardExport(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	format := fs.String("format", "jsonl", "")
	sel := addSelectionFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "export takes no arguments; select tasks with --label or --state")
	}
	if *format != "jsonl" && *format != "csv" {
		return usagef(c, "--format %q: jsonl or csv", *format)
	}
	recs, _, err := sel.records(ctx, cli, c, bf)
	if err != nil {
		return err
	}
	if *format == "csv" {
		return board.ExportCSV(cli.Stdout, recs)
	}
	return board.ExportJSONL(cli.Stdout, recs)
}
