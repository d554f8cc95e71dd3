package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/board/plan"
	"github.com/surfkit/surf/cmd/surf/internal/plancli"
)

var planUsage = helpText("plan")

func init() {
	c := &command{name: "plan", summary: "plan a request as board tasks, follow them and answer", usage: planUsage}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runPlan(ctx, cli, c, args) }
	register(c)
}

type planFlags struct {
	req                       plan.Request
	policyFile, schema, resum string
	allow, deny               []string
	review, json              bool
	boardF                    *boardFlags
	mf                        *modelFlags
}

func parsePlanFlags(c *command, args []string) (*planFlags, error) {
	fs := newFlags(c)
	f := &planFlags{}
	fs.StringVar(&f.req.StartURL, "start-url", "", "")
	fs.StringVar(&f.policyFile, "policy", "", "")
	fs.StringArrayVar(&f.allow, "allow", nil, "")
	fs.StringArrayVar(&f.deny, "deny", nil, "")
	fs.IntVar(&f.req.MaxTasks, "max-tasks", 0, "")
	fs.IntVar(&f.req.MaxRounds, "max-rounds", 0, "")
	fs.IntVar(&f.req.MaxTokens, "max-tokens", 0, "")
	fs.IntVar(&f.req.TaskMaxSteps, "task-max-steps", 0, "")
	fs.StringVar(&f.schema, "output-schema", "", "")
	fs.StringVar(&f.req.ID, "id", "", "")
	fs.StringVar(&f.resum, "resume", "", "")
	fs.BoolVar(&f.review, "review", false, "")
	fs.BoolVar(&f.json, "json", false, "")
	f.boardF = addBoardFlags(fs)
	f.mf = addModelFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	switch {
	case f.resum == "" && fs.NArg() != 1:
		return nil, usagef(c, "plan takes one request (quote it), got %d arguments", fs.NArg())
	case f.resum != "" && (fs.NArg() > 0 || fs.Changed("id") || fs.Changed("start-url") || fs.Changed("output-schema") || len(f.allow)+len(f.deny) > 0 || f.policyFile != ""):
		return nil, usagef(c, "--resume carries on with the plan as it was started: give no request, --id, --start-url, --output-schema or policy")
	case f.req.MaxTasks < 0 || f.req.MaxRounds < 0 || f.req.MaxTokens < 0 || f.req.TaskMaxSteps < 0:
		return nil, usagef(c, "limits cannot be negative")
	}
	f.req.Request = fs.Arg(0)
	var err error
	if f.req.Policy, err = taskPolicy(f.policyFile, f.allow, f.deny); err != nil {
		return nil, err
	}
	if f.schema != "" {
		sch, err := readOutputSchema(f.schema)
		if err != nil {
			return nil, err
		}
		f.req.OutputSchema = sch.JSON()
	}
	return f, nil
}

// runPlan is surf plan.
func runPlan(ctx context.Context, cli *CLI, c *command, args []string) error {
	f, err := parsePlanFlags(c, args)
	if err != nil {
		return err
	}
	model, modelName, err := f.mf.client(ctx, cli)
	if err != nil {
		return err
	}
	b, err := f.boardF.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	cfg := plan.Config{Board: b, Model: model, ModelName: modelName, Logger: cli.Logger}
	if f.review {
		cfg.Review = plancli.Reviewer(cli.Stdin, cli.Stderr, func(ctx context.Context, path string) error { return runEditor(ctx, cli, path) })
	}
	p, err := plan.New(cfg)
	if err != nil {
		return err
	}
	id := f.resum
	if id == "" {
		pl, err := p.Start(ctx, f.req)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		id = pl.ID
		fmt.Fprintf(cli.Stderr, "surf: plan %s started (if it stops, carry on with: surf plan --resume %s)\n", id, id)
	}
	return followPlan(ctx, cli, p, id, f.json)
}

// followPlan runs plan id to its end, printing its events.
func followPlan(ctx context.Context, cli *CLI, p *plan.Planner, id string, asJSON bool) error {
	for ev, err := range p.Run(ctx, id) {
		if err != nil {
			if errors.Is(err, board.ErrNoPlan) {
				return withHint(err, "'surf board show PLAN_ID' shows a plan; check --data or --nats")
			}
			return withHint(err, fmt.Sprintf("the plan is kept on the board: carry on with surf plan --resume %s", id))
		}
		if asJSON {
			json.NewEncoder(cli.Stdout).Encode(plancli.JSON(ev))
		} else {
			fmt.Fprintln(cli.Stdout, plancli.EventLine(ev))
		}
		if ev.Kind == plan.PlanGaveUp {
			return &exitError{code: 1, err: fmt.Errorf("plan %s gave up: %s", id, ev.Plan.Reason)}
		}
	}
	return ctx.Err()
}

// runEditor opens path in $VISUAL or $EDITOR (vi when neither is set).
func runEditor(ctx context.Context, cli *CLI, path string) error {
	ed := cli.Getenv("VISUAL")
	if ed == "" {
		ed = cli.Getenv("EDITOR")
	}
	if strings.TrimSpace(ed) == "" {
		ed = "vi"
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", ed+` "$1"`, "sh", path)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stderr, os.Stderr
	return cmd.Run()
}

// showPlan prints plan id, when the board holds one by that id: its
// ledger, rounds and tasks (surf board show PLAN_ID).
func showPlan(ctx context.Context, cli *CLI, b *board.Board, id string, asJSON bool) (bool, error) {
	return plancli.ShowOnBoard(ctx, cli.Stdout, b, id, asJSON)
}
