package plan

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/surfkit/surf/board"
)

// EventKind says what an Event reports.
type EventKind string

// The events of a run: a round decided, a task put on the board, a task
// ended, and the plan's end (done or gave up).
const (
	RoundDecided EventKind = "round"
	TaskAdded    EventKind = "task_added"
	TaskEnded    EventKind = "task_ended"
	PlanDone     EventKind = "done"
	PlanGaveUp   EventKind = "gave_up"
)

// Event is a step of a plan's run.
type Event struct {
	Kind EventKind
	// Plan is the plan as it was then (a copy).
	Plan *Plan
	// Round is the round decided (RoundDecided).
	Round *Round
	// Task is the task's record (TaskAdded, TaskEnded).
	Task *board.Record
}

// Run follows plan id from where its record says it is until it is done
// or gives up, yielding what happens. It asks the model for a round when
// one is due, adds a decided round's tasks that are not on the board yet,
// waits for the plan's tasks to end, and writes the record before each
// act: a Run that is stopped (ctx, a crash) and called again carries on
// without asking a decided round again or adding a task twice. An error
// (the model or the board unreachable, ctx ended) ends the sequence and
// leaves the plan where it was, to be resumed.
func (p *Planner) Run(ctx context.Context, id string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		pl, err := Get(ctx, p.cfg.Board, id)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for {
			ev, err := p.step(ctx, pl, yield)
			if err != nil {
				yield(Event{}, err)
				return
			}
			if ev == stopped {
				return
			}
			if pl.State.Ended() {
				kind := PlanDone
				if pl.State == GaveUp {
					kind = PlanGaveUp
				}
				yield(Event{Kind: kind, Plan: pl.clone()}, nil)
				return
			}
		}
	}
}

type stepResult int

const (
	goOn stepResult = iota
	stopped
)

// step does the plan's next act.
func (p *Planner) step(ctx context.Context, pl *Plan, yield func(Event, error) bool) (stepResult, error) {
	if pl.State.Ended() {
		return goOn, nil
	}
	if n := len(pl.Rounds); n > 0 && !pl.Rounds[n-1].Added && len(pl.Rounds[n-1].Tasks) > 0 {
		if pl.State == Review {
			return goOn, p.review(ctx, pl)
		}
		return p.add(ctx, pl, yield)
	}
	switch pl.State {
	case Running:
		if res, err := p.wait(ctx, pl, yield); err != nil || res == stopped {
			return res, err
		}
		pl.State = Planning
		return goOn, p.save(ctx, pl)
	case Planning:
		r, err := p.decide(ctx, pl)
		if err != nil {
			return goOn, err
		}
		p.apply(pl, r)
		if err := p.save(ctx, pl); err != nil {
			return goOn, err
		}
		if !yield(Event{Kind: RoundDecided, Plan: pl.clone(), Round: &r}, nil) {
			return stopped, nil
		}
		return goOn, nil
	}
	return goOn, fmt.Errorf("plan %s is in an unknown state %q", pl.ID, pl.State)
}

// apply records a decided round on pl.
func (p *Planner) apply(pl *Plan, r Round) {
	pl.Rounds = append(pl.Rounds, r)
	switch r.Decision {
	case "finish":
		pl.State = Done
	case "give_up":
		pl.State, pl.Reason = GaveUp, r.Note
	default:
		if len(pl.Rounds) == 1 && pl.Request.Review {
			pl.State = Review
		}
	}
}

// add puts the last round's tasks on the board (those not there yet),
// then records that they are.
func (p *Planner) add(ctx context.Context, pl *Plan, yield func(Event, error) bool) (stepResult, error) {
	b := p.cfg.Board
	r := &pl.Rounds[len(pl.Rounds)-1]
	var missing []board.Task
	for _, t := range boardTasks(pl, r.Tasks) {
		_, err := b.Get(ctx, t.ID)
		if errors.Is(err, board.ErrNotFound) {
			missing = append(missing, t)
		} else if err != nil {
			return goOn, err
		}
	}
	var recs []board.Record
	if len(missing) > 0 {
		var err error
		if recs, err = b.Add(ctx, missing...); err != nil {
			return goOn, fmt.Errorf("adding round %d's tasks: %w", r.N, err)
		}
	}
	r.Added = true
	pl.State = Running
	if err := p.save(ctx, pl); err != nil {
		return goOn, err
	}
	for i := range recs {
		if !yield(Event{Kind: TaskAdded, Plan: pl.clone(), Task: &recs[i]}, nil) {
			return stopped, nil
		}
	}
	return goOn, nil
}

// review shows the first round's tasks to the reviewer and records what
// it decided.
func (p *Planner) review(ctx context.Context, pl *Plan) error {
	if p.cfg.Review == nil {
		return fmt.Errorf("plan %s waits for its first tasks to be reviewed (resume it with a reviewer: surf plan --resume %s --review)", pl.ID, pl.ID)
	}
	r := &pl.Rounds[len(pl.Rounds)-1]
	got, err := p.cfg.Review(ctx, pl.clone(), slices.Clone(r.Tasks))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		pl.State, pl.Reason = GaveUp, "rejected by the reviewer"
		if !errors.Is(err, ErrRejected) {
			pl.Reason += ": " + err.Error()
		}
		r.Reviewed = "rejected"
		return p.save(ctx, pl)
	}
	if len(got) == 0 {
		return errors.New("the reviewed plan has no task; reject it instead")
	}
	checked, err := pl.CheckFirst(got)
	if err != nil {
		return fmt.Errorf("the reviewed plan: %w", err)
	}
	r.Reviewed = "approved"
	if !sameSpecs(r.Tasks, checked) {
		r.Reviewed = "edited"
	}
	r.Tasks = checked
	pl.State = Planning // add follows
	return p.save(ctx, pl)
}

func sameSpecs(a, b []TaskSpec) bool {
	return slices.EqualFunc(a, b, func(x, y TaskSpec) bool {
		return x.ID == y.ID && sameTask(x, y) && string(x.OutputSchema) == string(y.OutputSchema)
	})
}

// wait waits until the last round's tasks have ended (those of earlier
// rounds had ended before it was asked), yielding each end.
func (p *Planner) wait(ctx context.Context, pl *Plan, yield func(Event, error) bool) (stepResult, error) {
	var ids []string
	for i := len(pl.Rounds) - 1; i >= 0 && len(ids) == 0; i-- {
		if r := pl.Rounds[i]; r.Added {
			for _, t := range r.Tasks {
				ids = append(ids, pl.TaskID(t.ID))
			}
		}
	}
	if len(ids) == 0 {
		return goOn, nil
	}
	ended := map[string]bool{}
	for ev, err := range p.cfg.Board.Watch(ctx, ids...) {
		if err != nil {
			return goOn, err
		}
		rec := ev.Record
		if !rec.State.Terminal() || ended[rec.Task.ID] {
			continue
		}
		ended[rec.Task.ID] = true
		if !yield(Event{Kind: TaskEnded, Plan: pl.clone(), Task: &rec}, nil) {
			return stopped, nil
		}
		if len(ended) == len(ids) {
			return goOn, nil
		}
	}
	if ctx.Err() != nil {
		return goOn, ctx.Err()
	}
	return goOn, errors.New("the board's watch ended")
}

// records are the plan's tasks' records, by board id.
func (p *Planner) records(ctx context.Context, pl *Plan) (map[string]board.Record, error) {
	out := map[string]board.Record{}
	for _, id := range pl.Tasks() {
		r, err := p.cfg.Board.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out[id] = r
	}
	return out, nil
}

func (pl *Plan) clone() *Plan {
	c := *pl
	c.Rounds = slices.Clone(pl.Rounds)
	c.Sources = slices.Clone(pl.Sources)
	return &c
}

// giveUp is a round that ends the plan for a limit.
func giveUp(n int, note string) Round {
	return Round{N: n, Decision: "give_up", Note: note, At: time.Now().UTC()}
}

// CheckFirst checks tasks as the plan's first round, as a reviewer
// edited them: the checks the model's tasks get (ids, dependencies within
// the plan, start URLs within its policy, references, the task limit).
// It returns them as they would be added.
func (pl *Plan) CheckFirst(tasks []TaskSpec) ([]TaskSpec, error) {
	first := &Plan{ID: pl.ID, Request: pl.Request}
	args := AddTasksArgs{}
	for _, t := range tasks {
		args.Tasks = append(args.Tasks, TaskArg{ID: t.ID, Instruction: t.Instruction, StartURL: t.StartURL, After: t.After, OutputSchema: string(t.OutputSchema)})
	}
	return specs(first, args, nil)
}
