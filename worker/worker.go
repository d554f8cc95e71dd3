package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/internal/away"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// taskRunnerOptions configure a taskRunner: the browser every task of the
// process shares, the worker's policy, the defaults of the tasks' limits
// and per-task hooks.
type taskRunnerOptions struct {
	// sandbox launches the browser (and relaunches it when it dies). Its
	// Policy is the worker's policy when base is nil.
	sandbox sandbox.Config
	// base is the worker's policy; each task's Policy narrows it. Nil
	// means sandbox.Policy.
	base *policy.Policy
	// surf is the template of each task's surfer (token budget, search
	// engine, approver...). Session, Policy, Model and Logger are set per
	// task. A nil Approver denies what the policy marks "ask": an
	// unattended worker has nobody to ask.
	surf websurfer.Config
	// session is each task's session unless sessionFor is set.
	session sandbox.SessionConfig
	// sessionFor, when set, gives a task's session configuration (a
	// per-task ReplayHAR, say). Its Policy is replaced by the task's.
	sessionFor func(board.Task) sandbox.SessionConfig
	// surfFor, when set, adjusts the surfer's configuration for a task
	// (a per-task search engine, say).
	surfFor func(board.Task, websurfer.Config) websurfer.Config
	// modelFor gives a task's model and its name. Required.
	modelFor func(board.Task) (websurfer.Model, string, error)
	// maxSteps, maxTokens and maxTime are the limits of a task that sets
	// none; zeros mean websurfer's defaults.
	maxSteps  int
	maxTokens int
	maxTime   time.Duration
	// storeTime bounds the storing of a task's files on the board
	// (default 1m); what is not stored by then is noted on the task.
	storeTime time.Duration
	// logger receives diagnostics; nil discards them.
	logger *slog.Logger
	// live, when set, registers each task's session in the live view
	// while it runs; with liveAlone the live view alone answers "ask"
	// actions (surf.Approver is not asked).
	live      *live.Hub
	liveAlone bool
	// turns, when set, admits the tasks' browser work (see turns.go):
	// a task holds a turn while it drives the browser, not while it
	// waits on its model or a person.
	turns *admit.Queue
}

// taskRunner runs board tasks in one browser: one sandbox per process, one
// isolated session and surfer per claim. Its run is a board.RunFunc, safe
// for concurrent claims.
type taskRunner struct {
	o    taskRunnerOptions
	log  *slog.Logger
	asks bool // the surfers' Approver may ask a person (and wait)

	mu     sync.Mutex
	sb     *sandbox.Sandbox
	closed bool
	olds   sync.WaitGroup // sandboxes replaced after a crash, closing
}

// newTaskRunner launches the browser the tasks will share.
func newTaskRunner(ctx context.Context, cli *CLI, o taskRunnerOptions) (*taskRunner, error) {
	if o.modelFor == nil {
		return nil, errors.New("the task runner needs a model")
	}
	if o.base == nil {
		o.base = o.sandbox.Policy
	}
	if o.base == nil {
		return nil, errors.New("the task runner needs a policy")
	}
	if o.sandbox.Policy == nil {
		o.sandbox.Policy = o.base
	}
	asks := o.surf.Approver != nil // a person may be asked
	if o.surf.Approver == nil {
		o.surf.Approver = policy.DenyAll()
	}
	if o.maxSteps < 0 || o.maxTokens < 0 || o.maxTime < 0 || o.storeTime < 0 {
		return nil, errors.New("the task runner's limits cannot be negative")
	}
	if o.logger == nil {
		o.logger = cli.Logger
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	r := &taskRunner{o: o, log: o.logger, asks: asks}
	sb, err := retryLostBrowser(ctx, cli, func() (*sandbox.Sandbox, error) { return sandbox.New(ctx, o.sandbox) })
	if err != nil {
		return nil, err
	}
	r.sb = sb
	return r, nil
}

// Close closes the browser, and waits for those replaced after a crash.
func (r *taskRunner) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	sb := r.sb
	r.mu.Unlock()
	err := sb.Close()
	r.olds.Wait()
	return err
}

var errRunnerClosed = errors.New("the task runner is closed")

// sandbox is the browser to open a session in: the current one, or a new
// one when it has gone away.
func (r *taskRunner) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	r.mu.Lock()
	sb := r.sb
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, errRunnerClosed
	}
	if b := sb.Browser(); b != nil && !b.IsConnected() {
		return r.replace(ctx, sb)
	}
	return sb, nil
}

// replace relaunches the browser once it is gone: the first run to see
// old die starts a new sandbox, the others use it.
func (r *taskRunner) replace(ctx context.Context, old *sandbox.Sandbox) (*sandbox.Sandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errRunnerClosed
	}
	if r.sb != old {
		return r.sb, nil // another run relaunched it already
	}
	r.log.Warn("the browser is gone; relaunching it")
	sb, err := sandbox.New(ctx, r.o.sandbox)
	if err != nil {
		return nil, fmt.Errorf("the browser is gone and relaunching it failed: %w", err)
	}
	r.sb = sb
	r.olds.Add(1)
	go func() {
		defer r.olds.Done()
		old.Close() // its browser is gone; clean up what is left
	}()
	return sb, nil
}

// taskRun is one claim's run: its session(s), surfer and files.
type taskRun struct {
	r     *taskRunner
	c     *board.Claim
	scfg  sandbox.SessionConfig
	mu    sync.Mutex
	sb    *sandbox.Sandbox
	sess  []*sandbox.Session
	surf  *websurfer.Surfer
	dir   string
	jpath string
}

// run runs a claimed task: a board.RunFunc. A run that ends answered is
// done; one that ends otherwise (a limit, a stall) fails with how it
// ended; a runtime error (the browser lost for good, the model endpoint
// down) asks the board for another attempt.
func (r *taskRunner) run(ctx context.Context, c *board.Claim) (*board.Result, error) {
	start := time.Now()
	t := c.Task
	pol, err := t.Policy.Apply(r.o.base)
	if err != nil {
		return nil, fmt.Errorf("the task's policy: %w", err)
	}
	if t.StartURL != "" {
		if d := pol.DecideURL(policy.Navigation, t.StartURL, ""); d.Verdict == policy.Deny {
			return nil, fmt.Errorf("the start URL %s is denied: %s", t.StartURL, d.Reason)
		}
	}
	model, modelName, err := r.o.modelFor(t)
	if err != nil {
		return nil, fmt.Errorf("the task's model: %w", err)
	}
	tr := &taskRun{r: r, c: c, scfg: r.o.session}
	if r.o.sessionFor != nil {
		tr.scfg = r.o.sessionFor(t)
	}
	tr.scfg.Policy = pol
	var opened, ran, stored, sessOpened time.Time
	defer func() {
		closing := time.Now()
		tr.close()
		if !stored.IsZero() {
			r.log.Debug("task timings", "task", t.ID, "open", opened.Sub(start), "session", sessOpened.Sub(start), "run", ran.Sub(opened),
				"store", stored.Sub(ran), "close", time.Since(closing))
		}
	}()

	sb, err := r.sandbox(ctx)
	if err != nil {
		return nil, r.retryable(ctx, fmt.Errorf("the browser: %w", err))
	}
	turn := r.o.turns.Turn()
	defer turn.Drop()
	if _, err := turn.Take(ctx); err != nil {
		return nil, err
	}
	ctx = admit.WithTurn(ctx, turn) // see turns.go
	sess, err := tr.open(ctx, sb)
	sessOpened = time.Now()
	if err != nil && ctx.Err() == nil && sandbox.BrowserGone(err) {
		// the browser died just now: once more, on a new one
		if sb, err = r.replace(ctx, sb); err == nil {
			sess, err = tr.open(ctx, sb)
		}
	}
	if err != nil {
		return nil, r.retryable(ctx, fmt.Errorf("opening a session: %w", err))
	}
	cfg := r.o.surf
	if r.o.surfFor != nil {
		cfg = r.o.surfFor(t, cfg)
	}
	cfg.Session, cfg.Policy, cfg.Model, cfg.ModelName, cfg.Logger = sess, pol, model, modelName, r.log
	cfg.SkipBlank = t.StartURL != "" // the run opens it first
	var ls *live.Session
	if r.o.live != nil {
		ls, err = r.o.live.Open(live.SessionOptions{Owner: fmt.Sprintf("worker %s task %s", c.Worker, t.ID), Redact: sess.Policy().Redact})
		if err != nil {
			return nil, r.retryable(ctx, err)
		}
		defer ls.Close()
		other := cfg.Approver
		if r.o.liveAlone {
			other = nil
		}
		cfg.Approver, cfg.Human = ls.Approver(other), ls
	}
	cfg.Model, cfg.Human = away.Model(cfg.Model), away.Human(cfg.Human)
	if r.asks || ls != nil {
		// the unattended worker's deny-all approver answers at once
		cfg.Approver = away.Approver(cfg.Approver)
	}
	surf, err := websurfer.New(ctx, cfg)
	if err != nil {
		return nil, r.retryable(ctx, fmt.Errorf("starting the surfer: %w", err))
	}
	tr.surf = surf
	attachLive(ls, surf, sess)
	opened = time.Now()

	// surf-PID-...: what a killed worker leaves is found by
	// sandbox.RemoveStale with its browser's leftovers
	tr.dir, err = os.MkdirTemp("", fmt.Sprintf("surf-%d-task-", os.Getpid()))
	if err != nil {
		return nil, board.Retry(fmt.Errorf("a directory for the journal: %w", err))
	}
	tr.jpath = filepath.Join(tr.dir, "journal.jsonl")
	j, err := journal.Open(tr.jpath, pol.Redact)
	if err != nil {
		return nil, board.Retry(err)
	}
	opts := websurfer.RunOptions{
		StartURL: t.StartURL, MaxSteps: t.MaxSteps, MaxTokens: r.o.maxTokens, MaxTime: time.Duration(t.MaxTime),
		Journal: j, Relaunch: tr.relaunch, Logger: r.log,
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = r.o.maxSteps
	}
	if opts.MaxTime == 0 {
		opts.MaxTime = r.o.maxTime
	}
	var end *websurfer.Step
	var runErr error
	runCtx := ctx
	if ls != nil {
		runCtx = websurfer.WithProgress(ctx, ls.Progress)
		opts.Between = away.Between(ls.Between)
		done := ls.Begin()
		defer done()
	}
	for st, err := range surf.Run(runCtx, t.Instruction, opts) {
		if ls != nil {
			ls.Step(st)
		}
		if st != nil {
			if st.Done {
				end = st
			} else {
				c.Progress(ctx, pol.Redact(stepProgress(st)))
			}
		}
		if err != nil {
			runErr = err
		}
	}
	turn.Drop() // storing the files is no browser work
	if err := j.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing the journal: %w", err)
	}
	if end == nil {
		end = &websurfer.Step{EndReason: journal.EndError}
	}
	res := &board.Result{Answer: end.Answer, EndReason: string(end.EndReason), Steps: end.N, Tokens: end.Total.Total}
	// The files are kept even when the run was stopped: a cancelled task
	// keeps what it did.
	ran = time.Now()
	defer func() { stored = time.Now() }()
	// A run that finished is not run again for its files: the board's
	// file writes try again through a NATS leader change themselves, and
	// what still could not be stored is noted on the task.
	if err := tr.store(ctx, res); err != nil {
		r.log.Warn("storing a task's files", "task", t.ID, "err", err)
		c.Note(fmt.Sprintf("not all of the run's files were stored: %v", err))
	}
	res.Duration = board.Duration(time.Since(start))
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case runErr != nil:
		return res, r.retryable(ctx, fmt.Errorf("the run stopped after %d steps: %w", end.N, runErr))
	case end.EndReason != journal.EndAnswered:
		return res, fmt.Errorf("the run ended with %s after %d %s", end.EndReason, end.N, pluralWord(end.N, "step", "steps"))
	}
	return res, nil
}

// retryable marks a runtime error as worth another attempt, unless the
// run was stopped.
func (r *taskRunner) retryable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return board.Retry(err)
}

// open opens a session of the run in sb.
func (tr *taskRun) open(ctx context.Context, sb *sandbox.Sandbox) (*sandbox.Session, error) {
	sess, err := sb.NewSession(ctx, tr.scfg)
	if err != nil {
		return nil, err
	}
	tr.mu.Lock()
	tr.sb = sb
	tr.sess = append(tr.sess, sess)
	tr.mu.Unlock()
	return sess, nil
}

// relaunch is the run's websurfer Relaunch: a session on a new browser
// when this one has died.
func (tr *taskRun) relaunch(ctx context.Context) (*sandbox.Session, error) {
	if tr.scfg.RecordHAR != "" {
		return nil, errors.New("the browser died while recording a HAR; the recording would be incomplete, so the run stops")
	}
	tr.mu.Lock()
	old := tr.sb
	tr.mu.Unlock()
	sb, err := tr.r.replace(ctx, old)
	if err != nil {
		return nil, err
	}
	return tr.open(ctx, sb)
}

// store puts the journal, its images and a report of the run in the
// board's file store, as TASK/attempt-N/journal.jsonl,
// .../journal-images/IMAGE and .../report.html.
func (tr *taskRun) store(ctx context.Context, res *board.Result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(tr.r.o.storeTime, time.Minute))
	defer cancel()
	put := func(name, path string) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return tr.c.PutFile(ctx, name, f)
	}
	var errs []error
	stored, err := put("journal.jsonl", tr.jpath)
	if err != nil {
		return fmt.Errorf("the journal: %w", err)
	}
	res.Journal = stored
	imgDir := filepath.Join(tr.dir, "journal-images")
	entries, err := os.ReadDir(imgDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		// under the directory the journal names them by, so that the
		// stored journal's image paths resolve beside it
		stored, err := put("journal-images/"+e.Name(), filepath.Join(imgDir, e.Name()))
		if err != nil {
			errs = append(errs, fmt.Errorf("image %s: %w", e.Name(), err))
			continue
		}
		res.Images = append(res.Images, stored)
	}
	sort.Strings(res.Images)
	out := filepath.Join(tr.dir, "report.html")
	title := "surf task " + tr.c.Task.ID + ": " + textcut.Flat(tr.c.Task.Instruction, 80)
	if _, err := report.WriteFile(tr.jpath, out, report.Options{Title: title}); err != nil {
		errs = append(errs, fmt.Errorf("the report: %w", err))
	} else if stored, err := put("report.html", out); err != nil {
		errs = append(errs, fmt.Errorf("the report: %w", err))
	} else {
		res.Report = stored
	}
	return errors.Join(errs...)
}

// close closes the run's surfer and sessions and removes its files.
func (tr *taskRun) close() {
	if tr.surf != nil {
		tr.surf.Close()
	}
	tr.mu.Lock()
	sessions := tr.sess
	tr.mu.Unlock()
	for _, s := range sessions {
		if err := s.Close(); err != nil {
			tr.r.log.Debug("closing a task's session", "task", tr.c.Task.ID, "err", err)
		}
	}
	if tr.dir != "" {
		os.RemoveAll(tr.dir)
	}
}

// stepProgress is a step for the board's progress: "step N: TOOL TARGET".
func stepProgress(st *websurfer.Step) string {
	if len(st.Calls) == 0 {
		return fmt.Sprintf("step %d: (no tool call)", st.N)
	}
	c := st.Calls[0]
	s := fmt.Sprintf("step %d: %s", st.N, c.Tool)
	if t := callTarget(c.Args); t != "" {
		s += " " + t
	}
	return s
}

// callTarget is what a tool call acts on, from its arguments: a URL, an
// element id, a query.
func callTarget(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"url", "target_id", "input_field_id", "query", "question", "tab_id", "option", "keys"} {
		if v, ok := m[k]; ok {
			return textcut.Flat(strings.TrimSpace(fmt.Sprint(v)), 120)
		}
	}
	return ""
}
