package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
)

func init() {
	c := &command{
		name:    "journal",
		summary: "print a run's journal readably",
		usage: `Usage: surf journal show FILE

Prints a run from its journal (the JSON lines surf run writes): the task,
then each step's page, the model's tool calls and reasoning, the gate's
verdicts and what happened, then how the run ended. A journal cut short by
a kill is shown up to its last whole line.

Example:
  surf journal show surf-run/journal.jsonl`,
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
		showJournal(termsafe.Writer(cli.Stdout), entries)
		if err != nil {
			fmt.Fprintf(cli.Stdout, "\n(the journal ends in a partial line: %s)\n", termsafe.String(err.Error()))
		}
		return nil
	}
	register(c)
}

func showJournal(w io.Writer, entries []journal.Entry) {
	var start time.Time
	for _, e := range entries {
		if start.IsZero() {
			start = e.Time
		}
		at := e.Time.Sub(start).Round(time.Millisecond)
		switch e.Event {
		case journal.KindRunStarted:
			fmt.Fprintf(w, "task: %s\n", termsafe.String(e.Task))
			showConfig(w, e.Config)
		case journal.KindObserved:
			fmt.Fprintf(w, "\n── step %d  (+%s)\n   page   %s  %q  (%d elements, %d tokens)\n", e.Step, at, termsafe.String(e.URL), e.Title, e.Elements, e.Tokens)
			if e.Image != "" {
				fmt.Fprintf(w, "   image  %s\n", e.Image)
			}
		case journal.KindReasoned:
			for _, c := range e.Calls {
				fmt.Fprintf(w, "   call   %s %s\n", c.Tool, compactJSON(c.Args))
				if c.Reasoning != "" {
					fmt.Fprintf(w, "          why: %s\n", c.Reasoning)
				}
			}
			if e.Content != "" {
				fmt.Fprintf(w, "   says   %s\n", textcut.Flat(e.Content, 200))
			}
			if e.Usage != nil {
				fmt.Fprintf(w, "   tokens %d (prompt %d, completion %d)\n", e.Usage.Total, e.Usage.Prompt, e.Usage.Completion)
			}
		case journal.KindGated:
			showGate(w, e)
		case journal.KindActed:
			d := time.Duration(e.Duration).Round(time.Millisecond)
			if e.Error != "" {
				fmt.Fprintf(w, "   error  %s: %s  [%s]\n", e.Tool, textcut.Flat(e.Error, 200), d)
			} else {
				fmt.Fprintf(w, "   did    %s  [%s]\n", textcut.Flat(e.Result, 200), d)
			}
		case journal.KindCorrected:
			fmt.Fprintf(w, "   fix    %s\n", textcut.Flat(e.Message, 200))
		case journal.KindRecovered:
			fmt.Fprintf(w, "   crash  %s\n", textcut.Flat(e.Message, 200))
		case journal.KindHandedOn:
			fmt.Fprintf(w, "handed on: %s\n", textcut.Flat(e.Message, 400))
		case journal.KindEnded:
			fmt.Fprintf(w, "\nended: %s after %d steps", e.EndReason, e.Steps)
			if e.Usage != nil {
				fmt.Fprintf(w, ", %d tokens", e.Usage.Total)
			}
			fmt.Fprintf(w, ", %s\n", time.Duration(e.Duration).Round(time.Millisecond))
			if e.Answer != "" {
				fmt.Fprintf(w, "answer: %s\n", e.Answer)
			}
			if len(e.Data) > 0 {
				fmt.Fprintf(w, "data: %s\n", textcut.Bytes(string(e.Data), 2000))
			}
			if e.Error != "" {
				fmt.Fprintf(w, "error: %s\n", e.Error)
			}
		}
	}
}

// showConfig prints a run's configuration, as the journal has it.
func showConfig(w io.Writer, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var cfg map[string]any
	if json.Unmarshal(raw, &cfg) != nil {
		return
	}
	var parts []string
	for _, k := range []string{"model", "start_url", "max_steps", "max_tokens", "max_time"} {
		if v, ok := cfg[k]; ok && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	fmt.Fprintf(w, "config: %s\n", strings.Join(parts, " "))
}

// showGate prints a gate's verdict.
func showGate(w io.Writer, e journal.Entry) {
	mark := ""
	if e.Verdict != "allow" {
		mark = "  <<"
	}
	line := fmt.Sprintf("   gate   %s %s", e.Verdict, e.Tool)
	if e.Target != "" {
		line += " " + e.Target
	}
	if e.Rule != "" {
		line += fmt.Sprintf(" (rule %s)", e.Rule)
	}
	if e.Approved != nil {
		line += fmt.Sprintf(" approved=%v", *e.Approved)
	}
	fmt.Fprintln(w, line+mark)
	if e.Verdict != "allow" && e.Reason != "" {
		fmt.Fprintf(w, "          %s\n", e.Reason)
	}
}

func compactJSON(b json.RawMessage) string {
	s := strings.TrimSpace(string(b))
	return textcut.Bytes(s, 200)
}
