package plan

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/taskref"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
)

// The planner's tools: the model's whole contract.
const (
	toolAddTasks = "add_tasks"
	toolLedger   = "update_ledger"
	toolFinish   = "finish"
	toolGiveUp   = "give_up"
)

// TaskArg is one task of add_tasks.
type TaskArg struct {
	ID           string   `json:"id" jsonschema:"A short id for the task, unique in the plan: letters, digits, '-' and '_'." schema:"minLength=1,maxLength=40"`
	Instruction  string   `json:"instruction" jsonschema:"What the surfer must find or do, and what to answer with. Self-contained: the surfer knows nothing else." schema:"minLength=1,maxLength=4000"`
	StartURL     string   `json:"start_url,omitempty" jsonschema:"The page the surfer starts on (http or https)." schema:"maxLength=2000"`
	After        []string `json:"after,omitempty" jsonschema:"Ids of the plan's tasks that must be done first; their results are handed to this one." schema:"maxItems=20"`
	OutputSchema string   `json:"output_schema,omitempty" jsonschema:"Optional: a JSON Schema (as JSON text) the task's structured result must match." schema:"maxLength=8000"`
}

// AddTasksArgs is add_tasks' input.
type AddTasksArgs struct {
	Tasks []TaskArg `json:"tasks" jsonschema:"The tasks to put on the board." schema:"minItems=1,maxItems=20"`
}

// LedgerArgs is update_ledger's input.
type LedgerArgs struct {
	FactsGiven    []string `json:"facts_given" jsonschema:"Facts the request itself states." schema:"maxItems=30"`
	FactsToLookup []string `json:"facts_to_lookup" jsonschema:"Facts to find on the web, and where." schema:"maxItems=30"`
	FactsToDerive []string `json:"facts_to_derive" jsonschema:"Facts that follow from the others." schema:"maxItems=30"`
	Guesses       []string `json:"guesses" jsonschema:"What you believe but have not checked." schema:"maxItems=30"`
	Plan          string   `json:"plan" jsonschema:"How the tasks get the answer, as a short bullet list." schema:"maxLength=4000"`
}

// FinishArgs is finish's input.
type FinishArgs struct {
	Answer  string   `json:"answer" jsonschema:"The final answer to the request." schema:"minLength=1,maxLength=20000"`
	Sources []string `json:"sources" jsonschema:"Ids of the done tasks whose results support the answer." schema:"minItems=1,maxItems=50"`
	Data    string   `json:"data,omitempty" jsonschema:"The answer as JSON text matching the plan's output schema, when it has one." schema:"maxLength=20000"`
}

// GiveUpArgs is give_up's input.
type GiveUpArgs struct {
	Reason string `json:"reason" jsonschema:"Why the request cannot be answered." schema:"minLength=1,maxLength=4000"`
}

// registryTools are the tools with handlers that only accept: the
// planner acts on the validated arguments itself (see round).
func registryTools() []*tools.Tool {
	return []*tools.Tool{
		tools.New(toolAddTasks, "Put tasks on the board for web surfers. Tasks without 'after' run at once, in parallel; a task runs after the tasks its 'after' names, and is handed their results.",
			func(context.Context, AddTasksArgs) (*tools.Result, error) { return tools.Text("ok"), nil }),
		tools.New(toolLedger, "Write the task ledger: the facts given, to look up and to derive, your guesses, and the plan.",
			func(context.Context, LedgerArgs) (*tools.Result, error) { return tools.Text("ok"), nil }),
		tools.New(toolFinish, "Answer the request, naming the done tasks whose results support the answer.",
			func(context.Context, FinishArgs) (*tools.Result, error) { return tools.Text("ok"), nil }),
		tools.New(toolGiveUp, "Give up: the request cannot be answered within the plan's limits. Say why.",
			func(context.Context, GiveUpArgs) (*tools.Result, error) { return tools.Text("ok"), nil }),
	}
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// checkURL refuses a start URL that is not http(s), or that the plan's
// policy denies.
func checkURL(raw string, pol *board.Policy) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("start URL %q is not an http(s) URL", raw)
	}
	if pol == nil {
		return nil
	}
	// the plan's policy alone judges it: the base allows this very host
	rule, err := policy.ParseHostRule(u.Host)
	if err != nil {
		return nil
	}
	base, err := policy.New(policy.Config{Allow: []policy.HostRule{rule}})
	if err != nil {
		return nil
	}
	p, err := pol.Apply(base)
	if err != nil {
		return err
	}
	if d := p.DecideURL(policy.Navigation, raw, ""); d.Verdict == policy.Deny {
		return fmt.Errorf("start URL %s is outside the plan's policy: %s", raw, d.Reason)
	}
	return nil
}

// narrowed compiles pol over the default policy, to find bad rules.
func narrowed(pol *board.Policy) (*policy.Policy, error) {
	base, err := policy.New(policy.Config{})
	if err != nil {
		return nil, err
	}
	return pol.Apply(base)
}

// specs checks add_tasks' tasks against the plan (ids new, dependencies
// known, URLs within the policy, references to tasks they run after,
// not a repeat of a task that ended, the task limit) and returns them as
// the plan's TaskSpecs. Its errors go back to the model.
func specs(pl *Plan, args AddTasksArgs, recs map[string]board.Record) ([]TaskSpec, error) {
	known := map[string]bool{}
	for _, r := range pl.Rounds {
		if r.Added {
			for _, t := range r.Tasks {
				known[t.ID] = true
			}
		}
	}
	if n := len(known) + len(args.Tasks); n > pl.Request.MaxTasks {
		return nil, fmt.Errorf("the plan may have at most %d tasks; it has %d, so add at most %d", pl.Request.MaxTasks, len(known), max(pl.Request.MaxTasks-len(known), 0))
	}
	batch := map[string]bool{}
	var errs []error
	var out []TaskSpec
	for _, a := range args.Tasks {
		t := TaskSpec{ID: strings.TrimSpace(a.ID), Instruction: strings.TrimSpace(a.Instruction), StartURL: strings.TrimSpace(a.StartURL), After: a.After}
		if err := checkSpec(pl, &t, a.OutputSchema, known, batch, recs); err != nil {
			errs = append(errs, fmt.Errorf("task %q: %w", a.ID, err))
			continue
		}
		batch[t.ID] = true
		out = append(out, t)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w\nNo task was added; call add_tasks again with all the tasks", err)
	}
	// dependencies within the batch may name later tasks; check them now
	for _, t := range out {
		for _, d := range t.After {
			if !known[d] && !batch[d] {
				return nil, fmt.Errorf("task %q runs after %q, which is not a task of the plan; no task was added", t.ID, d)
			}
		}
	}
	return out, nil
}

func checkSpec(pl *Plan, t *TaskSpec, schema string, known, batch map[string]bool, recs map[string]board.Record) error {
	if len(t.ID) > maxNameLen || !namePattern.MatchString(t.ID) {
		return errors.New("an id is letters, digits, '-' and '_', at most 40")
	}
	if known[t.ID] || batch[t.ID] {
		return errors.New("the plan already has a task with this id; choose a new one")
	}
	if t.Instruction == "" {
		return errors.New("the instruction is empty")
	}
	if t.StartURL == "" {
		t.StartURL = pl.Request.StartURL
	}
	if t.StartURL != "" {
		if err := checkURL(t.StartURL, pl.Request.Policy); err != nil {
			return err
		}
	}
	seen := map[string]bool{}
	for _, d := range t.After {
		if d == t.ID || seen[d] {
			return fmt.Errorf("after names %q twice or the task itself", d)
		}
		seen[d] = true
	}
	refs, err := taskref.Parse(t.Instruction)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if !seen[r.Task] {
			return fmt.Errorf("the instruction quotes %s, but the task does not run after %q", r.Text, r.Task)
		}
	}
	if schema != "" {
		sch, err := tools.ParseOutputSchema([]byte(schema))
		if err != nil {
			return err
		}
		t.OutputSchema = sch.JSON()
	}
	// a task that already ended the same way is not asked again
	for _, r := range pl.Rounds {
		for _, old := range r.Tasks {
			if !r.Added || !sameTask(old, *t) {
				continue
			}
			if rec, ok := recs[pl.TaskID(old.ID)]; ok && rec.State.Terminal() {
				return fmt.Errorf("task %q asked the same (instruction and start URL) and ended %s%s; do not repeat it: take another way", old.ID, rec.State, reasonOf(rec))
			}
		}
	}
	return nil
}

func sameTask(a, b TaskSpec) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	return norm(a.Instruction) == norm(b.Instruction) && a.StartURL == b.StartURL && slices.Equal(a.After, b.After)
}

func reasonOf(r board.Record) string {
	if r.Reason == "" {
		return ""
	}
	return ": " + r.Reason
}

// boardTasks makes the board tasks of specs: ids and dependencies
// prefixed by the plan's id, references rewritten to them, the plan's
// policy and labels.
func boardTasks(pl *Plan, specs []TaskSpec) []board.Task {
	out := make([]board.Task, 0, len(specs))
	for _, s := range specs {
		instr := s.Instruction
		if refs, err := taskref.Parse(instr); err == nil {
			instr = taskref.Expand(instr, refs, func(r taskref.Ref) (string, bool) {
				path := ""
				for _, k := range r.Path {
					path += "." + k
				}
				return "{{" + pl.TaskID(r.Task) + "." + r.Field + path + "}}", true
			})
		}
		t := board.Task{
			ID: pl.TaskID(s.ID), Instruction: instr, StartURL: s.StartURL, Policy: pl.Request.Policy,
			MaxSteps: pl.Request.TaskMaxSteps, OutputSchema: s.OutputSchema,
		}
		t.Labels = maps.Clone(pl.Request.Labels)
		if t.Labels == nil {
			t.Labels = map[string]string{}
		}
		t.Labels["plan"], t.Labels["plan_task"] = pl.ID, s.ID
		for _, d := range s.After {
			t.After = append(t.After, pl.TaskID(d))
		}
		out = append(out, t)
	}
	return out
}

// decodeArgs decodes a call's normalized arguments.
func decodeArgs(raw json.RawMessage, v any) error {
	return json.Unmarshal(raw, v)
}
