package board

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/surfkit/surf/internal/taskref"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/telemetry"
	"github.com/surfkit/surf/tools"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Errors of Add: a task id is taken, a task runs after a task that is
// neither on the board nor in the batch, the dependencies form a cycle.
var (
	ErrExists            = errors.New("already on the board")
	ErrUnknownDependency = errors.New("not on the board")
	ErrCycle             = errors.New("the dependencies form a cycle")
)

// A TaskError is Add's refusal of one malformed task of a batch: Index
// counts from 0, in the batch as given.
type TaskError struct {
	Index int
	ID    string
	Err   error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("task %d (%s): %v", e.Index+1, cut(e.ID, 80), e.Err)
}
func (e *TaskError) Unwrap() error { return e.Err }

// Add puts tasks on the board as one batch and returns their records. A
// task may depend on tasks of the same batch or on tasks already on the
// board. The batch is refused as a whole, with nothing added, when a task
// is malformed (a *TaskError), an id is taken (ErrExists), a dependency
// is unknown (ErrUnknownDependency), or the dependencies form a cycle
// (ErrCycle; the error names it).
func (b *Board) Add(ctx context.Context, tasks ...Task) (_ []Record, err error) {
	ctx, span := telemetry.Tracer(b.cfg.TracerProvider).Start(ctx, "board.add", trace.WithAttributes(attribute.Int("surf.tasks", len(tasks))))
	defer func() {
		if err != nil {
			span.SetStatus(codes.Error, "the tasks were not added")
		}
		span.End()
	}()
	traceparent := telemetry.Traceparent(ctx)
	if len(tasks) == 0 {
		return nil, errors.New("no tasks to add")
	}
	tasks = slices.Clone(tasks)
	inBatch := map[string]int{}
	for i := range tasks {
		t := &tasks[i]
		t.After = slices.Clone(t.After)
		if t.ID == "" {
			t.ID = newID()
		}
		if err := checkTask(t); err != nil {
			return nil, &TaskError{Index: i, ID: t.ID, Err: err}
		}
		if _, dup := inBatch[t.ID]; dup {
			return nil, fmt.Errorf("task id %s appears twice in the batch", t.ID)
		}
		inBatch[t.ID] = i
	}
	// Every dependency is in the batch or on the board; nothing in the
	// batch is on the board already.
	known := map[string]bool{}
	for _, t := range tasks {
		if _, err := b.Get(ctx, t.ID); err == nil {
			return nil, fmt.Errorf("task id %s is %w", t.ID, ErrExists)
		} else if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		for _, d := range t.After {
			if _, ok := inBatch[d]; ok || known[d] {
				continue
			}
			if _, err := b.Get(ctx, d); errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("task %s: it runs after %s, which is %w", t.ID, cut(d, 80), ErrUnknownDependency)
			} else if err != nil {
				return nil, err
			}
			known[d] = true
		}
	}
	if err := b.checkStates(ctx, tasks); err != nil {
		return nil, err
	}
	if cyc := findCycle(tasks, inBatch); cyc != nil {
		return nil, fmt.Errorf("%w: %s", ErrCycle, strings.Join(cyc, " -> "))
	}
	// Attachments are measured before the records are written (which
	// list them) and stored after: the records claim the ids, so a batch
	// that loses a race for an id never writes over another's files. The
	// records say Attaching meanwhile, which keeps them pending.
	if err := b.measureAttachments(tasks); err != nil {
		return nil, err
	}
	now := time.Now().UTC()
	var created []string
	recs := make([]Record, len(tasks))
	for i, t := range tasks {
		rec := Record{Task: t, State: Pending, Created: now.Add(time.Duration(i)), Updated: now, Attaching: len(t.Attachments) > 0, Traceparent: traceparent}
		data, err := json.Marshal(rec)
		if err != nil {
			return nil, err
		}
		err = retry(ctx, func(ctx context.Context) error {
			rev, err := b.kv.Create(ctx, t.ID, data)
			if errors.Is(err, jetstream.ErrKeyExists) {
				// a retried create that did land, or a race with
				// another Add of the same id
				if e, gerr := b.kv.Get(ctx, t.ID); gerr == nil && string(e.Value()) == string(data) {
					rec.Revision = e.Revision()
					return nil
				}
				return permanent(fmt.Errorf("task id %s is %w", t.ID, ErrExists))
			}
			rec.Revision = rev
			return err
		})
		if err != nil {
			for _, id := range created {
				b.kv.Delete(context.WithoutCancel(ctx), id)
			}
			return nil, err
		}
		created = append(created, t.ID)
		recs[i] = rec
	}
	var stored []string
	if err := b.storeAttachments(ctx, tasks, &stored); err != nil {
		dctx := context.WithoutCancel(ctx)
		for _, id := range created {
			b.kv.Delete(dctx, id)
		}
		for _, p := range stored {
			b.files.Delete(dctx, p)
		}
		return nil, err
	}
	for _, t := range tasks {
		if len(t.Attachments) == 0 {
			continue
		}
		if _, err := b.update(ctx, t.ID, func(r *Record) error {
			r.Attaching = false
			return nil
		}); err != nil {
			return nil, err
		}
	}
	for i, t := range tasks {
		if err := b.settle(ctx, t.ID); err != nil {
			return nil, err
		}
		if rec, err := b.Get(ctx, t.ID); err == nil {
			recs[i] = rec
		}
	}
	return recs, nil
}

// checkStates refuses tasks that name a saved state the board does not
// hold.
func (b *Board) checkStates(ctx context.Context, tasks []Task) error {
	held := map[string]bool{}
	for i, t := range tasks {
		if t.SavedState == "" {
			continue
		}
		ok, seen := held[t.SavedState]
		if !seen {
			var err error
			if ok, err = b.HasState(ctx, t.SavedState); err != nil {
				return err
			}
			held[t.SavedState] = ok
		}
		if !ok {
			return &TaskError{Index: i, ID: t.ID, Err: fmt.Errorf("%w: %s", ErrNoState, t.SavedState)}
		}
	}
	return nil
}

// checkTask refuses a malformed task.
func checkTask(t *Task) error {
	if err := checkID(t.ID); err != nil {
		return err
	}
	t.Instruction = strings.TrimSpace(t.Instruction)
	if t.Instruction == "" {
		return errors.New("the instruction is empty")
	}
	if len(t.Instruction) > maxInstrBytes {
		return fmt.Errorf("the instruction is %d bytes; at most %d", len(t.Instruction), maxInstrBytes)
	}
	if t.StartURL != "" {
		u, err := url.Parse(t.StartURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("start URL %q is not an http(s) URL", cut(t.StartURL, 120))
		}
	}
	if t.MaxSteps < 0 || t.MaxTime < 0 {
		return errors.New("limits cannot be negative")
	}
	if t.SavedState != "" {
		if err := CheckStateName(t.SavedState); err != nil {
			return err
		}
	}
	if t.Policy != nil {
		// compile it to find bad patterns now rather than on a worker
		base, err := policy.New(policy.Config{})
		if err == nil {
			_, err = t.Policy.Apply(base)
		}
		if err != nil {
			return fmt.Errorf("policy: %v", err)
		}
	}
	if len(t.OutputSchema) > 0 {
		sch, err := tools.ParseOutputSchema(t.OutputSchema)
		if err != nil {
			return err
		}
		t.OutputSchema = sch.JSON()
	}
	if err := checkAttachments(t); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range t.After {
		if d == t.ID {
			return errors.New("it runs after itself")
		}
		if err := checkID(d); err != nil {
			return fmt.Errorf("after: %v", err)
		}
		if seen[d] {
			return fmt.Errorf("after names %s twice", d)
		}
		seen[d] = true
	}
	refs, err := taskref.Parse(t.Instruction)
	if err != nil {
		return fmt.Errorf("the instruction: %v", err)
	}
	for _, r := range refs {
		if !seen[r.Task] {
			return fmt.Errorf("the instruction refers to %s, which it does not run after (add --after %s)", r.Text, r.Task)
		}
	}
	return nil
}

// findCycle returns a dependency cycle among the batch's tasks (ids in
// order, the first repeated at the end), or nil. Tasks already on the
// board cannot be in one: they cannot depend on tasks added after them.
func findCycle(tasks []Task, index map[string]int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(tasks))
	var stack []string
	var visit func(i int) []string
	visit = func(i int) []string {
		color[i] = grey
		stack = append(stack, tasks[i].ID)
		for _, d := range tasks[i].After {
			j, ok := index[d]
			if !ok {
				continue
			}
			switch color[j] {
			case grey:
				k := slices.Index(stack, d)
				return append(slices.Clone(stack[k:]), d)
			case white:
				if c := visit(j); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return nil
	}
	for i := range tasks {
		if color[i] == white {
			if c := visit(i); c != nil {
				return c
			}
		}
	}
	return nil
}

// settle moves pending task id on when its dependencies allow it: to
// ready (and onto the queue) when they are all done, to failed when one
// failed or was cancelled. A task that fails this way settles its own
// dependents in turn.
func (b *Board) settle(ctx context.Context, id string) error {
	queue := []string{id}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		rec, err := b.Get(ctx, id)
		if err != nil {
			return err
		}
		if rec.State != Pending || rec.Attaching {
			continue // an attaching task is settled once its files are stored
		}
		deps := make([]Record, 0, len(rec.Task.After))
		for _, d := range rec.Task.After {
			dr, err := b.Get(ctx, d)
			if errors.Is(err, ErrNotFound) {
				// a dependency removed from under the board
				dr = Record{Task: Task{ID: d}, State: Failed, Reason: "it is no longer on the board"}
			} else if err != nil {
				return err
			}
			deps = append(deps, dr)
		}
		next, reason := readiness(rec, deps)
		switch next {
		case Ready:
			// onto the queue first (deduplicated by id), then the record:
			// a worker that claims it before the record says ready runs
			// it anyway (see claim)
			if err := b.publishReady(ctx, id); err != nil {
				return err
			}
			if _, err := b.update(ctx, id, func(r *Record) error {
				if r.State != Pending {
					return errStop
				}
				r.State = Ready
				return nil
			}); err != nil {
				return err
			}
		case Failed:
			changed := false
			if _, err := b.update(ctx, id, func(r *Record) error {
				if r.State != Pending {
					return errStop
				}
				r.State, r.Reason, r.Finished = Failed, reason, time.Now().UTC()
				changed = true
				return nil
			}); err != nil {
				return err
			}
			if changed {
				deps, err := b.dependents(ctx, id)
				if err != nil {
					return err
				}
				queue = append(queue, deps...)
			}
		}
	}
	return nil
}

// readiness is where a pending task goes given its dependencies' records:
// Ready, Failed (with the reason) or Pending.
func readiness(rec Record, deps []Record) (State, string) {
	allEnded := true
	for _, d := range deps {
		switch {
		case d.State == Done:
		case d.State.Terminal():
			if !rec.Task.RunAfterFailure {
				why := d.Reason
				if why == "" {
					why = string(d.State)
				}
				verb := "failed"
				if d.State == Cancelled {
					verb = "was cancelled"
				}
				return Failed, fmt.Sprintf("dependency %s %s: %s", d.Task.ID, verb, why)
			}
		default:
			allEnded = false
		}
	}
	if allEnded {
		return Ready, ""
	}
	return Pending, ""
}

// dependents lists the pending tasks that run after id.
func (b *Board) dependents(ctx context.Context, id string) ([]string, error) {
	all, err := b.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range all {
		if r.State == Pending && slices.Contains(r.Task.After, id) {
			out = append(out, r.Task.ID)
		}
	}
	return out, nil
}

// settleDependents settles the tasks waiting on id, which just ended.
func (b *Board) settleDependents(ctx context.Context, id string) error {
	deps, err := b.dependents(ctx, id)
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range deps {
		errs = append(errs, b.settle(ctx, d))
	}
	return errors.Join(errs...)
}

// sweep settles every pending task: it repairs a board whose writer
// stopped between ending a task and settling its dependents.
func (b *Board) sweep(ctx context.Context) error {
	all, err := b.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, r := range all {
		if r.State == Pending {
			errs = append(errs, b.settle(ctx, r.Task.ID))
		}
	}
	return errors.Join(errs...)
}

func (b *Board) publishReady(ctx context.Context, id string) error {
	return retry(ctx, func(ctx context.Context) error {
		_, err := b.js.Publish(ctx, readySubject, []byte(id), jetstream.WithMsgID(id+":ready"))
		return err
	})
}

// Cancel cancels a task that has not ended: a pending or ready task never
// runs, a running one is stopped by its worker. Its dependents fail,
// unless they run after failures. Cancelling an ended task is an error.
func (b *Board) Cancel(ctx context.Context, id, reason string) (Record, error) {
	if reason == "" {
		reason = "cancelled by a user"
	}
	rec, err := b.update(ctx, id, func(r *Record) error {
		if r.State.Terminal() {
			return fmt.Errorf("task %s has already ended (%s)", id, r.State)
		}
		r.State, r.Reason, r.Finished = Cancelled, reason, time.Now().UTC()
		return nil
	})
	if err != nil {
		return rec, err
	}
	return rec, b.settleDependents(ctx, id)
}

// Wait waits until every task in ids has ended and returns their records
// in the order asked. It returns early with ctx's error.
func (b *Board) Wait(ctx context.Context, ids ...string) ([]Record, error) {
	if len(ids) == 0 {
		return nil, errors.New("no task to wait for")
	}
	for _, id := range ids {
		if _, err := b.Get(ctx, id); err != nil {
			return nil, err
		}
	}
	got := map[string]Record{}
	for ev, err := range b.Watch(ctx, ids...) {
		if err != nil {
			return nil, err
		}
		got[ev.Record.Task.ID] = ev.Record
		ended := 0
		for _, id := range ids {
			if r, ok := got[id]; ok && r.State.Terminal() {
				ended++
			}
		}
		if ended == len(ids) {
			out := make([]Record, len(ids))
			for i, id := range ids {
				out[i] = got[id]
			}
			return out, nil
		}
	}
	return nil, ctx.Err()
}

// Event is a record as it changes on the board.
type Event struct {
	Record Record
	// Initial marks the records as they were when the watch started;
	// later events are changes.
	Initial bool
}

// Watch yields every record of the board (or of the ids given), first as
// they are, then each change as it happens, until ctx ends or the
// consumer stops. An error ends the sequence.
//
// A watch follows the board through a NATS node's loss: a KV watcher's
// consumer can be lost with the node that held it and never come back
// (nats.go's ordered consumer gives up on some errors while a leader is
// elected), so a watch that has had no update for watchCheck asks the
// bucket how far it has gone and, when the bucket is past what the watch
// has seen, starts a new watcher; what it yields again is skipped by
// revision.
func (b *Board) Watch(ctx context.Context, ids ...string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		w, err := b.keyWatcher(ctx, ids)
		if err != nil {
			yield(Event{}, err)
			return
		}
		defer func() { w.Stop() }()
		var (
			initial = true
			seen    = map[string]uint64{} // each key's revision yielded last
			upTo    uint64                // the bucket's sequence the watch has seen to
			quiet   = time.Now()
		)
		check := time.NewTicker(watchCheck)
		defer check.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-check.C:
				if time.Since(quiet) < watchCheck {
					continue
				}
				last, ok := b.bucketSeq(ctx)
				if !ok || last <= upTo {
					continue
				}
				nw, err := b.keyWatcher(ctx, ids)
				if err != nil {
					if ctx.Err() == nil {
						yield(Event{}, err)
					}
					return
				}
				b.log.Debug("board: a watch fell behind the board; watching again", "seen", upTo, "board", last)
				w.Stop()
				w, upTo, quiet = nw, last, time.Now()
			case e, ok := <-w.Updates():
				if !ok {
					if ctx.Err() == nil {
						yield(Event{}, errors.New("the board's watcher stopped"))
					}
					return
				}
				quiet = time.Now()
				if e == nil {
					initial = false
					continue
				}
				if e.Revision() <= seen[e.Key()] {
					continue // yielded before the watcher was replaced
				}
				seen[e.Key()] = e.Revision()
				upTo = max(upTo, e.Revision())
				rec, err := decode(e)
				if err != nil {
					continue
				}
				if !yield(Event{Record: rec, Initial: initial}, nil) {
					return
				}
			}
		}
	}
}

// watchCheck is how long a watch goes without an update before it checks
// that it has not fallen behind the board (see Board.Watch).
const watchCheck = 3 * time.Second

// keyWatcher starts a watcher of the board's records (of ids, or all),
// living as long as ctx.
func (b *Board) keyWatcher(ctx context.Context, ids []string) (jetstream.KeyWatcher, error) {
	var w jetstream.KeyWatcher
	err := retry(ctx, func(cctx context.Context) error {
		var err error
		// the watcher lives as long as ctx, not the attempt
		if len(ids) == 0 {
			w, err = b.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
		} else {
			// WatchFiltered rewrites the slice it is given into subjects
			w, err = b.kv.WatchFiltered(ctx, slices.Clone(ids), jetstream.IgnoreDeletes())
		}
		return err
	})
	if err == nil && watchHook != nil {
		w = watchHook(w)
	}
	return w, err
}

// watchHook, when set (tests), wraps every watcher a watch starts.
var watchHook func(jetstream.KeyWatcher) jetstream.KeyWatcher

// bucketSeq is the last sequence of the records' bucket; false when it
// cannot be read now (a leader being elected).
func (b *Board) bucketSeq(ctx context.Context) (uint64, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	st, err := b.kv.Status(ctx)
	if err != nil {
		return 0, false
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok || bs.StreamInfo() == nil {
		return 0, false
	}
	return bs.StreamInfo().State.LastSeq, true
}
