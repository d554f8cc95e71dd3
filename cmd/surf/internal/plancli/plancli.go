// Package plancli is what surf plan and surf board show print of a plan,
// and the terminal reviewer of surf plan --review: the logic of those
// commands, kept out of package main.
package plancli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/internal/textcut"
)

// Show prints a plan: its request and state, the ledger, the rounds and
// the DAG of its tasks with their states (recs, by board id).
func Show(w io.Writer, pl *plan.Plan, recs map[string]board.Record) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "plan\t%s\n", pl.ID)
	fmt.Fprintf(tw, "request\t%s\n", textcut.Flat(pl.Request.Request, 200))
	fmt.Fprintf(tw, "state\t%s\n", pl.State)
	if pl.Request.StartURL != "" {
		fmt.Fprintf(tw, "start url\t%s\n", pl.Request.StartURL)
	}
	fmt.Fprintf(tw, "limits\t%d rounds, %d tasks, %d tokens (used %d)\n", pl.Request.MaxRounds, pl.Request.MaxTasks, pl.Request.MaxTokens, pl.Tokens)
	if pl.Answer != "" {
		fmt.Fprintf(tw, "answer\t%s\n", textcut.Flat(pl.Answer, 2000))
		fmt.Fprintf(tw, "sources\t%s\n", strings.Join(pl.Sources, ", "))
	}
	if len(pl.Data) > 0 {
		fmt.Fprintf(tw, "data\t%s\n", pl.Data)
	}
	if pl.Reason != "" {
		fmt.Fprintf(tw, "reason\t%s\n", textcut.Flat(pl.Reason, 500))
	}
	tw.Flush()
	l := pl.Ledger
	fmt.Fprintln(w, "\nledger")
	list := func(name string, xs []string) {
		for i, x := range xs {
			if i == 0 {
				fmt.Fprintf(w, "  %s:\n", name)
			}
			fmt.Fprintf(w, "    - %s\n", textcut.Flat(x, 200))
		}
	}
	list("facts given", l.FactsGiven)
	list("facts to look up", l.FactsToLookup)
	list("facts to derive", l.FactsToDerive)
	list("guesses", l.Guesses)
	if l.Plan != "" {
		fmt.Fprintln(w, "  plan:")
		for _, line := range strings.Split(strings.TrimSpace(l.Plan), "\n") {
			fmt.Fprintf(w, "    %s\n", textcut.Flat(line, 200))
		}
	}
	fmt.Fprintln(w, "\nrounds")
	for _, r := range pl.Rounds {
		fmt.Fprintf(w, "  %s\n", RoundLine(r))
		for _, f := range r.Failed {
			fmt.Fprintf(w, "      after failure of %s\n", textcut.Flat(f, 200))
		}
	}
	ids := pl.Tasks()
	if len(ids) == 0 {
		return
	}
	fmt.Fprintln(w, "\ntasks")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tSTATE\tAFTER\tOUTCOME")
	for _, r := range pl.Rounds {
		if !r.Added {
			continue
		}
		for _, t := range r.Tasks {
			rec := recs[pl.TaskID(t.ID)]
			after := "-"
			if len(t.After) > 0 {
				after = strings.Join(t.After, ",")
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", pl.TaskID(t.ID), orDash(string(rec.State)), after, textcut.Flat(outcome(rec), 80))
		}
	}
	tw.Flush()
}

// RoundLine is one line about a round.
func RoundLine(r plan.Round) string {
	s := fmt.Sprintf("round %d: %s", r.N, r.Decision)
	if len(r.Tasks) > 0 {
		var ids []string
		for _, t := range r.Tasks {
			ids = append(ids, t.ID)
		}
		s += fmt.Sprintf(" %d %s (%s)", len(ids), plural(len(ids), "task", "tasks"), strings.Join(ids, ", "))
	}
	if r.Reviewed != "" {
		s += ", " + r.Reviewed + " by the reviewer"
	}
	if r.Note != "" {
		s += ": " + textcut.Flat(r.Note, 200)
	}
	return s
}

func outcome(r board.Record) string {
	switch {
	case r.Result != nil && r.Result.Answer != "" && r.State == board.Done:
		return r.Result.Answer
	case r.Reason != "":
		return r.Reason
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// EventLine is one line about a plan's event, for surf plan's output.
func EventLine(ev plan.Event) string {
	switch ev.Kind {
	case plan.RoundDecided:
		return RoundLine(*ev.Round)
	case plan.TaskAdded:
		t := ev.Task.Task
		s := "added    " + t.ID
		if len(t.After) > 0 {
			s += " after " + strings.Join(t.After, ",")
		}
		return s + ": " + textcut.Flat(t.Instruction, 100)
	case plan.TaskEnded:
		return fmt.Sprintf("%-8s %s: %s", ev.Task.State, ev.Task.Task.ID, textcut.Flat(outcome(*ev.Task), 160))
	case plan.PlanDone:
		return "answer: " + ev.Plan.Answer + "\nsources: " + strings.Join(ev.Plan.Sources, ", ")
	case plan.PlanGaveUp:
		return "gave up: " + ev.Plan.Reason
	}
	return string(ev.Kind)
}

// EventJSON is a JSON line of surf plan --json.
type EventJSON struct {
	Event   string          `json:"event"`
	Plan    string          `json:"plan"`
	Round   *plan.Round     `json:"round,omitempty"`
	Task    string          `json:"task,omitempty"`
	State   string          `json:"state,omitempty"`
	Answer  string          `json:"answer,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Sources []string        `json:"sources,omitempty"`
	Reason  string          `json:"reason,omitempty"`
}

// JSON is ev as a JSON line's value.
func JSON(ev plan.Event) EventJSON {
	e := EventJSON{Event: string(ev.Kind), Plan: ev.Plan.ID, Round: ev.Round}
	if ev.Task != nil {
		e.Task, e.State = ev.Task.Task.ID, string(ev.Task.State)
		e.Answer, e.Reason = outcomeAnswer(*ev.Task), ev.Task.Reason
	}
	if ev.Kind == plan.PlanDone {
		e.Answer, e.Data, e.Sources = ev.Plan.Answer, ev.Plan.Data, ev.Plan.Sources
	}
	if ev.Kind == plan.PlanGaveUp {
		e.Reason = ev.Plan.Reason
	}
	return e
}

func outcomeAnswer(r board.Record) string {
	if r.Result == nil {
		return ""
	}
	return r.Result.Answer
}

// Reviewer is surf plan --review's reviewer: it prints the first plan's
// tasks to out and reads the person's choice from in: a (approve), e
// (edit the tasks in the editor, one JSON task per line, then choose
// again) or r (reject). The end of the input rejects the plan. edit
// opens a file in the person's editor.
func Reviewer(in io.Reader, out io.Writer, edit func(ctx context.Context, path string) error) plan.Reviewer {
	lines := bufio.NewScanner(in)
	return func(ctx context.Context, pl *plan.Plan, tasks []plan.TaskSpec) ([]plan.TaskSpec, error) {
		for {
			fmt.Fprintf(out, "plan %s, round 1: %d %s\n", pl.ID, len(tasks), plural(len(tasks), "task", "tasks"))
			for _, t := range tasks {
				fmt.Fprintf(out, "  %s", t.ID)
				if len(t.After) > 0 {
					fmt.Fprintf(out, " (after %s)", strings.Join(t.After, ", "))
				}
				fmt.Fprintf(out, ": %s\n", textcut.Flat(t.Instruction, 200))
				if t.StartURL != "" {
					fmt.Fprintf(out, "      start %s\n", t.StartURL)
				}
			}
			fmt.Fprint(out, "Run this plan? [a]pprove, [e]dit, [r]eject: ")
			if !lines.Scan() {
				fmt.Fprintln(out)
				return nil, fmt.Errorf("%w: no answer", plan.ErrRejected)
			}
			switch strings.ToLower(strings.TrimSpace(lines.Text())) {
			case "a", "approve", "y", "yes":
				return tasks, nil
			case "r", "reject", "n", "no":
				return nil, plan.ErrRejected
			case "e", "edit":
				edited, err := editTasks(ctx, tasks, edit)
				if err == nil {
					_, err = pl.CheckFirst(edited)
				}
				if err != nil {
					fmt.Fprintf(out, "the edit is not used: %v\n", err)
					continue
				}
				tasks = edited
			default:
				fmt.Fprintln(out, "answer a, e or r")
			}
		}
	}
}

// editTasks writes tasks to a file, one JSON task per line, lets the
// person edit it and reads it back: a deleted line is a task removed.
func editTasks(ctx context.Context, tasks []plan.TaskSpec, edit func(context.Context, string) error) ([]plan.TaskSpec, error) {
	dir, err := os.MkdirTemp("", "surf-plan-review-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "plan.jsonl")
	var buf bytes.Buffer
	buf.WriteString("# One task per line (JSON). Delete a line to remove its task; edit a line to change it. Lines starting with # are ignored.\n")
	for _, t := range tasks {
		b, err := json.Marshal(t)
		if err != nil {
			return nil, err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return nil, err
	}
	if err := edit(ctx, path); err != nil {
		return nil, fmt.Errorf("the editor: %w", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTasks(data)
}

// ParseTasks reads tasks written one JSON object per line; empty lines
// and lines starting with # are skipped.
func ParseTasks(data []byte) ([]plan.TaskSpec, error) {
	var out []plan.TaskSpec
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		var t plan.TaskSpec
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, errors.New("no task is left")
	}
	return out, nil
}

// ShowOnBoard prints plan id of b, when b holds a plan by that id (false
// when it does not): Show, or with asJSON the plan's record and its
// tasks' records as indented JSON.
func ShowOnBoard(ctx context.Context, w io.Writer, b *board.Board, id string, asJSON bool) (bool, error) {
	pl, err := plan.Get(ctx, b, id)
	if errors.Is(err, board.ErrNoPlan) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	recs := map[string]board.Record{}
	tasks := []board.Record{}
	for _, tid := range pl.Tasks() {
		if r, err := b.Get(ctx, tid); err == nil {
			recs[tid] = r
			tasks = append(tasks, r)
		}
	}
	if !asJSON {
		Show(w, pl, recs)
		return true, nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return true, enc.Encode(struct {
		*plan.Plan
		TaskRecords []board.Record `json:"task_records"`
	}{pl, tasks})
}
