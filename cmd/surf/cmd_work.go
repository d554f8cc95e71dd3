package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
	"github.com/surfkit/surf/worker"
)

// workUsage is the usage text of surf work.
var workUsage = helpText("work")

func init() {
	c := &command{
		name:    "work",
		summary: "run the task board's tasks: N surfers in one browser",
		usage:   workUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runWork(ctx, cli, c, args) }
	register(c)
}

// workFlags are surf work's flags.
type workFlags struct {
	workers, maxActive, maxAttempts, maxSteps, maxTokens int
	idle, lease, maxTime                                 time.Duration
	name, approve, stateIdentity, metrics                string
	json, approveSet                                     bool
	approver                                             policy.Approver
	boardF                                               *boardFlags
	mf                                                   *modelFlags
	bf                                                   *browserFlags
	uf                                                   *uiFlags
	uiOpts                                               mcpserver.HTTPOptions
	withUI                                               bool
}

func parseWorkFlags(c *command, args []string) (*workFlags, error) {
	fs := newFlags(c)
	f := &workFlags{}
	fs.IntVar(&f.workers, "workers", 1, "")
	fs.IntVar(&f.maxActive, "max-active", 0, "")
	fs.DurationVar(&f.idle, "idle", 0, "")
	fs.IntVar(&f.maxAttempts, "max-attempts", 3, "")
	fs.DurationVar(&f.lease, "lease", 0, "")
	fs.Lookup("lease").Hidden = true // refused: the lease is the board's
	fs.StringVar(&f.stateIdentity, "state-identity", "", "")
	fs.StringVar(&f.name, "name", "", "")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "")
	fs.IntVar(&f.maxTokens, "max-tokens", 0, "")
	fs.DurationVar(&f.maxTime, "max-time", 0, "")
	fs.StringVar(&f.approve, "approve", "deny", "")
	fs.BoolVar(&f.json, "json", false, "")
	fs.StringVar(&f.metrics, "metrics", "", "")
	f.boardF = addBoardFlags(fs)
	f.mf = addModelFlags(fs)
	f.bf = addBrowserFlags(fs)
	f.uf = addUIFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	var err error
	if f.uiOpts, f.withUI, err = f.uf.options(c); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef(c, "work takes no arguments, got %q", strings.Join(fs.Args(), " "))
	}
	f.approveSet = fs.Changed("approve")
	return f, f.check(c)
}

// check checks the flags' values and picks the approver.
func (f *workFlags) check(c *command) error {
	switch {
	case f.workers < 1 || f.workers > 64:
		return usagef(c, "--workers must be 1 to 64")
	case f.maxAttempts < 1:
		return usagef(c, "--max-attempts must be at least 1")
	case f.maxActive < 0 || f.maxActive > 64:
		return usagef(c, "--max-active must be 1 to 64")
	case f.idle < 0 || f.lease < 0 || f.maxSteps < 0 || f.maxTokens < 0 || f.maxTime < 0:
		return usagef(c, "durations and limits cannot be negative")
	case f.lease != 0:
		return &usageError{cmd: c, msg: "--lease is the board's setting, not a worker's: one worker would change every worker's lease",
			hint: fmt.Sprintf("set it for the whole board with 'surf board config --lease %s'", f.lease)}
	case strings.ContainsAny(f.name, " \t\n/*>."):
		return usagef(c, "--name %q: use letters, digits, '-' and '_'", f.name)
	}
	switch f.approve {
	case "deny":
		f.approver = policy.DenyAll()
	case "allow":
		f.approver = policy.AllowAll()
	case "live":
		f.approver = nil // the live views answer: --ui and 'surf board ui'
	default:
		return usagef(c, "--approve must be deny, allow or live, not %q (nobody is there to prompt)", f.approve)
	}
	if f.bf.recordHAR != "" {
		return usagef(c, "--record-har is not supported by work: its tasks would write one recording each over the same file")
	}
	return nil
}

// workerConfig is the task runner's configuration: the policy, the
// model, the browser's settings.
func (f *workFlags) workerConfig(ctx context.Context, cli *CLI) (worker.Config, error) {
	pol, err := f.bf.pol.policy(cli.Getenv)
	if err != nil {
		return worker.Config{}, err
	}
	f.bf.loaded.Store(pol)
	f.mf.redact = f.bf.redact
	model, modelName, err := f.mf.client(ctx, cli)
	if err != nil {
		return worker.Config{}, err
	}
	sbCfg, err := f.bf.sandboxConfig(cli, pol)
	if err != nil {
		return worker.Config{}, err
	}
	return worker.Config{
		Sandbox: sbCfg, Policy: pol,
		Surf: websurfer.Config{TokenBudget: f.bf.budget, SearchURL: f.bf.searchURL, Approver: f.approver,
			TracerProvider: cli.Tracer},
		Session: f.bf.sessionConfig(),
		Model:   model, ModelName: modelName,
		MaxSteps: f.maxSteps, MaxTokens: f.maxTokens, MaxTime: f.maxTime, MaxActive: f.maxActive,
		StateIdentity: f.stateIdentity, Logger: cli.Logger,
	}, nil
}

// runWork is surf work.
func runWork(ctx context.Context, cli *CLI, c *command, args []string) (err error) {
	f, err := parseWorkFlags(c, args)
	if err != nil {
		return err
	}
	wcfg, err := f.workerConfig(ctx, cli)
	if err != nil {
		return err
	}
	if wcfg.Surf.Metrics, err = cli.serveMetrics(ctx, f.metrics); err != nil {
		return err
	}
	b, err := f.boardF.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	stopLive, err := f.startLive(ctx, cli, b, &wcfg)
	if err != nil {
		return err
	}
	defer stopLive()
	defer markWorker(cli.Logger)()
	runner, err := worker.New(ctx, wcfg)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := runner.Close(); cerr != nil {
			cli.Logger.Warn("closing the browser", "err", cerr)
		}
	}()

	out := &workPrinter{w: cli.Stdout, json: f.json, maxAttempts: f.maxAttempts}
	run := func(ctx context.Context, cl *board.Claim) (*board.Result, error) {
		out.start(cl)
		res, err := runner.Run(ctx, cl)
		if errors.Is(err, worker.ErrNoStateIdentity) {
			err = fmt.Errorf("%w (start the worker with --state-identity FILE)", err)
		}
		out.finish(ctx, cl, res, err)
		return res, err
	}
	fmt.Fprintf(cli.Stderr, "surf: %d %s waiting for tasks%s\n", f.workers, pluralWord(f.workers, "worker", "workers"), idleNote(f.idle))
	err = b.Work(ctx, board.WorkConfig{
		Run: run, Workers: f.workers, Name: f.name, Idle: f.idle,
		MaxAttempts: f.maxAttempts, Logger: cli.Logger, Metrics: wcfg.Surf.Metrics,
	})
	if ctx.Err() != nil && (err == nil || errors.Is(err, ctx.Err())) {
		return nil // interrupted: the running tasks were handed back
	}
	return err
}

func idleNote(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(" (exiting after %s with none)", d)
}

// workPrinter prints a line when a task starts and when it finishes.
type workPrinter struct {
	mu          sync.Mutex
	w           io.Writer
	json        bool
	maxAttempts int
}

// workEvent is a JSON line of surf work --json.
type workEvent struct {
	Event     string `json:"event"` // start or finish
	Task      string `json:"task"`
	Worker    string `json:"worker"`
	Attempt   int    `json:"attempt"`
	Outcome   string `json:"outcome,omitempty"` // done, failed, retry, handed_back, cancelled, taken_over
	EndReason string `json:"end_reason,omitempty"`
	Answer    string `json:"answer,omitempty"`
	Steps     int    `json:"steps,omitempty"`
	Tokens    int    `json:"tokens,omitempty"`
	Error     string `json:"error,omitempty"`
	Time      string `json:"time"`
}

func (p *workPrinter) emit(e workEvent, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		e.Time = time.Now().UTC().Format(time.RFC3339Nano)
		json.NewEncoder(p.w).Encode(e)
		return
	}
	fmt.Fprintln(p.w, text)
}

func (p *workPrinter) start(c *board.Claim) {
	p.emit(workEvent{Event: "start", Task: c.Task.ID, Worker: c.Worker, Attempt: c.Attempt},
		fmt.Sprintf("start    %s  worker %s  attempt %d: %s", c.Task.ID, c.Worker, c.Attempt, textcut.Flat(c.Task.Instruction, 80)))
}

func (p *workPrinter) finish(ctx context.Context, c *board.Claim, res *board.Result, err error) {
	e := workEvent{Event: "finish", Task: c.Task.ID, Worker: c.Worker, Attempt: c.Attempt,
		Outcome: board.Outcome(ctx, c, res, err, p.maxAttempts)}
	if err != nil {
		e.Error = err.Error()
	}
	if res != nil {
		e.EndReason, e.Answer, e.Steps, e.Tokens = res.EndReason, res.Answer, res.Steps, res.Tokens
	}
	text := fmt.Sprintf("%-8s %s  worker %s  attempt %d", strings.ReplaceAll(e.Outcome, "_", " "), e.Task, e.Worker, e.Attempt)
	if res != nil && res.EndReason != "" {
		text += fmt.Sprintf(": %s after %d %s", res.EndReason, res.Steps, pluralWord(res.Steps, "step", "steps"))
	}
	if e.Answer != "" {
		text += ": " + textcut.Flat(e.Answer, 200)
	}
	if e.Error != "" && e.Outcome != board.OutcomeHandedBack && e.Outcome != board.OutcomeCancelled && e.Outcome != board.OutcomeTakenOver {
		text += " (" + textcut.Flat(e.Error, 200) + ")"
	}
	p.emit(e, text)
}
