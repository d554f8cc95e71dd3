package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/boardcli"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
)

func init() {
	addBoardSub("wait", boardWaitUsage, boardWait)
	addBoardSub("cancel", boardCancelUsage, boardCancel)
	addBoardSub("report", boardReportUsage, boardReport)
}

// ---- wait ----

var boardWaitUsage = helpText("board-wait")

func boardWait(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	timeout := fs.Duration("timeout", 0, "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef(c, "no task id given")
	}
	if *timeout < 0 {
		return usagef(c, "--timeout cannot be negative")
	}
	ids := fs.Args()
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	wctx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	recs, err := b.Wait(wctx, ids...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return waitTimeout(ctx, b, ids, *timeout)
		}
		return notFoundHint(err)
	}
	if *asJSON {
		if err := printBoardJSON(cli.Stdout, recs); err != nil {
			return err
		}
	} else {
		for _, r := range recs {
			fmt.Fprintf(cli.Stdout, "%s\t%s\t%s\n", termsafe.String(r.Task.ID), r.State, termsafe.String(textcut.OneLine(r.Outcome(), 300)))
		}
	}
	var bad []string
	for _, r := range recs {
		if r.State != board.Done {
			bad = append(bad, fmt.Sprintf("%s (%s)", r.Task.ID, r.State))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d %s did not end done: %s", len(bad), len(recs), pluralWord(len(recs), "task", "tasks"), strings.Join(bad, ", "))
	}
	return nil
}

// waitTimeout is the error of a wait that timed out: it names the tasks
// still open.
func waitTimeout(ctx context.Context, b *board.Board, ids []string, d time.Duration) error {
	open, running := boardcli.OpenTasks(ctx, b, ids)
	err := fmt.Errorf("timed out after %s; still open: %s", d, strings.Join(open, ", "))
	if running {
		return err
	}
	return withHint(err, "tasks run only while a worker is attached: start 'surf work' on this board")
}

// ---- cancel ----

var boardCancelUsage = helpText("board-cancel")

func boardCancel(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	reason := fs.String("reason", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "cancel takes one task id, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Cancel(ctx, fs.Arg(0), strings.TrimSpace(*reason))
	if err != nil {
		return notFoundHint(err)
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, r)
	}
	fmt.Fprintf(cli.Stdout, "cancelled %s\n", r.Task.ID)
	return nil
}

// ---- report ----

var boardReportUsage = helpText("board-report")

func boardReport(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	out := fs.StringP("output", "o", "", "")
	title := fs.String("title", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "report takes one task id, got %d arguments", fs.NArg())
	}
	id := fs.Arg(0)
	if *out == "" {
		*out = id + ".html"
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, id)
	if err != nil {
		return notFoundHint(err)
	}
	sum, err := boardcli.Report(ctx, b, r, cli.Stdout, *out, report.Options{Title: *title})
	var we *boardcli.WriteError
	switch {
	case errors.Is(err, boardcli.ErrNoJournal):
		return withHint(err, "a task has a journal once a worker has run it; 'surf board show "+id+"' tells where it is")
	case errors.As(err, &we):
		return journalHint(we.Err, we.Journal)
	case err != nil:
		return err
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(cli.Stderr, "surf: note: %s\n", n)
	}
	if *out == "-" {
		return nil
	}
	if *asJSON {
		return json.NewEncoder(cli.Stdout).Encode(reportJSON{Output: *out, Summary: sum})
	}
	fmt.Fprintf(cli.Stdout, "wrote %s: %s\n", *out, describeReport(sum))
	return nil
}
