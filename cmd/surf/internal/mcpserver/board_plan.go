package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/cmd/surf/internal/plancli"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
)

// BoardPlanTool plans a request on the board (package board/plan).
const BoardPlanTool = "board_plan"

// BoardPlanArgs is the input of board_plan.
type BoardPlanArgs struct {
	Request   string   `json:"request,omitempty" jsonschema:"What to find out on the web; the planner splits it into board tasks. Not with resume." schema:"maxLength=16000"`
	StartURL  string   `json:"start_url,omitempty" jsonschema:"Where the tasks start unless the planner says otherwise." schema:"maxLength=2000"`
	Allow     []string `json:"allow,omitempty" jsonschema:"Only these hosts for every task of the plan (patterns like example.org or *.example.org)." schema:"maxItems=50"`
	Deny      []string `json:"deny,omitempty" jsonschema:"Never these hosts." schema:"maxItems=50"`
	MaxTasks  int      `json:"max_tasks,omitempty" jsonschema:"Tasks the plan may add (default 20)." schema:"minimum=0,maximum=100"`
	MaxRounds int      `json:"max_rounds,omitempty" jsonschema:"Planner rounds: the first plan and each progress call (default 6)." schema:"minimum=0,maximum=50"`
	MaxTokens int      `json:"max_tokens,omitempty" jsonschema:"The planner's own model tokens (default 200000)." schema:"minimum=0,maximum=10000000"`
	Resume    string   `json:"resume,omitempty" jsonschema:"The id of a plan to carry on with (one that stopped: the call timed out, the server restarted)." schema:"maxLength=20"`
}

// BoardPlanResult is board_plan's result.
type BoardPlanResult struct {
	Plan    string          `json:"plan"`
	State   string          `json:"state"`
	Answer  string          `json:"answer,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	Sources []string        `json:"sources,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	Rounds  []string        `json:"rounds"`
	Tasks   []BoardTask     `json:"tasks"`
}

// planTools are the board tools of planning.
func (s *Server) planTools() []*tools.Tool {
	return []*tools.Tool{tools.New(BoardPlanTool, "Answer a request that needs several web lookups: surf's planner writes a task ledger and board tasks with dependencies, surf's workers run them, and the planner reads their results, re-plans around failures and answers, naming the tasks its answer rests on. "+
		"Sends a progress notification as each round is decided and each task ends, when the call has a progress token. The plan is kept on the board: if the call ends before the plan does, call again with resume set to the plan's id.",
		s.boardPlan)}
}

func (s *Server) boardPlan(ctx context.Context, in BoardPlanArgs) (*tools.Result, error) {
	if s.cfg.Model == nil {
		return nil, tools.Errorf("board_plan needs a model, and this server has none configured: start surf serve with --model and --base-url (or OPENAI_API_KEY and SURF_MODEL)")
	}
	principal := boardPrincipal(ctx)
	p, err := plan.New(plan.Config{Board: s.cfg.Board, Model: s.cfg.Model, ModelName: s.cfg.ModelName, Logger: s.log})
	if err != nil {
		return nil, err
	}
	id := in.Resume
	if id == "" {
		req, err := planRequest(in, principal)
		if err != nil {
			return nil, err
		}
		pl, err := p.Start(ctx, req)
		if err != nil {
			return nil, boardError(ctx, "the plan was not started", err)
		}
		id = pl.ID
	} else {
		if in.Request != "" {
			return nil, tools.Errorf("give either request or resume, not both")
		}
		pl, err := plan.Get(ctx, s.cfg.Board, id)
		if err == nil && pl.Request.Labels[PrincipalLabel] != principal {
			err = fmt.Errorf("%w: %s", board.ErrNoPlan, id)
		}
		if err != nil {
			return nil, boardError(ctx, "nothing to resume", err)
		}
	}
	notify, _ := ctx.Value(notifyKey{}).(func(string))
	if notify != nil {
		notify(fmt.Sprintf("plan %s: planning", id))
	}
	var end *plan.Plan
	for ev, err := range p.Run(ctx, id) {
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, tools.Errorf("plan %s stopped: %v; it is kept on the board: call board_plan with resume %q to carry on", id, err, id)
		}
		if notify != nil {
			notify(fmt.Sprintf("plan %s: %s", id, textcut.Flat(plancli.EventLine(ev), 300)))
		}
		if ev.Plan.State.Ended() {
			end = ev.Plan
		}
	}
	if end == nil {
		return nil, ctx.Err()
	}
	return s.planResult(ctx, end)
}

// planRequest is the plan.Request of board_plan's arguments.
func planRequest(in BoardPlanArgs, principal string) (plan.Request, error) {
	req := plan.Request{Request: in.Request, StartURL: strings.TrimSpace(in.StartURL), MaxTasks: in.MaxTasks, MaxRounds: in.MaxRounds, MaxTokens: in.MaxTokens}
	if strings.TrimSpace(in.Request) == "" {
		return req, tools.Errorf("give the request (or resume, a plan's id)")
	}
	if len(in.Allow)+len(in.Deny) > 0 {
		req.Policy = &board.Policy{}
		for _, h := range in.Allow {
			hr, err := policy.ParseHostRule(h)
			if err != nil {
				return req, tools.Errorf("allow %q: %v", h, err)
			}
			req.Policy.Allow = append(req.Policy.Allow, hr)
		}
		for _, h := range in.Deny {
			hr, err := policy.ParseHostRule(h)
			if err != nil {
				return req, tools.Errorf("deny %q: %v", h, err)
			}
			req.Policy.Deny = append(req.Policy.Deny, hr)
		}
	}
	if principal != "" {
		req.Labels = map[string]string{PrincipalLabel: principal}
	}
	return req, nil
}

// planResult is an ended plan as board_plan's result; a plan that gave
// up is an error result with the same content.
func (s *Server) planResult(ctx context.Context, pl *plan.Plan) (*tools.Result, error) {
	out := BoardPlanResult{Plan: pl.ID, State: string(pl.State), Answer: pl.Answer, Data: pl.Data, Sources: pl.Sources, Reason: pl.Reason, Rounds: []string{}, Tasks: []BoardTask{}}
	for _, r := range pl.Rounds {
		out.Rounds = append(out.Rounds, plancli.RoundLine(r))
	}
	for _, id := range pl.Tasks() {
		if r, err := s.cfg.Board.Get(ctx, id); err == nil {
			out.Tasks = append(out.Tasks, brief(r, answerCut))
		}
	}
	res, err := jsonResult(out)
	if err != nil || pl.State == plan.Done {
		return res, err
	}
	return res, tools.NewError(errors.New("the plan gave up: " + pl.Reason))
}
