package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/away"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// run is the websurfer tool: the agent loop on the session's surfer with
// the server's model. The result is the answer, how the run ended and one
// line per step; a run that ends without an answer is an error result.
func (se *session) run(ctx context.Context, surf *websurfer.Surfer, pol *policy.Policy, ls *live.Session, in WebsurferArgs) (*tools.Result, error) {
	s := se.srv
	if s.cfg.Model == nil {
		msg := "the websurfer tool needs a model, and this server has none configured: start surf serve with --model and --base-url (or OPENAI_API_KEY and SURF_MODEL)"
		if s.cfg.ModelError != nil {
			msg += " (" + s.cfg.ModelError.Error() + ")"
		}
		return nil, tools.Errorf("%s", msg)
	}
	steps := in.MaxSteps
	if steps == 0 {
		steps = DefaultRunSteps
	}
	opts := websurfer.RunOptions{
		Model:     away.Model(s.cfg.Model), // the call's turn serves others while it thinks
		ModelName: s.cfg.ModelName,
		StartURL:  strings.TrimSpace(in.StartURL),
		MaxSteps:  steps,
		MaxTime:   s.cfg.RunTimeout,
		Logger:    se.log,

		OutputSchema: outputSchemaOf(ctx),
	}
	j, jpath, err := se.journal(pol)
	if err != nil {
		return nil, err
	}
	if j != nil {
		opts.Journal = j
		defer func() {
			if err := j.Close(); err != nil {
				se.log.Warn("closing the run's journal", "file", jpath, "err", err)
			}
		}()
	}
	if ls != nil {
		opts.Between = away.Between(ls.Between)
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		defer ls.OnStop(func(string) { stop() })()
	}
	var lines []string
	var last *websurfer.Step
	var runErr error
	for st, err := range surf.Run(ctx, in.Instruction, opts) {
		if ls != nil {
			ls.Step(st)
		}
		if st != nil {
			lines = append(lines, stepLines(st)...)
			if st.Done {
				last = st
			}
		}
		if err != nil {
			runErr = err
		}
	}
	if last == nil {
		if runErr == nil {
			runErr = errors.New("the run ended without a last step")
		}
		if ctx.Err() != nil {
			return nil, runErr // timed out or cancelled: the caller reports it
		}
		return nil, tools.Errorf("the web surfer could not run: %v", runErr)
	}
	var b strings.Builder
	if last.Answer != "" {
		fmt.Fprintf(&b, "answer: %s\n", last.Answer)
	} else {
		b.WriteString("answer: (none)\n")
	}
	if last.Data != nil {
		fmt.Fprintf(&b, "data: %s\n", last.Data)
	}
	if last.Failure != "" {
		fmt.Fprintf(&b, "failure: %s\n", last.Failure)
	}
	fmt.Fprintf(&b, "ended: %s after %d steps, %d model tokens", last.EndReason, last.N, last.Total.Total)
	if runErr != nil {
		fmt.Fprintf(&b, "; error: %v", runErr)
	}
	b.WriteString("\n")
	if o := surf.Last(); o != nil {
		// The page's words, quoted and cut as in an observation.
		fmt.Fprintf(&b, "last page: %s %s\n", perception.Quote(o.URL, 200), perception.Quote(o.Title, 120))
	}
	if jpath != "" {
		fmt.Fprintf(&b, "journal: %s\n", jpath)
	}
	b.WriteString("steps:\n")
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	res := tools.Text(strings.TrimRight(b.String(), "\n"))
	res.IsError = last.EndReason != journal.EndAnswered
	data := WebsurferResult{Answer: last.Answer, Data: last.Data, Failure: last.Failure, EndReason: string(last.EndReason), Steps: last.N, Tokens: last.Total.Total, Journal: jpath, Summary: lines}
	if data.Summary == nil {
		data.Summary = []string{}
	}
	if runErr != nil {
		data.Error = runErr.Error()
	}
	if o := surf.Last(); o != nil {
		data.LastURL, data.LastTitle = o.URL, o.Title
	}
	res.Data = data
	return res, nil
}

// stepLines summarizes a step: one line per call, with its target and the
// policy's verdict.
func stepLines(st *websurfer.Step) []string {
	var out []string
	for i, c := range st.Calls {
		target := compactArgs(c.Args)
		verdict := "allow"
		for _, d := range st.Decisions {
			if d.Target != "" && i == 0 {
				target = d.Target
			}
			if v := d.Outcome(); v != "allow" {
				verdict = v
			}
		}
		line := fmt.Sprintf("%d. %s %s [%s]", st.N, c.Tool, target, verdict)
		switch {
		case i < len(st.Results) && st.Results[i].IsError:
			line += " error: " + textcut.Line(st.Results[i].Text, 160)
		case i >= len(st.Results):
			line += " (not run)"
		}
		out = append(out, line)
	}
	if len(st.Calls) == 0 {
		if st.Done && st.Content != "" {
			out = append(out, fmt.Sprintf("%d. (answered in text)", st.N))
		} else {
			out = append(out, fmt.Sprintf("%d. (no tool call)", st.N))
		}
	}
	return out
}

// compactArgs is a call's arguments on one line, without the reasoning.
func compactArgs(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return textcut.Line(string(raw), 120)
	}
	delete(m, "reasoning")
	if len(m) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(m)
	return textcut.Line(string(b), 120)
}

// journal opens the journal of the session's next websurfer run, when the
// server keeps them: JournalDir/client-ID/SESSION/run-N.jsonl. Secrets are
// redacted by the session's policy.
func (se *session) journal(pol *policy.Policy) (*journal.Writer, string, error) {
	s := se.srv
	if s.cfg.JournalDir == "" {
		return nil, "", nil
	}
	dir := filepath.Join(s.cfg.JournalDir, fmt.Sprintf("client-%d", se.cl.id), se.name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("making the run's journal directory: %w", err)
	}
	// A server started again with the same directory finds the earlier
	// server's runs there: journal.Open refuses to replace one, so the run
	// takes the next free number (bounded: a directory full of runs is an
	// error, not a loop).
	for range maxJournalTries {
		s.mu.Lock()
		se.runs++
		n := se.runs
		s.mu.Unlock()
		path := filepath.Join(dir, fmt.Sprintf("run-%d.jsonl", n))
		j, err := journal.Open(path, pol.Redact)
		if errors.Is(err, journal.ErrExists) {
			continue
		}
		if err != nil {
			return nil, "", fmt.Errorf("opening the run's journal: %w", err)
		}
		return j, path, nil
	}
	return nil, "", fmt.Errorf("opening the run's journal: %d earlier runs' journals are in %s", maxJournalTries, dir)
}

// maxJournalTries bounds the search for a free run number in a session's
// journal directory.
const maxJournalTries = 10000
