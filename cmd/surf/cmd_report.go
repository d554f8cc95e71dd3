package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/surfkit/surf/internal/report"
)

func init() {
	c := &command{
		name:    "report",
		summary: "turn a run's journal into one self-contained HTML page",
		usage:   helpText("report"),
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		out := fs.StringP("output", "o", "", "")
		title := fs.String("title", "", "")
		asJSON := fs.Bool("json", false, "")
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		switch fs.NArg() {
		case 0:
			return usagef(c, "no journal given")
		case 1:
		default:
			return usagef(c, "report takes one journal, got %d arguments", fs.NArg())
		}
		path := fs.Arg(0)
		opts := report.Options{Title: *title}
		var (
			sum report.Summary
			err error
		)
		if *out == "-" {
			j, rerr := report.Read(path)
			if rerr != nil {
				return journalHint(rerr, path)
			}
			sum, err = report.Write(cli.Stdout, j, opts)
		} else {
			if *out == "" {
				*out = report.DefaultOutput(path)
			}
			sum, err = report.WriteFile(path, *out, opts)
		}
		if err != nil {
			return journalHint(err, path)
		}
		for _, n := range sum.Notes {
			fmt.Fprintf(cli.Stderr, "surf: note: %s\n", n)
		}
		if *asJSON && *out != "-" {
			return json.NewEncoder(cli.Stdout).Encode(reportJSON{Output: *out, Summary: sum})
		}
		if *out != "-" {
			fmt.Fprintf(cli.Stdout, "wrote %s: %s\n", *out, describeReport(sum))
		}
		return nil
	}
	register(c)

	// surf run --report FILE (cmd_run.go) writes its page through here.
	writeReport = func(journal, out string) error {
		_, err := report.WriteFile(journal, out, report.Options{})
		return err
	}
}

type reportJSON struct {
	Output string `json:"output"`
	report.Summary
}

// describeReport is the report's summary in one line.
func describeReport(s report.Summary) string { return s.Describe() }

// journalHint adds advice to the errors a user can do something about:
// a journal that is not there or not a journal, an output that cannot be
// written.
func journalHint(err error, journal string) error {
	var pe *fs.PathError
	switch {
	case errors.Is(err, report.ErrNotJournal):
		return withHint(err, "a journal is the .jsonl file a run writes, one JSON entry per line")
	case errors.As(err, &pe) && pe.Path == journal && errors.Is(err, fs.ErrNotExist):
		return withHint(err, "pass the journal a run wrote: the .jsonl file, such as surf-demo/journal.jsonl after 'surf demo'")
	case errors.As(err, &pe) && pe.Path == journal:
		return withHint(err, "check that the journal is a readable file")
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
		return withHint(err, "the page goes to the -o FILE; check that its directory exists and is writable")
	}
	return err
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
