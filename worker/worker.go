// Package worker is the surfer of the task board: it runs claimed
// board tasks, each in an isolated session of one shared browser, with
// the agent loop, and hands back their results (what surf work runs).
//
// New launches the browser; Worker.Run is a board.RunFunc, so a program
// runs workers with board.Board.Work:
//
//	w, err := worker.New(ctx, worker.Config{Sandbox: sandbox.Config{Policy: pol}, Model: model, ModelName: "gpt-4o"})
//	...
//	defer w.Close()
//	err = b.Work(ctx, board.WorkConfig{Run: w.Run, Workers: 4})
//
// Each run narrows the worker's policy by the task's own, opens a session
// (with the task's start URL checked first), runs the surfer with the
// task's limits, reports each step as the claim's progress, writes a
// journal and an HTML report, puts both (and the journal's images) in the
// board's file store and returns the board.Result. The task's attachments
// are placed in the run's uploads directory before it starts, and what it
// downloads is stored on the board and listed in Result.Downloads. A Watcher (cmd/surf's
// live view) may follow and steer each run.
package worker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/internal/away"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// Config configures a Worker: the browser every task of the process
// shares, the worker's policy, the model, the defaults of the tasks'
// limits and per-task hooks. Its zero value plus a Model and a policy
// (Policy or Sandbox.Policy) is a working worker.
type Config struct {
	// Sandbox launches the browser (and relaunches it when it dies). Its
	// Policy is the worker's policy when Policy is nil.
	Sandbox sandbox.Config
	// Policy is the worker's policy; each task's Policy narrows it. Nil
	// means Sandbox.Policy; one of the two is required.
	Policy *policy.Policy
	// Surf is the template of each task's surfer (token budget, search
	// engine, approver...). Session, Policy, Model, ModelName and Logger
	// are set per task. A nil Approver denies what the policy marks
	// "ask": an unattended worker has nobody to ask.
	Surf websurfer.Config
	// Session is each task's session unless SessionFor is set.
	Session sandbox.SessionConfig
	// SessionFor, when set, gives a task's session configuration (a
	// per-task ReplayHAR, say). Its Policy is replaced by the task's.
	SessionFor func(board.Task) sandbox.SessionConfig
	// SurfFor, when set, adjusts the surfer's configuration for a task
	// (a per-task search engine, say).
	SurfFor func(board.Task, websurfer.Config) websurfer.Config
	// Model and ModelName are every task's model, unless ModelFor is
	// set. One of Model and ModelFor is required.
	Model     websurfer.Model
	ModelName string
	// ModelFor, when set, gives a task's model and its name.
	ModelFor func(board.Task) (websurfer.Model, string, error)
	// MaxSteps, MaxTokens and MaxTime are the limits of a task that sets
	// none; zeros mean websurfer's defaults.
	MaxSteps  int
	MaxTokens int
	MaxTime   time.Duration
	// StoreTime bounds the storing of a task's files on the board; zero
	// means a minute. What is not stored by then is noted on the task.
	StoreTime time.Duration
	// MaxActive is how many tasks drive the browser at once: a task holds
	// a turn while it drives the browser (opening its session, acting,
	// observing), not while it waits on its model or a person, or while
	// its files are stored (package admit says why that serves more tasks
	// a minute). Zero means admit.DefaultCapacity (one per core, at least
	// 2).
	MaxActive int
	// StateIdentity is an age identity file (as age-keygen or KeyGen
	// writes it) that decrypts the board's saved states: a task that
	// names one (board.Task.SavedState) starts signed in with it, as far
	// as the task's policy allows, and the state is never written back.
	// Empty means none: such a task fails with ErrNoStateIdentity.
	StateIdentity string
	// Watcher, when set, follows each task's run and may steer it.
	Watcher Watcher
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// A Watcher follows the runs of a worker's tasks and may steer them:
// cmd/surf's live view is one.
type Watcher interface {
	// Watch is called for each task once its session is open, before its
	// surfer starts. It may adjust the surfer's configuration (its
	// Approver and Human, say); the worker closes the Watch it returns
	// when the run ends.
	Watch(ctx context.Context, r *Run) (Watch, error)
}

// Run is a task's run as a Watcher sees it when it starts.
type Run struct {
	Claim   *board.Claim
	Session *sandbox.Session
	// Surf is the configuration the task's surfer will start with.
	Surf *websurfer.Config
}

// A Watch follows one task's run.
type Watch interface {
	// Begin is called once the surfer is up, before its first step. It
	// may set opts' Between; it returns the context the run goes on with
	// (one with websurfer.WithProgress, say) and what to call when the
	// run ends.
	Begin(ctx context.Context, s *websurfer.Surfer, opts *websurfer.RunOptions) (context.Context, func())
	// Step is called with each step of the run.
	Step(*websurfer.Step)
	// Close ends the watch.
	Close()
}

// Worker runs board tasks in one browser: one sandbox per process, one
// isolated session and surfer per claim. Its Run is a board.RunFunc, safe
// for concurrent claims.
type Worker struct {
	o     Config
	log   *slog.Logger
	asks  bool // the surfers' Approver may ask a person (and wait)
	turns *admit.Queue
	open  atomic.Int64 // the tasks' sessions open now, for the metrics

	mu     sync.Mutex
	sb     *sandbox.Sandbox
	closed bool
	olds   sync.WaitGroup // sandboxes replaced after a crash, closing
}

// New checks cfg and launches the browser the tasks will share.
func New(ctx context.Context, cfg Config) (*Worker, error) {
	o := cfg
	if o.ModelFor == nil && o.Model == nil {
		return nil, errors.New("the worker needs a model")
	}
	if o.ModelFor == nil {
		o.ModelFor = func(board.Task) (websurfer.Model, string, error) { return cfg.Model, cfg.ModelName, nil }
	}
	if o.Policy == nil {
		o.Policy = o.Sandbox.Policy
	}
	if o.Policy == nil {
		return nil, errors.New("the worker needs a policy")
	}
	if o.Sandbox.Policy == nil {
		o.Sandbox.Policy = o.Policy
	}
	asks := o.Surf.Approver != nil // a person may be asked
	if o.Surf.Approver == nil {
		o.Surf.Approver = policy.DenyAll()
	}
	if o.MaxSteps < 0 || o.MaxTokens < 0 || o.MaxTime < 0 || o.StoreTime < 0 {
		return nil, errors.New("the worker's limits cannot be negative")
	}
	if o.MaxActive < 0 {
		return nil, errors.New("the worker's MaxActive cannot be negative")
	}
	if o.StateIdentity != "" {
		if err := checkIdentity(o.StateIdentity); err != nil {
			return nil, err
		}
	}
	n := o.MaxActive
	if n == 0 {
		n = admit.DefaultCapacity()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Worker{o: o, log: o.Logger, asks: asks, turns: admit.New(n)}
	// Surf.Metrics, when set, also reads the sessions open and the tasks
	// waiting for a turn at the browser.
	o.Surf.Metrics.Sessions(func() (int, int) { return int(r.open.Load()), r.turns.Waiting() })
	sb, err := sandbox.New(ctx, o.Sandbox)
	if err != nil && ctx.Err() == nil && sandbox.BrowserGone(err) {
		// the browser died while it started: no reason to fail
		r.log.Warn("the browser was lost while the session opened; trying again", "err", err)
		sb, err = sandbox.New(ctx, o.Sandbox)
	}
	if err != nil {
		return nil, err
	}
	r.sb = sb
	return r, nil
}

// Close closes the browser, and waits for those replaced after a crash.
func (r *Worker) Close() error {
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

// ErrClosed is the error of a run after Close.
var ErrClosed = errors.New("the worker is closed")

// sandbox is the browser to open a session in: the current one, or a new
// one when it has gone away.
func (r *Worker) sandbox(ctx context.Context) (*sandbox.Sandbox, error) {
	r.mu.Lock()
	sb := r.sb
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if b := sb.Browser(); b != nil && !b.IsConnected() {
		return r.replace(ctx, sb)
	}
	return sb, nil
}

// replace relaunches the browser once it is gone: the first run to see
// old die starts a new sandbox, the others use it.
func (r *Worker) replace(ctx context.Context, old *sandbox.Sandbox) (*sandbox.Sandbox, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrClosed
	}
	if r.sb != old {
		return r.sb, nil // another run relaunched it already
	}
	r.log.Warn("the browser is gone; relaunching it")
	sb, err := sandbox.New(ctx, r.o.Sandbox)
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
	r         *Worker
	c         *board.Claim
	pol       *policy.Policy
	scfg      sandbox.SessionConfig
	mu        sync.Mutex
	sb        *sandbox.Sandbox
	sess      []*sandbox.Session
	surf      *websurfer.Surfer
	watch     Watch
	ended     func() // the watch's, once the run began
	dir       string
	jpath     string
	downloads string // the session's downloads directory
}

// Run runs a claimed task: a board.RunFunc. A run that ends answered is
// done (with a note on the task when not all its files could be stored); one that ends otherwise (a limit, a stall) fails with how it
// ended; a runtime error (the browser lost for good, the model endpoint
// down) asks the board for another attempt. The run's files are stored
// even when ctx ends: a cancelled task keeps what it did.
func (r *Worker) Run(ctx context.Context, c *board.Claim) (*board.Result, error) {
	start := time.Now()
	t := c.Task
	pol, err := t.Policy.Apply(r.o.Policy)
	if err != nil {
		return nil, fmt.Errorf("the task's policy: %w", err)
	}
	var schema *tools.OutputSchema
	if len(t.OutputSchema) > 0 {
		if schema, err = tools.ParseOutputSchema(t.OutputSchema); err != nil {
			return nil, err
		}
	}
	if t.StartURL != "" {
		if d := pol.DecideURL(policy.Navigation, t.StartURL, ""); d.Verdict == policy.Deny {
			return nil, fmt.Errorf("the start URL %s is denied: %s", t.StartURL, d.Reason)
		}
	}
	tr := &taskRun{r: r, c: c, pol: pol, scfg: r.o.Session}
	if r.o.SessionFor != nil {
		tr.scfg = r.o.SessionFor(t)
	}
	tr.scfg.Policy = pol
	defer tr.close()
	// surf-PID-...: what a killed worker leaves is found by
	// sandbox.RemoveStale with its browser's leftovers
	if tr.dir, err = os.MkdirTemp("", fmt.Sprintf("surf-%d-task-", os.Getpid())); err != nil {
		return nil, board.Retry(fmt.Errorf("a directory for the run: %w", err))
	}
	if t.SavedState != "" {
		if tr.scfg.State, err = tr.savedState(ctx); err != nil {
			return nil, err
		}
	}
	if err := tr.files(ctx); err != nil {
		return nil, err
	}

	turn := r.turns.Turn()
	defer turn.Drop()
	if _, err := turn.Take(ctx); err != nil {
		return nil, err
	}
	ctx = admit.WithTurn(ctx, turn)
	if err := tr.start(ctx); err != nil {
		return nil, err
	}
	j, opts, err := tr.journal()
	if err != nil {
		return nil, board.Retry(err)
	}
	opts.OutputSchema = schema
	for _, d := range c.After { // their results flow into this run
		opts.HandedOn = append(opts.HandedOn, websurfer.HandedOn{Task: d.Task.ID, Answer: d.HandedAnswer(), Data: d.ResultData()})
	}
	end, runErr := tr.run(ctx, opts)
	turn.Drop() // storing the files is no browser work
	if err := j.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("writing the journal: %w", err)
	}
	res := &board.Result{Answer: end.Answer, Data: end.Data, EndReason: string(end.EndReason), Steps: end.N, Tokens: end.Total.Total}
	// A run that finished is not run again for its files: the board's
	// file writes try again through a NATS leader change themselves, and
	// what still could not be stored is noted on the task.
	if err := tr.store(ctx, res); err != nil {
		r.log.Warn("storing a task's files", "task", t.ID, "err", err)
		tr.c.Note(fmt.Sprintf("not all of the run's files were stored: %v", err))
	}
	res.Duration = board.Duration(time.Since(start))
	switch {
	case ctx.Err() != nil:
		return res, ctx.Err()
	case runErr != nil:
		return res, r.retryable(ctx, fmt.Errorf("the run stopped after %d steps: %w", end.N, runErr))
	case end.Failure != "":
		return res, errors.New(end.Failure)
	case end.EndReason != journal.EndAnswered:
		return res, fmt.Errorf("the run ended with %s after %d %s", end.EndReason, end.N, plural(end.N, "step", "steps"))
	}
	return res, nil
}

// start opens the run's session (once more on a new browser if the
// browser died just then) and starts its surfer.
func (tr *taskRun) start(ctx context.Context) error {
	r, t := tr.r, tr.c.Task
	model, modelName, err := r.o.ModelFor(t)
	if err != nil {
		return fmt.Errorf("the task's model: %w", err)
	}
	sb, err := r.sandbox(ctx)
	if err != nil {
		return r.retryable(ctx, fmt.Errorf("the browser: %w", err))
	}
	sess, err := tr.open(ctx, sb)
	if err != nil && ctx.Err() == nil && sandbox.BrowserGone(err) {
		if sb, err = r.replace(ctx, sb); err == nil {
			sess, err = tr.open(ctx, sb)
		}
	}
	if err != nil {
		return r.retryable(ctx, fmt.Errorf("opening a session: %w", err))
	}
	cfg := r.o.Surf
	if r.o.SurfFor != nil {
		cfg = r.o.SurfFor(t, cfg)
	}
	cfg.Session, cfg.Policy, cfg.Model, cfg.ModelName, cfg.Logger = sess, tr.pol, model, modelName, r.log
	cfg.SkipBlank = t.StartURL != "" // the run opens it first
	if r.o.Watcher != nil {
		tr.watch, err = r.o.Watcher.Watch(ctx, &Run{Claim: tr.c, Session: sess, Surf: &cfg})
		if err != nil {
			return r.retryable(ctx, err)
		}
	}
	cfg.Model, cfg.Human = away.Model(cfg.Model), away.Human(cfg.Human)
	if r.asks || tr.watch != nil {
		// the unattended worker's deny-all approver answers at once
		cfg.Approver = away.Approver(cfg.Approver)
	}
	tr.surf, err = websurfer.New(ctx, cfg)
	if err != nil {
		return r.retryable(ctx, fmt.Errorf("starting the surfer: %w", err))
	}
	return nil
}

// journal opens the run's journal in the run's directory and gives the
// run's options.
func (tr *taskRun) journal() (*journal.Writer, websurfer.RunOptions, error) {
	r, t := tr.r, tr.c.Task
	tr.jpath = filepath.Join(tr.dir, "journal.jsonl")
	j, err := journal.Open(tr.jpath, tr.pol.Redact)
	if err != nil {
		return nil, websurfer.RunOptions{}, err
	}
	opts := websurfer.RunOptions{
		StartURL: t.StartURL, MaxSteps: t.MaxSteps, MaxTokens: r.o.MaxTokens, MaxTime: time.Duration(t.MaxTime),
		Journal: j, Relaunch: tr.relaunch, Logger: r.log,
	}
	if opts.MaxSteps == 0 {
		opts.MaxSteps = r.o.MaxSteps
	}
	if opts.MaxTime == 0 {
		opts.MaxTime = r.o.MaxTime
	}
	return j, opts, nil
}

// files makes the run's downloads directory (in the run's directory,
// unless the worker keeps downloads: Session.DownloadsDir, each run's in
// DIR/TASK/attempt-N) and places the task's attachments in an uploads
// directory of the run, which is then the session's: a task with
// attachments uploads those, not the worker's own uploads.
func (tr *taskRun) files(ctx context.Context) error {
	tr.downloads = filepath.Join(tr.dir, "downloads")
	if d := tr.scfg.DownloadsDir; d != "" {
		tr.downloads = filepath.Join(d, tr.c.Task.ID, fmt.Sprintf("attempt-%d", tr.c.Attempt))
	}
	if err := os.MkdirAll(tr.downloads, 0o700); err != nil {
		return board.Retry(fmt.Errorf("the run's downloads directory: %w", err))
	}
	tr.scfg.DownloadsDir = tr.downloads
	if len(tr.c.Task.Attachments) == 0 {
		return nil
	}
	up := filepath.Join(tr.dir, "uploads")
	if err := os.Mkdir(up, 0o700); err != nil {
		return board.Retry(fmt.Errorf("the run's uploads directory: %w", err))
	}
	if err := tr.c.FetchAttachments(ctx, up); err != nil {
		if errors.Is(err, board.ErrNoFile) || errors.Is(err, board.ErrFileMismatch) {
			return err // another attempt would not find it either
		}
		return tr.r.retryable(ctx, err)
	}
	tr.scfg.UploadsDir = up
	return nil
}

// run runs the surfer, reporting its steps as the claim's progress, and
// gives its last step (one that ended in error when none came).
func (tr *taskRun) run(ctx context.Context, opts websurfer.RunOptions) (*websurfer.Step, error) {
	runCtx := ctx
	if tr.watch != nil {
		runCtx, tr.ended = tr.watch.Begin(ctx, tr.surf, &opts)
		if opts.Between != nil {
			opts.Between = away.Between(opts.Between)
		}
	}
	var end *websurfer.Step
	var runErr error
	for st, err := range tr.surf.Run(runCtx, tr.c.Task.Instruction, opts) {
		if tr.watch != nil {
			tr.watch.Step(st)
		}
		if st != nil {
			if st.Done {
				end = st
			} else {
				tr.c.Progress(ctx, tr.pol.Redact(stepProgress(st)))
			}
		}
		if err != nil {
			runErr = err
		}
	}
	if end == nil {
		end = &websurfer.Step{EndReason: journal.EndError}
	}
	return end, runErr
}

// retryable marks a runtime error as worth another attempt, unless the
// run was stopped.
func (r *Worker) retryable(ctx context.Context, err error) error {
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
	tr.r.open.Add(1)
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

// store puts the run's downloads, its journal, the journal's images and a
// report of the run in the board's file store, as
// TASK/attempt-N/downloads/NAME, .../journal.jsonl,
// .../journal-images/IMAGE and .../report.html.
func (tr *taskRun) store(ctx context.Context, res *board.Result) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(tr.r.o.StoreTime, time.Minute))
	defer cancel()
	put := func(name, path string) (string, error) {
		f, err := os.Open(path)
		if err != nil {
			return "", err
		}
		defer f.Close()
		return tr.c.PutFile(ctx, name, f)
	}
	errs := []error{tr.storeDownloads(ctx, res)}
	stored, err := put("journal.jsonl", tr.jpath)
	if err != nil {
		return errors.Join(append(errs, fmt.Errorf("the journal: %w", err))...)
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

// storeDownloads puts what the run downloaded on the board, as
// TASK/attempt-N/downloads/NAME (at most board.MaxDownloads files).
func (tr *taskRun) storeDownloads(ctx context.Context, res *board.Result) error {
	entries, err := os.ReadDir(tr.downloads)
	if err != nil {
		return fmt.Errorf("the downloads: %w", err)
	}
	var errs []error
	for _, e := range entries {
		// a download being copied in is in a hidden directory
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if len(res.Downloads) == board.MaxDownloads {
			errs = append(errs, fmt.Errorf("the run downloaded more than %d files; the others were not stored", board.MaxDownloads))
			break
		}
		path := filepath.Join(tr.downloads, e.Name())
		f, err := tr.c.PutDownload(ctx, e.Name(), func() (io.ReadCloser, error) { return os.Open(path) })
		if err != nil {
			errs = append(errs, fmt.Errorf("download %s: %w", e.Name(), err))
			continue
		}
		res.Downloads = append(res.Downloads, f)
	}
	return errors.Join(errs...)
}

// close closes the run's watch, surfer and sessions and removes its
// files.
func (tr *taskRun) close() {
	if tr.ended != nil {
		tr.ended()
	}
	if tr.watch != nil {
		tr.watch.Close()
	}
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
		tr.r.open.Add(-1)
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// MaxActive is how many tasks drive the browser at once (Config.MaxActive,
// or its default).
func (r *Worker) MaxActive() int { return r.turns.Capacity() }
