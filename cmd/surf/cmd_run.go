package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
	"golang.org/x/term"
)

func init() {
	c := &command{
		name:    "run",
		summary: "run a task with a model: observe, reason, gate, act, until answered",
		usage: `Usage: surf run "TASK" [--start-url URL] [flags]

Runs the agent loop on TASK in a sandboxed browser: each step observes the
page, asks the model which tool to call, passes the call through the policy
gate and acts. Each step is shown as it happens; the answer is printed at
the end. The journal (and the set-of-mark images beside it) records every
step.

Flags:
  --start-url URL     open URL first (it must be allowed by the policy)
  --max-steps N       stop after N steps (default 25)
  --max-tokens N      stop after N model tokens (default 500000)
  --max-time D        stop after D, e.g. 5m (default 15m)
  --journal FILE      where the journal goes (default surf-run/journal.jsonl);
                      surf refuses a FILE where an earlier run's journal or
                      its images are, rather than lose or mix them
  --overwrite         replace the earlier run at --journal (the journal and
                      its images) instead of refusing
  --report FILE       also write the run as a self-contained HTML report
  --approve MODE      prompt, deny or allow actions the policy marks "ask"
                      (default: prompt on a terminal, deny otherwise); an
                      approved host of an ask entry stays open for the run
  --approval-ttl D    keep an approved host open for D only (default: the
                      whole run)
  --json              print the result as JSON
  --progress          print what the run is doing as it goes ("surf: step 2:
                      asking the model") on stderr; on a terminal it is
                      shown anyway, on one line that the steps replace
` + uiFlagsHelp + `
                      With --ui, "ask" actions are put to the live view
                      and to --approve (the first answer wins); without a
                      terminal and without --approve, the live view alone
                      answers them. The agent's request_help waits there.
` + modelFlagsHelp + `
` + browserFlagsHelp + `
` + stateFlagsHelp + `

Examples:
  OPENAI_API_KEY=... surf run "find the opening hours of the library" --start-url https://example.org/ --allow example.org
  surf run "summarize the front page" --start-url https://news.example/ --base-url http://127.0.0.1:11434/v1 --model qwen2.5-vl
  surf run "log in and download the invoice" --start-url https://shop.example/ --allow shop.example --ui 127.0.0.1:8932`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) (err error) {
		fs := newFlags(c)
		startURL := fs.String("start-url", "", "")
		maxSteps := fs.Int("max-steps", 0, "")
		maxTokens := fs.Int("max-tokens", 0, "")
		maxTime := fs.Duration("max-time", 0, "")
		journalPath := fs.String("journal", "surf-run/journal.jsonl", "")
		overwrite := fs.Bool("overwrite", false, "")
		reportPath := fs.String("report", "", "")
		approve := fs.String("approve", "", "")
		approvalTTL := fs.Duration("approval-ttl", 0, "")
		asJSON := fs.Bool("json", false, "")
		progressLines := fs.Bool("progress", false, "")
		mf := addModelFlags(fs)
		bf := addBrowserFlags(fs)
		bf.state = addStateFlags(fs)
		uf := addUIFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		uiOpts, withUI, err := uf.options(c)
		if err != nil {
			return err
		}
		if fs.NArg() != 1 || strings.TrimSpace(fs.Arg(0)) == "" {
			return usagef(c, "run takes one TASK, quoted")
		}
		if *maxSteps < 0 || *maxTokens < 0 || *maxTime < 0 || *approvalTTL < 0 {
			return usagef(c, "limits cannot be negative")
		}
		if !*overwrite {
			// Before anything starts: the run would have nowhere to go.
			if err := journalAvailable(*journalPath); err != nil {
				return err
			}
		}
		var approver policy.Approver
		if mode, _ := approveMode(cli, *approve); !withUI || *approve != "" || mode == "prompt" {
			if approver, err = approverFor(cli, *approve); err != nil {
				return usagef(c, "%v", err)
			}
		} // else the live view alone answers
		status := newStatusLine(cli.Stderr, *progressLines)
		if status != nil && approver != nil {
			approver = status.clearing(approver)
		}
		var ls *live.Session
		if withUI {
			lv, err := startLiveView(ctx, cli, *uf.addr, uiOpts)
			if err != nil {
				return err
			}
			defer lv.Close()
			if ls, err = lv.hub.Open(live.SessionOptions{Owner: "surf run", Redact: bf.redact}); err != nil {
				return err
			}
			defer ls.Close()
			approver = ls.Approver(approver)
		}
		mf.redact = bf.redact
		model, modelName, err := mf.client(ctx, cli)
		if err != nil {
			return err
		}
		scfg := websurfer.Config{ModelName: modelName, Approver: approver, ApprovalTTL: *approvalTTL}
		if ls != nil {
			scfg.Human = ls
		}
		b, err := bf.open(ctx, cli, openOptions{model: model, surf: scfg})
		if err != nil {
			return err
		}
		defer b.closeInto(&err)
		attachLive(ls, b.surf, b.sess)
		if *startURL != "" {
			// A start URL on an ask host is put to the approver like any
			// visit, unless it can only say no.
			mode, _ := approveMode(cli, *approve)
			if d := b.pol.DecideURL(policy.Navigation, *startURL, ""); d.Verdict != policy.Ask || mode == "deny" {
				if err := b.checkURL(*startURL); err != nil {
					return err
				}
			}
		}
		if *overwrite {
			if err := journal.Remove(*journalPath); err != nil {
				return err
			}
		}
		j, err := journal.Open(*journalPath, b.pol.Redact)
		if err != nil {
			return journalExistsHint(err)
		}
		opts := websurfer.RunOptions{
			StartURL: *startURL, MaxSteps: *maxSteps, MaxTokens: *maxTokens, MaxTime: *maxTime,
			Journal: j, Relaunch: b.relaunchFunc(ctx, cli), Logger: cli.Logger,
		}
		start := time.Now()
		var end *websurfer.Step
		var runErr error
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
		}
		for st, err := range b.surf.Run(runCtx, fs.Arg(0), opts) {
			status.clear()
			if ls != nil {
				ls.Step(st)
			}
			if st != nil {
				if !*asJSON {
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
		if err := j.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("writing the journal: %w", err)
		}
		reported := ""
		if *reportPath != "" {
			if err := writeReport(*journalPath, *reportPath); err != nil {
				fmt.Fprintf(cli.Stderr, "surf: error: writing the report: %v\n", err)
			} else {
				reported = *reportPath
			}
		}
		if end == nil {
			end = &websurfer.Step{EndReason: journal.EndError}
		}
		if *asJSON {
			out := map[string]any{"end_reason": end.EndReason, "answer": end.Answer, "steps": end.N,
				"tokens": end.Total.Total, "duration_ms": time.Since(start).Milliseconds(), "journal": *journalPath}
			if reported != "" {
				out["report"] = reported
			}
			if runErr != nil {
				out["error"] = runErr.Error()
			}
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			enc.Encode(out)
		} else {
			fmt.Fprintf(cli.Stdout, "\nended: %s after %d steps, %d tokens, %s\n", end.EndReason, end.N, end.Total.Total, time.Since(start).Round(100*time.Millisecond))
			if end.Answer != "" {
				fmt.Fprintf(termsafe.Writer(cli.Stdout), "answer: %s\n", end.Answer)
			}
			fmt.Fprintf(cli.Stdout, "journal: %s\n", *journalPath)
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
	register(c)
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

// approveMode is the --approve mode in effect: the flag's, else prompt on
// a terminal and deny otherwise.
func approveMode(cli *CLI, mode string) (string, bool) {
	tty := false
	if f, ok := cli.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	if mode == "" {
		mode = "deny"
		if tty {
			mode = "prompt"
		}
	}
	return mode, tty
}

// approverFor answers the policy's Ask decisions.
func approverFor(cli *CLI, mode string) (policy.Approver, error) {
	mode, tty := approveMode(cli, mode)
	switch mode {
	case "allow":
		return policy.AllowAll(), nil
	case "deny":
		return policy.DenyAll(), nil
	case "prompt":
		if !tty {
			return nil, errors.New("--approve prompt needs a terminal; use allow or deny")
		}
		var mu sync.Mutex
		// One reader of the terminal, so that a question another
		// approver answered first (the live view) can stop waiting.
		var start sync.Once
		lines := make(chan string)
		read := func() {
			in := bufio.NewReader(cli.Stdin)
			for {
				line, err := in.ReadString('\n')
				if line != "" || err == nil {
					lines <- line
				}
				if err != nil {
					close(lines)
					return
				}
			}
		}
		return policy.ApproverFunc(func(ctx context.Context, d policy.Decision) (bool, error) {
			mu.Lock()
			defer mu.Unlock()
			start.Do(func() { go read() })
			what := d.Tool
			if d.URL != "" {
				what += " " + d.URL
			}
			opens := ""
			if d.Rule == policy.RuleAsk && d.Host != "" {
				opens = "; yes opens " + d.Host + " for this run"
			}
			fmt.Fprintf(cli.Stderr, "surf: approve %s? (%s%s) [y/N] ", what, strings.TrimPrefix(d.Reason, "ask: "), opens)
			select {
			case line, ok := <-lines:
				if !ok {
					return false, nil // end of input: no
				}
				ans := strings.ToLower(strings.TrimSpace(line))
				return ans == "y" || ans == "yes", nil
			case <-ctx.Done():
				fmt.Fprintln(cli.Stderr, "(answered elsewhere)")
				return false, ctx.Err()
			}
		}), nil
	}
	return nil, fmt.Errorf("--approve must be prompt, deny or allow, not %q", mode)
}

// relaunchFunc replaces a browser that crashed or disconnected: a new
// sandbox with the same settings, and a session in it.
func (b *browser) relaunchFunc(ctx context.Context, cli *CLI) func(context.Context) (*sandbox.Session, error) {
	return func(ctx context.Context) (*sandbox.Session, error) {
		if b.bf.recordHAR != "" {
			// A new session would write a recording without the pages
			// of the one that died.
			return nil, errors.New("the browser died while recording a HAR; the recording would be incomplete, so the run stops")
		}
		old := b.sb
		cfg, err := b.bf.sandboxConfig(cli, b.pol)
		if err != nil {
			return nil, err
		}
		// The run tries again once if this browser dies too before its
		// session is ready (websurfer's relaunch).
		sb, err := sandbox.New(ctx, cfg)
		if err != nil {
			return nil, err
		}
		sess, err := sb.NewSession(ctx, b.bf.sessionConfig())
		if err != nil {
			sb.Close()
			return nil, err
		}
		b.sb, b.sess = sb, sess
		go old.Close() // its browser is gone; clean up what is left
		return sess, nil
	}
}

// writeReport renders a journal as HTML; see cmd_report.go.
var writeReport = func(journal, out string) error {
	return fmt.Errorf("reports are not available in this build (%s)", filepath.Base(out))
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
