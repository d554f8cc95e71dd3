package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/board"
)

func init() { addBoardSub("add", boardAddUsage, boardAdd) }

const boardAddUsage = `Usage: surf board add TASK [flags]
       surf board add --from FILE|- [--json]

Puts a task on the board and prints its id. It runs when every task it
comes --after is done; when one of them fails or is cancelled, it fails
with that reason (unless --run-after-failure). Their answers (and
structured results) are given to its model as quoted data, and the
instruction may quote one where it is needed: {{ID.answer}}, {{ID.result}}
or {{ID.result.KEY}}, for an ID it runs --after (anything else between
{{ and }} is refused).

A batch comes from a JSONL file (or stdin with "-"): one task a line, as
JSON with the fields id, instruction, start_url, after, run_after_failure,
max_steps, max_time ("5m"), labels, output_schema (a JSON Schema),
saved_state (as --state) and policy ({"allow": [{"host":
"example.com"}], "deny": [...], "ask": [...], "actions": [...]}). Blank
lines and lines starting with # are skipped. The batch is added whole or
not at all: a bad line, an unknown dependency or a cycle adds nothing.

A task's policy narrows the worker's policy and can never widen it. It
holds no secrets: they belong in the worker's policy file.

Flags:
  --id ID             the task's id (default: made up); letters, digits,
                      '-' and '_'
  --start-url URL     open this page before the first step
  --allow LIST        the task may only reach these hosts (comma-separated;
                      repeatable)
  --deny LIST         the task may never reach these hosts
  --policy FILE       a YAML policy file whose allow, ask, deny and actions
                      narrow the worker's policy for this task (--deny adds
                      to it; --allow cannot be combined with it)
  --after LIST        ids of tasks that must be done first (comma-separated;
                      repeatable)
  --run-after-failure run once the --after tasks have ended, however
  --max-steps N       the run's step budget (default: the worker's)
  --max-time D        the run's time budget, such as 5m (default: the worker's)
  --label K=V         a label, for people and programs reading the board
                      (repeatable)
  --output-schema FILE
                      a JSON Schema the task's structured result must
                      match; the model gets three tries, then the task
                      fails with the validator's reason
  --state NAME        start signed in: the saved state NAME on the board
                      (see 'surf board state'), filtered by the policy
  --attach FILE       store FILE on the board with the task; the worker
                      that runs it puts it in the run's uploads directory,
                      for upload_file (repeatable; at most 16, 100 MiB
                      each)
  --from FILE         add the tasks of a JSONL file ("-" for stdin)
  --json              print the added records as JSON
` + boardFlagsHelp + `

Examples:
  surf board add "Find the opening hours" --start-url https://example.com/ --id hours
  surf board add "Summarize the hours" --after hours --allow example.com
  surf board add "Plan a visit from {{hours.answer}}" --after hours
  surf board add "Find the price and the tags" --output-schema price.json
  surf board add --from tasks.jsonl`

// addFlags are the flags of one task given on board add's command line.
type addFlags struct {
	id, startURL, policyFile   string
	allow, deny, after, labels []string
	runAfterFailure            bool
	maxSteps                   int
	maxTime                    time.Duration
	schemaFile, savedState     string
	attach                     []string
}

// addTaskFlagNames are the flags of addFlags, which --from excludes.
var addTaskFlagNames = []string{"id", "start-url", "allow", "deny", "policy", "after", "run-after-failure", "max-steps", "max-time", "label", "output-schema", "state", "attach"}

func addAddFlags(fs *pflag.FlagSet) *addFlags {
	f := &addFlags{}
	fs.StringVar(&f.id, "id", "", "")
	fs.StringVar(&f.startURL, "start-url", "", "")
	fs.StringArrayVar(&f.allow, "allow", nil, "")
	fs.StringArrayVar(&f.deny, "deny", nil, "")
	fs.StringVar(&f.policyFile, "policy", "", "")
	fs.StringArrayVar(&f.after, "after", nil, "")
	fs.BoolVar(&f.runAfterFailure, "run-after-failure", false, "")
	fs.IntVar(&f.maxSteps, "max-steps", 0, "")
	fs.DurationVar(&f.maxTime, "max-time", 0, "")
	fs.StringArrayVar(&f.labels, "label", nil, "")
	fs.StringVar(&f.schemaFile, "output-schema", "", "")
	fs.StringVar(&f.savedState, "state", "", "")
	fs.StringArrayVar(&f.attach, "attach", nil, "")
	return f
}

// task is the task the flags describe, with instruction.
func (f *addFlags) task(c *command, instruction string) (board.Task, error) {
	t := board.Task{ID: f.id, Instruction: instruction, StartURL: f.startURL, RunAfterFailure: f.runAfterFailure,
		MaxSteps: f.maxSteps, MaxTime: board.Duration(f.maxTime), SavedState: f.savedState}
	if strings.TrimSpace(t.Instruction) == "" {
		return t, usagef(c, "the task is empty")
	}
	if f.maxSteps < 0 || f.maxTime < 0 {
		return t, usagef(c, "--max-steps and --max-time cannot be negative")
	}
	for _, list := range f.after {
		for _, d := range strings.Split(list, ",") {
			if d = strings.TrimSpace(d); d != "" {
				t.After = append(t.After, d)
			}
		}
	}
	var err error
	if t.Labels, err = board.ParseLabels(f.labels...); err != nil {
		return t, usagef(c, "--%v", err)
	}
	if t.Policy, err = taskPolicy(f.policyFile, f.allow, f.deny); err != nil {
		return t, err
	}
	if f.schemaFile != "" {
		s, err := readOutputSchema(f.schemaFile)
		if err != nil {
			return t, &exitError{code: 2, err: err}
		}
		t.OutputSchema = s.JSON()
	}
	return t, attachFiles(&t, f.attach)
}

func boardAdd(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	af := addAddFlags(fs)
	from := fs.String("from", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	var tasks []board.Task
	var lines []int // the line of each task of a --from file
	if fs.Changed("from") {
		for _, name := range addTaskFlagNames {
			if fs.Changed(name) {
				return usagef(c, "--%s is for one task given on the command line; with --from, each line of the file holds its task's fields", name)
			}
		}
		if fs.NArg() > 0 {
			return usagef(c, "give the task on the command line or --from a file, not both")
		}
		if *from == "" {
			return usagef(c, "--from needs a file (or \"-\" for stdin)")
		}
		var err error
		if tasks, lines, err = readTasks(cli, *from); err != nil {
			return err
		}
	} else {
		switch fs.NArg() {
		case 0:
			return usagef(c, "no task given")
		case 1:
		default:
			return &usageError{cmd: c, msg: fmt.Sprintf("add takes one task, got %d arguments", fs.NArg()),
				hint: `quote the task: surf board add "find the opening hours"`}
		}
		t, err := af.task(c, fs.Arg(0))
		if err != nil {
			return err
		}
		tasks = []board.Task{t}
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	recs, err := b.Add(ctx, tasks...)
	if err != nil {
		return addError(err, *from, lines)
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, recs)
	}
	for _, r := range recs {
		fmt.Fprintln(cli.Stdout, r.Task.ID)
	}
	return nil
}

// taskPolicy is the narrowing that --policy, --allow and --deny describe,
// or nil when none is given. A task's policy is applied on top of the
// worker's as one restriction, so its allow list and a file's cannot both
// be given (the two together would allow either); denials add up.
func taskPolicy(file string, allowFlags, denyFlags []string) (*board.Policy, error) {
	bad := func(err error) error {
		return &exitError{code: 2, err: withHint(err, "see 'surf help policy' for the policy file and pattern syntax")}
	}
	allow, err := splitPatterns("allow", allowFlags)
	if err != nil {
		return nil, bad(err)
	}
	deny, err := splitPatterns("deny", denyFlags)
	if err != nil {
		return nil, bad(err)
	}
	if file != "" && len(allow) > 0 {
		return nil, &exitError{code: 2, err: withHint(fmt.Errorf("--allow cannot be combined with --policy %s in a task", file),
			"put the hosts in the file's allow list (a task's policy can only narrow the worker's)")}
	}
	p, err := board.TaskPolicy(file, allow, deny)
	var pe *fs.PathError
	switch {
	case errors.Is(err, board.ErrPolicySecrets):
		return nil, &exitError{code: 2, err: withHint(err, taskSecretsHint)}
	case errors.As(err, &pe):
		return nil, &exitError{code: 2, err: err}
	case err != nil:
		return nil, bad(err)
	}
	return p, nil
}

// taskSecretsHint is the advice for a task's policy with secrets.
const taskSecretsHint = "give the secrets to the workers instead: 'surf work --policy FILE' with a secrets section"

// readTasks reads the JSONL batch of tasks of --from ("-" for stdin),
// returning each task's line. A bad line is an error naming it, exit 2.
func readTasks(cli *CLI, file string) ([]board.Task, []int, error) {
	r, name := cli.Stdin, "stdin"
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return nil, nil, withHint(fmt.Errorf("reading tasks: %w", err), "--from names a JSONL file: one task a line, as JSON")
		}
		defer f.Close()
		r, name = f, file
	}
	tasks, lines, err := board.ReadTasks(r, name)
	var le *board.LineError
	switch {
	case errors.Is(err, board.ErrPolicySecrets):
		return nil, nil, &exitError{code: 2, err: withHint(err, taskSecretsHint)}
	case errors.As(err, &le):
		return nil, nil, &exitError{code: 2, err: withHint(err,
			`each line is one task as JSON, such as {"id": "hours", "instruction": "find the opening hours", "after": ["home"]}; nothing was added`)}
	case err != nil:
		return nil, nil, err
	case len(tasks) == 0:
		return nil, nil, &exitError{code: 2, err: fmt.Errorf("%s holds no tasks", name)}
	}
	return tasks, lines, nil
}

// addError names the line of a batch's task that Add refused, and adds
// advice for errors a user can act on.
func addError(err error, file string, lines []int) error {
	var te *board.TaskError
	if errors.As(err, &te) && te.Index < len(lines) {
		name := file
		if file == "-" {
			name = "stdin"
		}
		err = fmt.Errorf("%s line %d: %w", name, lines[te.Index], err)
	}
	switch {
	case errors.Is(err, board.ErrCycle):
		return withHint(err, "a task cannot (even indirectly) run after itself; nothing was added")
	case errors.Is(err, board.ErrUnknownDependency):
		return withHint(err, "add the tasks it runs after first, or in the same batch (--from); nothing was added")
	case errors.Is(err, board.ErrExists):
		return withHint(err, "pick another --id, or leave it out to get a new one; nothing was added")
	case errors.Is(err, board.ErrNoState):
		return withHint(err, "'surf board state list' shows the saved states; 'surf board state put NAME FILE' stores one; nothing was added")
	}
	return err
}
