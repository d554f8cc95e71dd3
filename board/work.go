package board

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/surfkit/surf/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// RunFunc runs one claimed task and returns its result. A nil error means
// the task is done; an error fails it with the error as the reason (the
// result, when not nil, is kept too), unless it is wrapped by Retry. When
// ctx ends the run should stop soon and return ctx's error.
type RunFunc func(ctx context.Context, c *Claim) (*Result, error)

// WorkConfig configures the workers of one process.
type WorkConfig struct {
	// Run runs a task. Required.
	Run RunFunc
	// Workers is how many tasks run at once (default 1).
	Workers int
	// Name names this process's workers (default host-pid); each worker
	// is Name/1, Name/2, ...
	Name string
	// Idle, when set, makes Work return once the board has had nothing to
	// run, and nothing running here, for that long.
	Idle time.Duration
	// MaxAttempts bounds the runs of a task, counting runs lost with their
	// worker (default 3).
	MaxAttempts int
	// Timed, when set, receives each finished run's timings.
	Timed func(Times)
	// Metrics counts the runs by how they ended, with their claim-to-start
	// and run durations; nil records nothing.
	Metrics *telemetry.Metrics
	// Logger receives the workers' diagnostics; nil discards them.
	Logger *slog.Logger
}

// Times are the moments of one run, for measuring the board's own cost:
// Claimed to Started and Finished to Stored are the board's overhead.
type Times struct {
	Task     string
	Worker   string
	Claimed  time.Time // the task came off the queue
	Started  time.Time // the record says running; Run is called
	Finished time.Time // Run returned
	Stored   time.Time // the result is in the record and the claim acked
}

// Overhead is the board's share of a run: claim to start plus finish to
// stored.
func (t Times) Overhead() time.Duration { return t.Started.Sub(t.Claimed) + t.Stored.Sub(t.Finished) }

// Claim is a task a worker has claimed.
type Claim struct {
	Task    Task
	Attempt int
	Worker  string
	// After are the records of the tasks this one runs after, as they
	// were when it was claimed, in Task.After's order: their results are
	// for the run to hand on (see websurfer.RunOptions.HandedOn).
	After []Record

	b            *Board
	lastProgress atomic.Int64

	mu    sync.Mutex
	notes []string
}

// Note adds text to the task's notes, as this attempt's, when its end is
// recorded: what went wrong besides the run itself (its files could not
// all be stored, say).
func (c *Claim) Note(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notes = append(c.notes, fmt.Sprintf("attempt %d on %s: %s", c.Attempt, c.Worker, cut(text, 500)))
}

func (c *Claim) takeNotes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.notes...)
}

// Progress records what the worker is doing now (shown by board watch).
// It is best effort: a failure to record it is only logged.
func (c *Claim) Progress(ctx context.Context, text string) {
	c.lastProgress.Store(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	_, err := c.b.update(ctx, c.Task.ID, func(r *Record) error {
		if r.State != Running || r.Worker != c.Worker || r.Attempts != c.Attempt {
			return errStop
		}
		r.Progress = cut(text, 200)
		return nil
	})
	if err != nil {
		c.b.log.Debug("board: progress not recorded", "task", c.Task.ID, "err", err)
	}
}

// PutFile stores a file of this attempt (journal, image, report) in the
// board's file store and returns its name there, TASK/attempt-N/name.
func (c *Claim) PutFile(ctx context.Context, name string, r io.Reader) (string, error) {
	full := fmt.Sprintf("%s/attempt-%d/%s", c.Task.ID, c.Attempt, name)
	return full, c.b.PutFile(ctx, full, r)
}

// Cancel cancels the claimed task (a person stopped its run): the board
// records it cancelled with reason, the run's context ends (its cause
// ErrCancelled), and its dependents follow the board's rules, as for
// Board.Cancel.
func (c *Claim) Cancel(ctx context.Context, reason string) error {
	_, err := c.b.Cancel(ctx, c.Task.ID, reason)
	return err
}

type retryError struct{ err error }

func (e retryError) Error() string { return e.err.Error() }
func (e retryError) Unwrap() error { return e.err }

// Retry marks a run's error as passing (the browser died, the model's
// endpoint was down): the task goes back to the board for another
// attempt, within the attempts allowed.
func Retry(err error) error {
	if err == nil {
		return nil
	}
	return retryError{err}
}

// IsRetry reports whether err was marked by Retry.
func IsRetry(err error) bool {
	var r retryError
	return errors.As(err, &r)
}

// Work runs workers that claim ready tasks and run them, until ctx ends
// (running tasks are then stopped and handed back to the board, not
// counted as attempts) or, with Idle, until the board has stayed empty.
func (b *Board) Work(ctx context.Context, cfg WorkConfig) error {
	if cfg.Run == nil {
		return errors.New("board: WorkConfig.Run is required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = defaultTries
	}
	if cfg.Name == "" {
		host, _ := os.Hostname()
		cfg.Name = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Logger == nil {
		cfg.Logger = b.log
	}
	// The lease is the board's (Board.SetLease): workers only read it,
	// at each claim and each heartbeat, and heartbeat three times a
	// lease.
	var cons jetstream.Consumer
	if err := retry(ctx, func(cctx context.Context) error {
		var err error
		cons, err = b.js.Consumer(cctx, ReadyStream, WorkersGroup)
		return err
	}); err != nil {
		return fmt.Errorf("the workers' consumer: %w", err)
	}
	w := &workers{b: b, cfg: cfg, cons: cons}
	w.lease.Store(int64(cons.CachedInfo().Config.AckWait))
	w.lastBusy.Store(time.Now().UnixNano())
	// Workers stop claiming when stop is cancelled (idle); running tasks
	// are handed back only when ctx ends.
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(ctx, stopCtx, fmt.Sprintf("%s/%d", cfg.Name, i+1))
		}()
	}
	if cfg.Idle > 0 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.watchIdle(stopCtx, stop)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

type workers struct {
	b        *Board
	cfg      WorkConfig
	cons     jetstream.Consumer
	lease    atomic.Int64 // the board's lease as last read, in nanoseconds
	busy     atomic.Int32
	lastBusy atomic.Int64 // unix nanos when the board last held work
}

// readLease reads the board's lease (it may have been changed since the
// workers started) and returns it; when the board cannot say, the last
// one read.
func (w *workers) readLease(ctx context.Context) time.Duration {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if info, err := w.cons.Info(ctx); err == nil && info.Config.AckWait > 0 {
		w.lease.Store(int64(info.Config.AckWait))
	} else if err != nil {
		w.cfg.Logger.Debug("board: reading the lease", "err", err)
	}
	return time.Duration(w.lease.Load())
}

// beatEvery is how often a worker heartbeats with lease: three times a
// lease, and at least every 5 s, so that a lease shortened while a task
// runs is seen in time.
func beatEvery(lease time.Duration) time.Duration {
	return max(min(lease/3, 5*time.Second), 50*time.Millisecond)
}

// watchIdle stops the workers once the board has held no unfinished task
// for cfg.Idle. It also sweeps the board (see Board.sweep) as it looks.
func (w *workers) watchIdle(ctx context.Context, stop func()) {
	every := min(w.cfg.Idle/4, time.Second)
	every = max(every, 50*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		open := w.busy.Load() > 0
		if !open {
			recs, err := w.b.List(ctx)
			if err != nil {
				continue
			}
			for _, r := range recs {
				if !r.State.Terminal() {
					open = true
					break
				}
			}
			if open {
				w.b.sweep(ctx)
			}
		}
		if open {
			w.lastBusy.Store(time.Now().UnixNano())
			continue
		}
		if time.Since(time.Unix(0, w.lastBusy.Load())) >= w.cfg.Idle {
			w.cfg.Logger.Info("board: idle, workers stop", "idle", w.cfg.Idle)
			stop()
			return
		}
	}
}

func (w *workers) loop(ctx, stopCtx context.Context, name string) {
	for stopCtx.Err() == nil {
		batch, err := w.cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if stopCtx.Err() != nil {
				return
			}
			w.cfg.Logger.Warn("board: fetching a task", "worker", name, "err", err)
			select {
			case <-stopCtx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		for msg := range batch.Messages() {
			w.busy.Add(1)
			w.lastBusy.Store(time.Now().UnixNano())
			w.handle(ctx, name, msg)
			w.lastBusy.Store(time.Now().UnixNano())
			w.busy.Add(-1)
		}
	}
}

// handle runs one claimed message.
func (w *workers) handle(ctx context.Context, name string, msg jetstream.Msg) {
	b, log := w.b, w.cfg.Logger
	times := Times{Task: string(msg.Data()), Worker: name, Claimed: time.Now()}
	id := times.Task
	// Board writes outlive ctx: a worker told to stop still hands back.
	bctx := context.WithoutCancel(ctx)
	var attempt int
	var endedNow bool
	rec, err := b.update(bctx, id, func(r *Record) error {
		attempt, endedNow = 0, false
		switch r.State {
		case Pending, Ready:
		case Running:
			// its worker was lost: the lease ran out
			r.Notes = append(r.Notes, fmt.Sprintf("attempt %d on %s did not finish: the worker stopped heartbeating", r.Attempts, r.Worker))
		default:
			return errStop
		}
		if r.Attempts >= w.cfg.MaxAttempts {
			r.State, r.Finished, r.Worker, r.Progress = Failed, time.Now().UTC(), "", ""
			r.Reason = fmt.Sprintf("gave up after %d attempts", r.Attempts)
			if n := len(r.Notes); n > 0 {
				r.Reason += ": " + r.Notes[n-1]
			}
			endedNow = true
			return nil
		}
		r.Attempts++
		r.State, r.Worker, r.Progress = Running, name, ""
		r.Started = time.Now().UTC()
		attempt = r.Attempts
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		msg.Ack()
		return
	}
	if err != nil {
		log.Warn("board: claiming a task", "task", id, "err", err)
		msg.NakWithDelay(time.Second)
		return
	}
	if attempt == 0 {
		// ended or cancelled before it ran
		msg.Ack()
		if endedNow {
			b.settleDependents(bctx, id)
		}
		return
	}
	// The task's span is a child of the span that added it.
	ctx, span := telemetry.Tracer(b.cfg.TracerProvider).Start(telemetry.Extract(ctx, rec.Traceparent, ""), "board.task",
		trace.WithAttributes(attribute.String("surf.task.id", id), attribute.Int("surf.task.attempt", attempt), attribute.String("surf.worker", name)))
	ended := "" // the state the run ended in, for the span and the metrics
	defer func() {
		if ended == "" {
			ended = "unrecorded"
		}
		span.SetAttributes(attribute.String("surf.task.state", ended))
		if ended == string(Failed) || ended == "unrecorded" {
			span.SetStatus(codes.Error, ended)
		}
		span.End()
		var toStart, run time.Duration
		if !times.Started.IsZero() {
			toStart = times.Started.Sub(times.Claimed)
		}
		if !times.Finished.IsZero() {
			run = times.Finished.Sub(times.Started)
		}
		w.cfg.Metrics.Task(ended, toStart, run)
	}()
	claim := &Claim{Task: rec.Task, Attempt: attempt, Worker: name, b: b}
	for _, d := range rec.Task.After {
		dr, err := b.Get(bctx, d)
		if err != nil {
			// gone from the board: the run sees it without a result
			b.log.Debug("board: a dependency's record", "task", id, "after", d, "err", err)
			dr = Record{Task: Task{ID: d}, State: Failed, Reason: err.Error()}
		}
		claim.After = append(claim.After, dr)
	}
	runCtx, cancelRun := context.WithCancelCause(ctx)
	defer cancelRun(nil)
	// The heartbeat keeps the claim until the run's end is recorded, not
	// only while it runs: storing a result while a NATS leader is elected
	// may take longer than the lease, and a finished run is not to be run
	// again because of that.
	w.readLease(bctx)
	hbCtx, stopHB := context.WithCancel(bctx)
	hbDone := make(chan struct{})
	endHB := sync.OnceFunc(func() { stopHB(); <-hbDone })
	defer endHB()
	go w.heartbeat(hbCtx, msg, claim, cancelRun, hbDone)
	times.Started = time.Now()
	log.Info("board: running", "task", id, "worker", name, "attempt", attempt)
	res, runErr := w.run(runCtx, claim)
	times.Finished = time.Now()
	cause := context.Cause(runCtx)
	cancelRun(nil)
	notes := claim.takeNotes()

	var retryErr retryError
	switch {
	case errors.Is(cause, ErrCancelled), errors.Is(cause, ErrSuperseded):
		// the record is someone else's now; keep the result on a
		// cancelled task
		ended = "superseded"
		if errors.Is(cause, ErrCancelled) {
			ended = string(Cancelled)
			b.update(bctx, id, func(r *Record) error {
				if r.State != Cancelled || r.Worker != name || r.Attempts != attempt {
					return errStop
				}
				r.Result, r.Progress = res, ""
				r.Notes = append(r.Notes, notes...)
				return nil
			})
			endHB()
			msg.Ack()
		}
		return
	case ctx.Err() != nil && (runErr != nil || res == nil):
		// stopping: hand the task back, not counted as an attempt
		b.update(bctx, id, func(r *Record) error {
			if r.State != Running || r.Worker != name || r.Attempts != attempt {
				return errStop
			}
			r.State, r.Worker, r.Progress = Ready, "", ""
			r.Attempts--
			r.Notes = append(r.Notes, fmt.Sprintf("handed back by %s, which was stopped", name))
			return nil
		})
		endHB()
		msg.Nak()
		ended = telemetry.HandedBack
		log.Info("board: handed back", "task", id, "worker", name)
		return
	case errors.As(runErr, &retryErr) && attempt < w.cfg.MaxAttempts:
		b.update(bctx, id, func(r *Record) error {
			if r.State != Running || r.Worker != name || r.Attempts != attempt {
				return errStop
			}
			r.State, r.Worker, r.Progress = Ready, "", ""
			r.Notes = append(r.Notes, notes...)
			r.Notes = append(r.Notes, fmt.Sprintf("attempt %d on %s: %v", attempt, name, runErr))
			return nil
		})
		endHB()
		msg.NakWithDelay(time.Second)
		ended = telemetry.Retried
		return
	}
	mine := false
	_, err = b.updateFor(bctx, resultPatience, id, func(r *Record) error {
		mine = false
		if r.State != Running || r.Worker != name || r.Attempts != attempt {
			return errStop
		}
		mine = true
		r.State, r.Reason, r.Progress = Done, "", ""
		if runErr != nil {
			r.State, r.Reason = Failed, runErr.Error()
		}
		r.Result = res
		r.Notes = append(r.Notes, notes...)
		r.Finished = time.Now().UTC()
		return nil
	})
	if err != nil {
		// the result could not be stored in all that time: the lease
		// brings the task back
		log.Error("board: storing a result", "task", id, "err", err)
		return
	}
	if !mine {
		log.Warn("board: a result came after the task was taken over; dropped", "task", id, "worker", name)
		ended = "superseded"
		return
	}
	ended = string(Done)
	if runErr != nil {
		ended = string(Failed)
	}
	endHB()
	ackCtx, cancel := context.WithTimeout(bctx, 10*time.Second)
	if err := msg.DoubleAck(ackCtx); err != nil {
		log.Warn("board: acking a task", "task", id, "err", err)
	}
	cancel()
	times.Stored = time.Now()
	if w.cfg.Timed != nil {
		w.cfg.Timed(times)
	}
	if err := b.settleDependents(bctx, id); err != nil {
		log.Warn("board: settling dependents", "task", id, "err", err)
	}
}

// run calls the RunFunc; a panic in it fails the task instead of the
// worker process.
func (w *workers) run(ctx context.Context, c *Claim) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			w.cfg.Logger.Error("board: the run panicked", "task", c.Task.ID, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("the worker's run panicked: %v", p)
		}
	}()
	return w.cfg.Run(ctx, c)
}

// The causes of a run's context when the board, not the worker, stops
// it (see context.Cause): the task was cancelled, or another worker took
// it over. A RunFunc or its caller tells them from the worker being
// stopped, which hands the task back.
var (
	ErrCancelled  = errors.New("the task was cancelled")
	ErrSuperseded = errors.New("the task was taken over by another worker")
)

// heartbeat keeps the claim until ctx ends (the run's end is recorded),
// and stops the run when the task is cancelled or taken over.
func (w *workers) heartbeat(ctx context.Context, msg jetstream.Msg, c *Claim, stop context.CancelCauseFunc, done chan<- struct{}) {
	defer close(done)
	every := beatEvery(time.Duration(w.lease.Load()))
	t := time.NewTicker(every)
	defer t.Stop()
	watch, err := w.b.kv.Watch(ctx, c.Task.ID, jetstream.UpdatesOnly())
	var updates <-chan jetstream.KeyValueEntry
	if err == nil {
		defer watch.Stop()
		updates = watch.Updates()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := msg.InProgress(); err != nil {
				w.cfg.Logger.Warn("board: heartbeat", "task", c.Task.ID, "err", err)
			}
			if e := beatEvery(w.readLease(ctx)); e != every {
				every = e
				t.Reset(every)
				msg.InProgress() // the lease may have just been shortened
			}
		case e, ok := <-updates:
			if !ok {
				updates = nil
				continue
			}
			if e == nil {
				continue
			}
			rec, err := decode(e)
			if err != nil {
				continue
			}
			switch {
			case rec.State == Cancelled:
				stop(ErrCancelled)
				return
			case rec.Worker != c.Worker || rec.Attempts != c.Attempt:
				stop(ErrSuperseded)
				return
			}
		}
	}
}
