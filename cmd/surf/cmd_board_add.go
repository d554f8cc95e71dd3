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

var boardAddUsage = helpText("board-add")

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
