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

const boardListUsage = `Usage: surf board list [--state S]... [--label K=V]... [--json]

Lists the tasks on the board, oldest first: id, state, worker, attempts,
age, and the answer (or why a task failed or was cancelled), cut to fit.

Flags:
  --state S           only tasks in state S (pending, ready, running, done,
                      failed, cancelled); repeatable, or comma-separated
  --label K=V         only tasks with this label (repeatable: all must match)
  --json              print the records as a JSON array
` + boardFlagsHelp + `

Example:
  surf board list --state failed,cancelled`

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

const boardShowUsage = `Usage: surf board show ID [--json]

Shows everything about one task: the task itself, its state, worker,
attempts and notes, its times, and when it has ended its result (answer,
how the run ended, steps, tokens, duration) and the files its run stored
on the board (journal, images, report; see 'surf board report'). Given
the id of a plan ('surf plan'), it shows the plan: its ledger, its rounds
and its tasks.

Flags:
  --json              print the record as JSON
` + boardFlagsHelp + `

Example:
  surf board show hours`

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

const boardWatchUsage = `Usage: surf board watch [--once] [--json]

Shows what the workers are doing now: the number of tasks in each state,
and each running task with its worker, attempt, time running and last
progress. On a terminal the table is redrawn in place as the board
changes; otherwise each change is printed as one line. Ctrl-C stops.

Flags:
  --once              print the table once and exit
  --json              print one JSON event per line: {"record": ...,
                      "initial": true} for each task as it is, then one
                      per change (with --once, only the tasks as they are)
` + boardFlagsHelp + `

Example:
  surf board watch`

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

const boardExportUsage = `Usage: surf board export [--format jsonl|csv] [--label K=V]... [--state S]...

Writes the tasks' results as a table on stdout, one row a task, oldest
first: for a batch, select it by its label.

jsonl (the default) writes one JSON object a line: id, state, answer,
reason (why a task failed or was cancelled), data (its structured result)
and labels. csv writes the columns id, state, answer and reason, then one
column per top-level key of the structured results, named data.KEY (a
string as it is, any other value as JSON, empty when a task has no such
key); a structured result that is not an object goes whole, as JSON, in a
column named data.

Flags:
  --format F          jsonl or csv (default jsonl)
  --label K=V         only tasks with this label (repeatable: all must match)
  --state S           only tasks in state S (repeatable, or comma-separated)
` + boardFlagsHelp + `

Examples:
  surf board export --format csv --label batch=prices
  surf board export --state done`

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
