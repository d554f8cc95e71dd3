package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/cmd/surf/internal/prompt"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// runUsage is the usage text of surf run.
var runUsage = helpText("run")

func init() {
	c := &command{
		name:    "run",
		summary: "run a task with a model: observe, reason, gate, act, until answered",
		usage:   runUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runTask(ctx, cli, c, args) }
	register(c)
}

// runFlags are surf run's flags and its TASK.
type runFlags struct {
	startURL, journal, report, approve string
	maxSteps, maxTokens                int
	maxTime, approvalTTL               time.Duration
	overwrite, json, progress          bool
	mf                                 *modelFlags
	bf                                 *browserFlags
	uf                                 *uiFlags
	uiOpts                             mcpserver.HTTPOptions
	withUI                             bool
	task                               string
	schemaFile                         string
	schema                             *tools.OutputSchema
}

func parseRunFlags(c *command, args []string) (*runFlags, error) {
	fs := newFlags(c)
	f := &runFlags{}
	fs.StringVar(&f.startURL, "start-url", "", "")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "")
	fs.DurationVar(&f.maxTime, "max-time", 0, "")
	fs.StringVar(&f.journal, "journal", "surf-run/journal.jsonl", "")
	fs.BoolVar(&f.overwrite, "overwrite", false, "")
	fs.StringVar(&f.report, "report", "", "")
	fs.StringVar(&f.approve, "approve", "", "")
	fs.DurationVar(&f.approvalTTL, "approval-ttl", 0, "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar(&f.schemaFile, "output-schema", "", "")
	fs.BoolVar(&f.progress, "progress", false, "")
	f.mf = addModelFlags(fs)
	f.bf = addBrowserFlags(fs)
	f.bf.state = addStateFlags(fs)
	f.uf = addUIFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	var err error
	if f.uiOpts, f.withUI, err = f.uf.options(c); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 || strings.TrimSpace(fs.Arg(0)) == "" {
		return nil, usagef(c, "run takes one TASK, quoted")
	}
	if f.maxSteps < 0 || f.maxTokens < 0 || f.maxTime < 0 || f.approvalTTL < 0 {
		return nil, usagef(c, "limits cannot be negative")
	}
	f.task = fs.Arg(0)
	if f.schemaFile != "" {
		if f.schema, err = readOutputSchema(f.schemaFile); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// approver answers the run's "ask" decisions from --approve, on the
// status line's terms; nil when the live view alone answers.
func (f *runFlags) approver(c *command, cli *CLI, status *statusLine) (policy.Approver, error) {
	var approver policy.Approver
	if mode, _ := prompt.Mode(f.approve, cli.Stdin); !f.withUI || f.approve != "" || mode == "prompt" {
		var err error
		if approver, err = prompt.ForMode(f.approve, cli.Stdin, cli.Stderr); err != nil {
			return nil, usagef(c, "%v", err)
		}
	} // else the live view alone answers
	if status != nil && approver != nil {
		approver = status.clearing(approver)
	}
	return approver, nil
}

// runTask is surf run.
func runTask(ctx context.Context, cli *CLI, c *command, args []string) (err error) {
	f, err := parseRunFlags(c, args)
	if err != nil {
		return err
	}
	if !f.overwrite {
		// Before anything starts: the run would have nowhere to go.
		if err := journalAvailable(f.journal); err != nil {
			return err
		}
	}
	status := newStatusLine(cli.Stderr, f.progress)
	approver, err := f.approver(c, cli, status)
	if err != nil {
		return err
	}
	var ls *live.Session
	if f.withUI {
		lv, err := startLiveView(ctx, cli, *f.uf.addr, f.uiOpts)
		if err != nil {
			return err
		}
		defer lv.Close()
		if ls, err = lv.hub.Open(live.SessionOptions{Owner: "surf run", Redact: f.bf.redact}); err != nil {
			return err
		}
		defer ls.Close()
		approver = ls.Approver(approver)
	}
	b, err := f.openBrowser(ctx, cli, approver, ls)
	if err != nil {
		return err
	}
	defer b.closeInto(&err)
	attachLive(ls, b.Surfer(), b.Session())
	j, err := f.openJournal(cli, b)
	if err != nil {
		return err
	}
	opts := websurfer.RunOptions{
		StartURL: f.startURL, MaxSteps: f.maxSteps, MaxTokens: f.maxTokens, MaxTime: f.maxTime,
		Journal: j, Relaunch: b.Relaunch, Logger: cli.Logger, OutputSchema: f.schema,
	}
	start := time.Now()
	runCtx := ctx
	if status != nil {
		runCtx = websurfer.WithProgress(ctx, status.show)
	}
	if ls != nil {
		var show func(string)
		if status != nil {
			show = status.show
		}
		runCtx = websurfer.WithProgress(ctx, tee(show, ls.Progress))
		opts.Between = ls.Between
		end := ls.Begin()
		defer end()
		// Stop in the live view ends the run cleanly, as cancelled.
		var stop context.CancelCauseFunc
		runCtx, stop = context.WithCancelCause(runCtx)
		defer stop(nil)
		defer ls.OnStop(func(string) { stop(errStopped) })()
	}
	end, runErr := f.steps(runCtx, cli, b, opts, status, ls)
	if errors.Is(context.Cause(runCtx), errStopped) && errors.Is(runErr, context.Canceled) {
		runErr = nil
	}
	if err := j.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing the journal: %w", err)
	}
	return f.finish(cli, end, runErr, time.Since(start))
}

// errStopped is the cause of a run's end when a person stopped it in the
// live view.
var errStopped = errors.New("stopped in the live view")

// openBrowser starts the model client and the browser the run drives.
func (f *runFlags) openBrowser(ctx context.Context, cli *CLI, approver policy.Approver, ls *live.Session) (*browser, error) {
	f.mf.redact = f.bf.redact
	model, modelName, err := f.mf.client(ctx, cli)
	if err != nil {
		return nil, err
	}
	scfg := websurfer.Config{ModelName: modelName, Approver: approver, ApprovalTTL: f.approvalTTL, TracerProvider: cli.Tracer}
	if ls != nil {
		scfg.Human = ls
	}
	return f.bf.open(ctx, cli, openOptions{model: model, surf: scfg})
}

// openJournal checks the start URL against the policy and opens the
// run's journal, replacing an earlier run's with --overwrite.
func (f *runFlags) openJournal(cli *CLI, b *browser) (*journal.Writer, error) {
	if f.startURL != "" {
		// A start URL on an ask host is put to the approver like any
		// visit, unless it can only say no.
		mode, _ := prompt.Mode(f.approve, cli.Stdin)
		if d := b.pol.DecideURL(policy.Navigation, f.startURL, ""); d.Verdict != policy.Ask || mode == "deny" {
			if err := b.checkURL(f.startURL); err != nil {
				return nil, err
			}
		}
	}
	if f.overwrite {
		if err := journal.Remove(f.journal); err != nil {
			return nil, err
		}
	}
	j, err := journal.Open(f.journal, b.pol.Redact)
	if err != nil {
		return nil, journalExistsHint(err)
	}
	return j, nil
}

// steps runs the agent loop, printing each step, and returns the last
// one (nil when the run ended without one) and the run's error.
func (f *runFlags) steps(ctx context.Context, cli *CLI, b *browser, opts websurfer.RunOptions, status *statusLine, ls *live.Session) (end *websurfer.Step, runErr error) {
	for st, err := range b.Surfer().Run(ctx, f.task, opts) {
		status.clear()
		if ls != nil {
			ls.Step(st)
		}
		if st != nil {
			if !f.json {
				printStep(termsafe.Writer(cli.Stdout), st)
			}
			if st.Done {
				end = st
			}
		}
		if err != nil {
			runErr = err
		}
	}
	return end, runErr
}

// finish writes the report, prints the run's end and returns its error.
func (f *runFlags) finish(cli *CLI, end *websurfer.Step, runErr error, took time.Duration) error {
	reported := ""
	if f.report != "" {
		if err := writeReport(f.journal, f.report); err != nil {
			fmt.Fprintf(cli.Stderr, "surf: error: writing the report: %v\n", err)
		} else {
			reported = f.report
		}
	}
	if end == nil {
		end = &websurfer.Step{EndReason: journal.EndError}
	}
	if f.json {
		out := map[string]any{"end_reason": end.EndReason, "answer": end.Answer, "steps": end.N,
			"tokens": end.Total.Total, "duration_ms": took.Milliseconds(), "journal": f.journal}
		if reported != "" {
			out["report"] = reported
		}
		if end.Data != nil {
			out["data"] = end.Data
		}
		if end.Failure != "" {
			out["failure"] = end.Failure
		}
		if runErr != nil {
			out["error"] = runErr.Error()
		}
		enc := json.NewEncoder(cli.Stdout)
		enc.SetIndent("", "  ")
		enc.Encode(out)
	} else {
		fmt.Fprintf(cli.Stdout, "\nended: %s after %d steps, %d tokens, %s\n", end.EndReason, end.N, end.Total.Total, took.Round(100*time.Millisecond))
		if end.Answer != "" {
			fmt.Fprintf(termsafe.Writer(cli.Stdout), "answer: %s\n", end.Answer)
		}
		if end.Data != nil {
			fmt.Fprintf(termsafe.Writer(cli.Stdout), "data: %s\n", end.Data)
		}
		if end.Failure != "" {
			fmt.Fprintf(termsafe.Writer(cli.Stdout), "failure: %s\n", end.Failure)
		}
		fmt.Fprintf(cli.Stdout, "journal: %s\n", f.journal)
		if reported != "" {
			fmt.Fprintf(cli.Stdout, "report: %s\n", reported)
		}
	}
	if runErr != nil {
		return runErr
	}
	if end.EndReason != journal.EndAnswered {
		return &exitError{code: 1}
	}
	return nil
}

// printStep shows a step as it happens: the tool, its target, the gate's
// verdict and the time.
func printStep(w io.Writer, st *websurfer.Step) {
	if st.Recovered != "" {
		fmt.Fprintf(w, "step %2d  recovered: %s\n", st.N, st.Recovered)
	}
	for i, c := range st.Calls {
		verdict := "allow"
		for _, d := range st.Decisions {
			if d.Verdict != policy.Allow {
				verdict = fmt.Sprintf("%s (%s)", d.Verdict, d.Rule)
			}
		}
		res := ""
		if i < len(st.Results) {
			r := st.Results[i]
			res = textcut.FirstLine(r.Text)
			if r.IsError {
				res = "error: " + res
			}
		} else if i > 0 {
			res = "not run"
		}
		args := strings.TrimSpace(string(c.Args))
		args = textcut.Bytes(args, 120)
		fmt.Fprintf(w, "step %2d  %-16s %s  [%s, %s]\n         %s\n", st.N, c.Tool, args, verdict, st.Duration.Round(time.Millisecond), textcut.Flat(res, 160))
	}
	if len(st.Calls) == 0 && st.Content != "" && !st.Done {
		fmt.Fprintf(w, "step %2d  (no tool call) %s\n", st.N, textcut.Flat(st.Content, 160))
	}
	for _, n := range st.Notes {
		fmt.Fprintf(w, "         note: %s\n", textcut.Flat(n, 160))
	}
}

// writeReport renders a journal as HTML; see cmd_report.go.
var writeReport = func(journal, out string) error {
	return fmt.Errorf("reports are not available in this build (%s)", filepath.Base(out))
}

// readOutputSchema reads and parses a --output-schema file.
func readOutputSchema(path string) (*tools.OutputSchema, error) {
	s, err := tools.ReadOutputSchema(path)
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, fmt.Errorf("--output-schema: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("--output-schema %s: %w", path, err)
	}
	return s, nil
}

// journalAvailable checks that a run's journal can go to path, with a hint
// when an earlier run is there.
func journalAvailable(path string) error {
	return journalExistsHint(journal.Available(path))
}

// journalExistsHint adds the way out to an error saying an earlier run's journal
// is in the way.
func journalExistsHint(err error) error {
	if errors.Is(err, journal.ErrExists) {
		return withHint(err,
			"pass --journal with a new file to keep it, or --overwrite to replace it (the journal and its images)")
	}
	return err
}
