// Package plan is surf's planner on the board: an orchestrator that turns
// a request into board tasks with dependencies, follows them, and answers.
//
// A planner model call writes the task ledger (facts given, to look up, to
// derive, guesses, a plan) and puts tasks on the board; the board's
// workers run them; when they have ended, a progress call reads their
// results and decides: finish (an answer with the tasks whose results
// support it), re-plan (new tasks, told what failed and why) or give up.
// The model decides through four tools (add_tasks, update_ledger, finish,
// give_up), so any OpenAI-compatible model with tool calls can plan.
//
// The plan's record (ledgers, rounds, state) is kept on the board
// (Board.PutPlan) and written before each act, so a planner killed at any
// point carries on where it was when Run is called again with the plan's
// id: a decided round is not asked again, and a task is never added
// twice. Tasks are named PLAN-ID and labelled plan=PLAN; the plan's policy
// narrows every task's.
//
//	p, err := plan.New(plan.Config{Board: b, Model: model, ModelName: "gpt-4o"})
//	pl, err := p.Start(ctx, plan.Request{Request: "..."})
//	for ev, err := range p.Run(ctx, pl.ID) { ... }
package plan

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/tools"
)

// Defaults of zero Config limits.
const (
	DefaultMaxTasks  = 20
	DefaultMaxRounds = 6
	DefaultMaxTokens = 200_000
	DefaultMaxStalls = 2
	// turnsPerRound bounds the model calls of one round: a model that
	// keeps calling tools wrongly, or none, gives up the plan.
	turnsPerRound = 4
	maxNameLen    = 40
)

// Model is what the planner needs from a model: one chat completion
// (internal/llm's Client and go-openai's Client both are one).
type Model interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

// Reviewer shows a plan's first tasks to a person before any runs: it
// returns the tasks to run (the same, or edited), or an error to reject
// the plan (ErrRejected, or one that says why).
type Reviewer func(ctx context.Context, pl *Plan, tasks []TaskSpec) ([]TaskSpec, error)

// ErrRejected is a Reviewer's rejection.
var ErrRejected = errors.New("the plan was rejected")

// Config configures a Planner. The zero value plus a Board and a Model is
// a working planner with the documented limits.
type Config struct {
	// Board holds the plan and its tasks. Required.
	Board *board.Board
	// Model plans; ModelName is sent with each request.
	Model     Model
	ModelName string
	// Review, when set, is shown the first round's tasks before they are
	// added. A plan started with it waits for it on resume too.
	Review Reviewer
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Request is what a plan is asked, with its limits.
type Request struct {
	// ID names the plan (default: one is made). Letters, digits, '-' and
	// '_', at most 20.
	ID string `json:"id"`
	// Request is what the person asked. Required.
	Request string `json:"request"`
	// StartURL, when set, is where the tasks start unless they say
	// otherwise.
	StartURL string `json:"start_url,omitempty"`
	// Policy narrows the policy of every task of the plan.
	Policy *board.Policy `json:"policy,omitempty"`
	// OutputSchema, when set, is a JSON Schema the final answer's data
	// must match (finish's data argument).
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// MaxTasks bounds the tasks of the plan, MaxRounds the model rounds
	// (the first plan and each progress call), MaxTokens the planner's
	// own tokens, MaxStalls the progress rounds in a row in which no new
	// task got done. Zeros mean the defaults.
	MaxTasks  int `json:"max_tasks"`
	MaxRounds int `json:"max_rounds"`
	MaxTokens int `json:"max_tokens"`
	MaxStalls int `json:"max_stalls"`
	// TaskMaxSteps bounds each task's steps (zero: the worker's default).
	TaskMaxSteps int `json:"task_max_steps,omitempty"`
	// Labels are added to every task of the plan (besides plan and
	// plan_task, which the plan sets).
	Labels map[string]string `json:"labels,omitempty"`
	// Review makes Run wait for Config.Review before the first tasks are
	// added (set by Start when Config.Review is set).
	Review bool `json:"review,omitempty"`
}

// State is where a plan is.
type State string

// A plan's states: planning (a model round is due), review (the first
// round's tasks wait for a person), running (its tasks are on the board),
// and the ends: done (answered) and gave_up.
const (
	Planning State = "planning"
	Review   State = "review"
	Running  State = "running"
	Done     State = "done"
	GaveUp   State = "gave_up"
)

// Ended reports whether the plan will not change again.
func (s State) Ended() bool { return s == Done || s == GaveUp }

// Ledger is the task ledger: what the planner knows and means to do.
type Ledger struct {
	FactsGiven    []string `json:"facts_given,omitempty"`
	FactsToLookup []string `json:"facts_to_lookup,omitempty"`
	FactsToDerive []string `json:"facts_to_derive,omitempty"`
	Guesses       []string `json:"guesses,omitempty"`
	Plan          string   `json:"plan,omitempty"`
}

// TaskSpec is a task as the planner writes it: its id is the plan's
// short name (the board's id is PLAN-ID), After names tasks of the plan.
type TaskSpec struct {
	ID           string          `json:"id"`
	Instruction  string          `json:"instruction"`
	StartURL     string          `json:"start_url,omitempty"`
	After        []string        `json:"after,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Round is one model round and what it decided.
type Round struct {
	N int `json:"n"`
	// Decision is add (the first tasks), replan (new tasks after some
	// failed), continue (more tasks, none failed), finish or give_up.
	Decision string `json:"decision"`
	// Tasks are the tasks the round adds; Added is true once they all
	// are on the board.
	Tasks []TaskSpec `json:"tasks,omitempty"`
	Added bool       `json:"added,omitempty"`
	// Failed are the plan's tasks that had failed when the round was
	// asked ("ID: reason"): what a re-plan answers.
	Failed []string `json:"failed,omitempty"`
	// Reviewed is approved or edited when a person saw the tasks.
	Reviewed string `json:"reviewed,omitempty"`
	// Note is the give_up reason, or how the limits ended the round.
	Note   string    `json:"note,omitempty"`
	Tokens int       `json:"tokens,omitempty"`
	At     time.Time `json:"at"`
}

// Plan is a plan's record on the board.
type Plan struct {
	ID      string  `json:"id"`
	Request Request `json:"request"`
	State   State   `json:"state"`
	Ledger  Ledger  `json:"ledger"`
	Rounds  []Round `json:"rounds,omitempty"`
	// Answer, Data and Sources are the final answer (Done); Reason says
	// why the plan gave up.
	Answer  string          `json:"answer,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Sources []string        `json:"sources,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	// Tokens are the planner's own model tokens; Stalls the progress
	// rounds in a row in which no new task got done.
	Tokens  int       `json:"tokens,omitempty"`
	Stalls  int       `json:"stalls,omitempty"`
	Done    int       `json:"done_tasks,omitempty"` // tasks done when the last round was asked
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	rev uint64
}

// Tasks are the board ids of the tasks the plan has added, in order.
func (pl *Plan) Tasks() []string {
	var ids []string
	for _, r := range pl.Rounds {
		if !r.Added {
			continue
		}
		for _, t := range r.Tasks {
			ids = append(ids, pl.TaskID(t.ID))
		}
	}
	return ids
}

// TaskID is the board id of the plan's task name.
func (pl *Plan) TaskID(name string) string { return pl.ID + "-" + name }

// Name is the plan's name of a board task id ("" when not the plan's).
func (pl *Plan) Name(taskID string) string {
	name, ok := strings.CutPrefix(taskID, pl.ID+"-")
	if !ok {
		return ""
	}
	return name
}

// Planner plans on one board with one model.
type Planner struct {
	cfg Config
	log *slog.Logger
	reg *tools.Registry
}

// New checks cfg.
func New(cfg Config) (*Planner, error) {
	if cfg.Board == nil {
		return nil, errors.New("plan: Config.Board is required")
	}
	if cfg.Model == nil {
		return nil, errors.New("plan: Config.Model is required")
	}
	p := &Planner{cfg: cfg, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	reg, err := tools.NewRegistry(tools.Config{Logger: p.log})
	if err != nil {
		return nil, err
	}
	reg.Add(registryTools()...)
	p.reg = reg
	return p, nil
}

// Start checks req and puts a new plan on the board, in state planning;
// Run then follows it.
func (p *Planner) Start(ctx context.Context, req Request) (*Plan, error) {
	if err := checkRequest(&req); err != nil {
		return nil, err
	}
	req.Review = p.cfg.Review != nil
	now := time.Now().UTC()
	pl := &Plan{ID: req.ID, Request: req, State: Planning, Created: now, Updated: now}
	data, err := json.Marshal(pl)
	if err != nil {
		return nil, err
	}
	rev, err := p.cfg.Board.PutPlan(ctx, pl.ID, data, 0)
	if errors.Is(err, board.ErrPlanConflict) {
		return nil, fmt.Errorf("plan %s is already on the board (resume it instead)", pl.ID)
	}
	if err != nil {
		return nil, err
	}
	pl.rev = rev
	return pl, nil
}

// checkRequest refuses a bad request and fills in the defaults.
func checkRequest(req *Request) error {
	req.Request = strings.TrimSpace(req.Request)
	switch {
	case req.Request == "":
		return errors.New("the request is empty")
	case len(req.Request) > 16<<10:
		return fmt.Errorf("the request is %d bytes; at most %d", len(req.Request), 16<<10)
	case req.MaxTasks < 0 || req.MaxRounds < 0 || req.MaxTokens < 0 || req.MaxStalls < 0 || req.TaskMaxSteps < 0:
		return errors.New("the plan's limits cannot be negative")
	}
	if req.ID == "" {
		req.ID = newID()
	}
	if len(req.ID) > 20 || !namePattern.MatchString(req.ID) {
		return fmt.Errorf("plan id %q: use letters, digits, '-' and '_' (at most 20)", req.ID)
	}
	if req.StartURL != "" {
		if err := checkURL(req.StartURL, req.Policy); err != nil {
			return err
		}
	}
	if len(req.OutputSchema) > 0 {
		sch, err := tools.ParseOutputSchema(req.OutputSchema)
		if err != nil {
			return err
		}
		req.OutputSchema = sch.JSON()
	}
	if req.Policy != nil {
		if _, err := narrowed(req.Policy); err != nil {
			return fmt.Errorf("the plan's policy: %w", err)
		}
	}
	req.MaxTasks = def(req.MaxTasks, DefaultMaxTasks)
	req.MaxRounds = def(req.MaxRounds, DefaultMaxRounds)
	req.MaxTokens = def(req.MaxTokens, DefaultMaxTokens)
	req.MaxStalls = def(req.MaxStalls, DefaultMaxStalls)
	return nil
}

func def(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// Get reads plan id's record from b.
func Get(ctx context.Context, b *board.Board, id string) (*Plan, error) {
	data, rev, err := b.GetPlan(ctx, id)
	if err != nil {
		return nil, err
	}
	var pl Plan
	if err := json.Unmarshal(data, &pl); err != nil {
		return nil, fmt.Errorf("plan %s: unreadable record: %v", id, err)
	}
	pl.rev = rev
	return &pl, nil
}

// save writes pl by compare-and-set on the revision it was read at.
func (p *Planner) save(ctx context.Context, pl *Plan) error {
	pl.Updated = time.Now().UTC()
	data, err := json.Marshal(pl)
	if err != nil {
		return err
	}
	rev, err := p.cfg.Board.PutPlan(ctx, pl.ID, data, pl.rev)
	if errors.Is(err, board.ErrPlanConflict) {
		return fmt.Errorf("plan %s was changed by another planner: %w", pl.ID, err)
	}
	if err != nil {
		return fmt.Errorf("saving plan %s: %w", pl.ID, err)
	}
	pl.rev = rev
	return nil
}

func newID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var buf [6]byte
	rand.Read(buf[:])
	out := []byte("p")
	for _, c := range buf {
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}
