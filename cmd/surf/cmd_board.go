package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
)

// boardSub is one "surf board" subcommand. Its command carries the
// subcommand's own usage text, for usage errors and --help.
type boardSub struct {
	cmd *command
	run func(ctx context.Context, cli *CLI, c *command, args []string) error
}

const boardUsage = `Usage: surf board add TASK [flags] | add --from FILE
       surf board list [--state S]... [--label K=V]...
       surf board show ID
       surf board wait ID... [--timeout D]
       surf board cancel ID [--reason TEXT]
       surf board watch [--once]
       surf board report ID [-o FILE.html]
       surf board export [--format jsonl|csv] [--label K=V]...
       surf board migrate [--from DIR] --to URL [--force]

The task board: web tasks that 'surf work' processes claim and run, with
dependencies between them, kept durably (by default in an embedded NATS
server over a data directory, shared by every surf process on the machine;
with --nats, on a NATS server or cluster).

  add      put a task on the board (or a batch from a JSONL file)
  list     a table of the tasks: id, state, worker, attempts, age, answer
  show     everything about one task
  wait     wait until tasks end; exit 0 if all are done
  cancel   cancel a task that has not ended (its dependents fail)
  watch    a live table of the running tasks and counts per state
  report   an HTML report of a finished task's run, from its journal
  export   the tasks' results as a table (JSONL or CSV), one row a task
  migrate  copy an embedded board (tasks, results, files, states) to a
           NATS server or cluster

Run 'surf board CMD --help' for the flags of one. Every command takes
--json, and the board flags:
` + boardFlagsHelp + `

Exit codes: 0 success; 1 the command failed (an unknown task, a task that
did not end done, a timeout); 2 bad usage or a bad task policy.

Examples:
  surf board add "Find the opening hours" --start-url https://example.com/ --id hours
  surf board add "Compare the two answers" --after hours,prices
  surf work --workers 2 --idle 30s &
  surf board wait hours --timeout 10m && surf board report hours -o hours.html`

func init() {
	c := &command{
		name:    "board",
		summary: "the task board: add, list, show, wait for, cancel, watch and report tasks",
		usage:   boardUsage,
	}
	subs := map[string]*boardSub{}
	sub := func(name, usage string, run func(ctx context.Context, cli *CLI, c *command, args []string) error) {
		subs[name] = &boardSub{cmd: &command{name: "board " + name, usage: usage}, run: run}
	}
	sub("add", boardAddUsage, boardAdd)
	sub("list", boardListUsage, boardList)
	sub("show", boardShowUsage, boardShow)
	sub("wait", boardWaitUsage, boardWait)
	sub("cancel", boardCancelUsage, boardCancel)
	sub("watch", boardWatchUsage, boardWatch)
	sub("report", boardReportUsage, boardReport)
	sub("export", boardExportUsage, boardExport)
	sub("migrate", boardMigrateUsage, boardMigrate)
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		if len(args) == 0 {
			return usagef(c, "no board command given")
		}
		name := args[0]
		if name == "-h" || name == "--help" || name == "help" {
			return &usageError{cmd: c, msg: helpRequested}
		}
		s, ok := subs[name]
		if !ok {
			names := make([]string, 0, len(subs))
			for n := range subs {
				names = append(names, n)
			}
			slices.Sort(names)
			hint := "the board commands are " + strings.Join(names, ", ") + " (run 'surf help board')"
			if strings.HasPrefix(name, "-") {
				return &usageError{cmd: c, msg: fmt.Sprintf("%s comes after the board command, as in 'surf board list %s'", name, name), hint: hint}
			}
			if sg := suggest(name, names); sg != "" {
				hint = fmt.Sprintf("did you mean 'surf board %s'? (%s)", sg, hint)
			}
			return &usageError{cmd: c, msg: fmt.Sprintf("unknown board command %q", name), hint: hint}
		}
		return s.run(ctx, cli, s.cmd, args[1:])
	}
	register(c)
}

// notFoundHint adds advice to an unknown task id.
func notFoundHint(err error) error {
	if errors.Is(err, board.ErrNotFound) {
		return withHint(err, "'surf board list' shows the tasks on this board (check --data or --nats)")
	}
	return err
}

func printBoardJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// ---- add ----

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
max_steps, max_time ("5m"), labels, output_schema (a JSON Schema) and
policy ({"allow": [{"host":
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
	schemaFile                 string
}

// addTaskFlagNames are the flags of addFlags, which --from excludes.
var addTaskFlagNames = []string{"id", "start-url", "allow", "deny", "policy", "after", "run-after-failure", "max-steps", "max-time", "label", "output-schema"}

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
	return f
}

// task is the task the flags describe, with instruction.
func (f *addFlags) task(c *command, instruction string) (board.Task, error) {
	t := board.Task{ID: f.id, Instruction: instruction, StartURL: f.startURL, RunAfterFailure: f.runAfterFailure,
		MaxSteps: f.maxSteps, MaxTime: board.Duration(f.maxTime)}
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
	if t.Labels, err = parseLabels(f.labels); err != nil {
		return t, usagef(c, "%v", err)
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
	return t, nil
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

// parseLabels reads K=V flags.
func parseLabels(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--label %q: write it as KEY=VALUE", f)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
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
	if file == "" {
		if len(allow) == 0 && len(deny) == 0 {
			return nil, nil
		}
		return &board.Policy{Allow: allow, Deny: deny}, nil
	}
	if len(allow) > 0 {
		return nil, &exitError{code: 2, err: withHint(fmt.Errorf("--allow cannot be combined with --policy %s in a task", file),
			"put the hosts in the file's allow list (a task's policy can only narrow the worker's)")}
	}
	if err := refuseSecrets(file); err != nil {
		return nil, err
	}
	// Getenv is nil: a task's policy has no secrets to resolve.
	cfg, err := policy.Load(file, policy.LoadOptions{})
	if err != nil {
		return nil, bad(err)
	}
	p := &board.Policy{Allow: cfg.Allow, Ask: cfg.Ask, Deny: append(cfg.Deny, deny...), Actions: cfg.Actions}
	if len(p.Allow) == 0 && len(p.Ask) == 0 && len(p.Deny) == 0 && len(p.Actions) == 0 {
		return nil, nil
	}
	return p, nil
}

// errTaskSecrets refuses secrets in a task's policy: tasks are kept on the
// board for anyone who can read it, and secrets belong to the worker.
const taskSecretsHint = "give the secrets to the workers instead: 'surf work --policy FILE' with a secrets section"

// refuseSecrets refuses a policy file with a secrets section, before
// policy.Load would resolve them.
func refuseSecrets(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("reading policy: %w", err)}
	}
	// a file that does not parse is left to policy.Load, which names the
	// line
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value == "secrets" {
			return &exitError{code: 2, err: withHint(
				fmt.Errorf("%s:%d: a task's policy cannot hold secrets: tasks are stored on the board, readable by everyone who uses it", file, k.Line),
				taskSecretsHint)}
		}
	}
	return nil
}

// readTasks reads a JSONL batch of tasks, returning each task's line. A bad
// line is a usage error naming it.
func readTasks(cli *CLI, file string) ([]board.Task, []int, error) {
	var r io.Reader
	name := file
	if file == "-" {
		r, name = cli.Stdin, "stdin"
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, nil, withHint(fmt.Errorf("reading tasks: %w", err), "--from names a JSONL file: one task a line, as JSON")
		}
		defer f.Close()
		r = f
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var (
		tasks []board.Task
		lines []int
		n     int
	)
	bad := func(format string, args ...any) error {
		return &exitError{code: 2, err: withHint(fmt.Errorf("%s line %d: %s", name, n, fmt.Sprintf(format, args...)),
			`each line is one task as JSON, such as {"id": "hours", "instruction": "find the opening hours", "after": ["home"]}; nothing was added`)}
	}
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t board.Task
		if err := dec.Decode(&t); err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			if strings.Contains(msg, `unknown field "secrets"`) {
				return nil, nil, &exitError{code: 2, err: withHint(
					fmt.Errorf("%s line %d: a task's policy cannot hold secrets: tasks are stored on the board, readable by everyone who uses it", name, n),
					taskSecretsHint)}
			}
			return nil, nil, bad("%s", msg)
		}
		if dec.More() {
			return nil, nil, bad("more than one JSON value on the line")
		}
		if strings.TrimSpace(t.Instruction) == "" {
			return nil, nil, bad("the task has no instruction")
		}
		tasks = append(tasks, t)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			n++
			return nil, nil, bad("the line is longer than 1 MiB")
		}
		return nil, nil, fmt.Errorf("reading tasks from %s: %w", name, err)
	}
	if len(tasks) == 0 {
		return nil, nil, &exitError{code: 2, err: fmt.Errorf("%s holds no tasks", name)}
	}
	return tasks, lines, nil
}

var batchTaskError = regexp.MustCompile(`^task (\d+) \(`)

// addError names the line of a batch's task that Add refused, and adds
// advice for errors a user can act on.
func addError(err error, file string, lines []int) error {
	msg := err.Error()
	if m := batchTaskError.FindStringSubmatch(msg); m != nil && lines != nil {
		if i, _ := strconv.Atoi(m[1]); i >= 1 && i <= len(lines) {
			name := file
			if file == "-" {
				name = "stdin"
			}
			err = fmt.Errorf("%s line %d: %w", name, lines[i-1], err)
		}
	}
	switch {
	case strings.Contains(msg, "form a cycle"):
		return withHint(err, "a task cannot (even indirectly) run after itself; nothing was added")
	case strings.Contains(msg, "not on the board"):
		return withHint(err, "add the tasks it runs after first, or in the same batch (--from); nothing was added")
	case strings.Contains(msg, "already on the board"):
		return withHint(err, "pick another --id, or leave it out to get a new one; nothing was added")
	}
	return err
}

// ---- list ----

const boardListUsage = `Usage: surf board list [--state S]... [--label K=V]... [--json]

Lists the tasks on the board, oldest first: id, state, worker, attempts,
age, and the answer (or why a task failed or was cancelled), cut to fit.

Flags:
  --state S           only tasks in state S (pending, ready, running, done,
                      failed, cancelled); repeatable, or comma-separated
  --label K=V         only tasks with this label (repeatable: all must match)
  --json              print the records as a JSON array
` + boardFlagsHelp + `

Example:
  surf board list --state failed,cancelled`

var allStates = []board.State{board.Pending, board.Ready, board.Running, board.Done, board.Failed, board.Cancelled}

func boardList(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	sel := addSelectionFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "list takes no arguments; to see one task, run 'surf board show %s'", fs.Arg(0))
	}
	recs, all, err := sel.records(ctx, cli, c, bf)
	if err != nil {
		return err
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, recs)
	}
	if len(recs) == 0 {
		if len(all) == 0 {
			fmt.Fprintln(cli.Stdout, "no tasks on the board")
		} else {
			fmt.Fprintf(cli.Stdout, "no tasks match (%d on the board)\n", len(all))
		}
		return nil
	}
	printTable(cli.Stdout, recs, time.Now(), termWidth(cli.Stdout))
	return nil
}

// selection is the --state and --label flags that list and export share.
type selection struct{ states, labels *[]string }

func addSelectionFlags(fs *pflag.FlagSet) selection {
	return selection{fs.StringArray("state", nil, ""), fs.StringArray("label", nil, "")}
}

// records reads the board's tasks and keeps those the flags select; all
// is every task on the board.
func (sel selection) records(ctx context.Context, cli *CLI, c *command, bf *boardFlags) (recs, all []board.Record, err error) {
	states, err := parseStates(c, *sel.states)
	if err != nil {
		return nil, nil, err
	}
	labels, err := parseLabels(*sel.labels)
	if err != nil {
		return nil, nil, usagef(c, "%v", err)
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	if all, err = b.List(ctx); err != nil {
		return nil, nil, err
	}
	return selectRecords(all, states, labels), all, nil
}

// parseStates reads --state flags (repeatable, comma-separated).
func parseStates(c *command, flags []string) (map[board.State]bool, error) {
	states := map[board.State]bool{}
	for _, list := range flags {
		for _, s := range strings.Split(list, ",") {
			st := board.State(strings.ToLower(strings.TrimSpace(s)))
			if !slices.Contains(allStates, st) {
				return nil, usagef(c, "--state %q: the states are pending, ready, running, done, failed and cancelled", s)
			}
			states[st] = true
		}
	}
	return states, nil
}

// selectRecords keeps the records in one of states (any, when empty)
// that have every label of labels.
func selectRecords(all []board.Record, states map[board.State]bool, labels map[string]string) []board.Record {
	recs := []board.Record{}
	for _, r := range all {
		if len(states) > 0 && !states[r.State] {
			continue
		}
		match := true
		for k, v := range labels {
			if got, ok := r.Task.Labels[k]; !ok || got != v {
				match = false
			}
		}
		if match {
			recs = append(recs, r)
		}
	}
	return recs
}

// termWidth is w's width when it is a terminal, else 120.
func termWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 120
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printTable prints records as list shows them, the last column cut so
// that lines fit width.
func printTable(w io.Writer, recs []board.Record, now time.Time, width int) {
	rows := [][]string{{"ID", "STATE", "WORKER", "ATTEMPTS", "AGE"}}
	for _, r := range recs {
		rows = append(rows, []string{r.Task.ID, string(r.State), orDash(r.Worker), strconv.Itoa(r.Attempts), age(now.Sub(r.Created))})
	}
	last := []string{"ANSWER"}
	for _, r := range recs {
		last = append(last, outcome(r))
	}
	writeTable(w, rows, last, width)
}

// writeTable prints rows in aligned columns, then each row's last cell
// (a free text: an answer, a progress) cut so that lines fit width.
func writeTable(w io.Writer, rows [][]string, last []string, width int) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	used := 0
	for _, wd := range widths {
		used += wd + 2
	}
	room := max(width-used-1, 20)
	for i, row := range rows {
		var sb strings.Builder
		for j, cell := range row {
			sb.WriteString(cell)
			sb.WriteString(strings.Repeat(" ", widths[j]-len([]rune(cell))+2))
		}
		sb.WriteString(textcut.Runes(textcut.OneLine(last[i], 4*room), room))
		fmt.Fprintln(w, strings.TrimRight(sb.String(), " "))
	}
}

// outcome is a record's answer, or why it failed or was cancelled.
func outcome(r board.Record) string {
	switch {
	case r.State == board.Failed || r.State == board.Cancelled:
		if r.Reason != "" {
			return r.Reason
		}
		return string(r.State)
	case r.Result != nil:
		return r.Result.Answer
	}
	return ""
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// age is d in one unit: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// ---- show ----

const boardShowUsage = `Usage: surf board show ID [--json]

Shows everything about one task: the task itself, its state, worker,
attempts and notes, its times, and when it has ended its result (answer,
how the run ended, steps, tokens, duration) and the files its run stored
on the board (journal, images, report; see 'surf board report').

Flags:
  --json              print the record as JSON
` + boardFlagsHelp + `

Example:
  surf board show hours`

func boardShow(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "show takes one task id, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, fs.Arg(0))
	if err != nil {
		return notFoundHint(err)
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, r)
	}
	showRecord(cli.Stdout, r, time.Now())
	return nil
}

func showRecord(out io.Writer, r board.Record, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s\t%s\n", k, termsafe.Lines(v))
		}
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), age(now.Sub(t)))
	}
	t := r.Task
	line("id", t.ID)
	line("instruction", textcut.OneLine(t.Instruction, 2000))
	line("start url", t.StartURL)
	if len(t.After) > 0 {
		after := strings.Join(t.After, ", ")
		if t.RunAfterFailure {
			after += " (runs even when they fail)"
		}
		line("after", after)
	}
	if t.Policy != nil {
		line("policy", describeTaskPolicy(t.Policy))
	}
	line("limits", taskLimits(t))
	line("labels", taskLabels(t.Labels))
	if len(t.OutputSchema) > 0 {
		line("output schema", textcut.Bytes(string(t.OutputSchema), 500))
	}
	line("state", string(r.State))
	line("reason", r.Reason)
	line("worker", r.Worker)
	line("attempts", strconv.Itoa(r.Attempts))
	if r.State == board.Running {
		line("progress", r.Progress)
	}
	line("created", when(r.Created))
	line("started", when(r.Started))
	line("finished", when(r.Finished))
	line("updated", when(r.Updated))
	for i, n := range r.Notes {
		k := ""
		if i == 0 {
			k = "notes"
		}
		fmt.Fprintf(w, "%s\t%s\n", k, n)
	}
	if res := r.Result; res != nil {
		line("answer", res.Answer)
		if len(res.Data) > 0 {
			line("data", string(res.Data))
		}
		line("end reason", res.EndReason)
		line("steps", strconv.Itoa(res.Steps))
		line("tokens", commas(int64(res.Tokens)))
		if res.Duration > 0 {
			line("duration", time.Duration(res.Duration).Round(time.Millisecond).String())
		}
		line("journal", res.Journal)
		for i, img := range res.Images {
			k := ""
			if i == 0 {
				k = "images"
			}
			fmt.Fprintf(w, "%s\t%s\n", k, img)
		}
		line("report", res.Report)
	}
	w.Flush()
}

// taskLimits is a task's own limits, as board show prints them.
func taskLimits(t board.Task) string {
	var limits []string
	if t.MaxSteps > 0 {
		limits = append(limits, fmt.Sprintf("%d steps", t.MaxSteps))
	}
	if t.MaxTime > 0 {
		limits = append(limits, time.Duration(t.MaxTime).String())
	}
	return strings.Join(limits, ", ")
}

// taskLabels is labels as k=v, sorted by key.
func taskLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + labels[k]
	}
	return strings.Join(keys, ", ")
}

func describeTaskPolicy(p *board.Policy) string {
	var parts []string
	rules := func(label string, rs []policy.HostRule) {
		if len(rs) == 0 {
			return
		}
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = r.String()
		}
		parts = append(parts, label+" "+strings.Join(s, ", "))
	}
	rules("allow", p.Allow)
	rules("ask", p.Ask)
	rules("deny", p.Deny)
	if n := len(p.Actions); n > 0 {
		parts = append(parts, fmt.Sprintf("%d action %s", n, pluralWord(n, "rule", "rules")))
	}
	return strings.Join(parts, "; ")
}

// ---- wait ----

const boardWaitUsage = `Usage: surf board wait ID... [--timeout D] [--json]

Waits until every task named has ended and prints each one's state and
answer (or why it failed). Tasks run only while a worker ('surf work') is
attached to the board.

Flags:
  --timeout D         give up after D (such as 10m); default: wait as long
                      as it takes
  --json              print the records as a JSON array
` + boardFlagsHelp + `

Exit codes: 0 every task is done; 1 a task failed or was cancelled, the
timeout passed, or a task is unknown; 2 bad usage.

Example:
  surf board wait hours prices --timeout 10m`

func boardWait(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	timeout := fs.Duration("timeout", 0, "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef(c, "no task id given")
	}
	if *timeout < 0 {
		return usagef(c, "--timeout cannot be negative")
	}
	ids := fs.Args()
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	wctx := ctx
	if *timeout > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	recs, err := b.Wait(wctx, ids...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return waitTimeout(ctx, b, ids, *timeout)
		}
		return notFoundHint(err)
	}
	if *asJSON {
		if err := printBoardJSON(cli.Stdout, recs); err != nil {
			return err
		}
	} else {
		for _, r := range recs {
			fmt.Fprintf(cli.Stdout, "%s\t%s\t%s\n", termsafe.String(r.Task.ID), r.State, termsafe.String(textcut.OneLine(outcome(r), 300)))
		}
	}
	var bad []string
	for _, r := range recs {
		if r.State != board.Done {
			bad = append(bad, fmt.Sprintf("%s (%s)", r.Task.ID, r.State))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d of %d %s did not end done: %s", len(bad), len(recs), pluralWord(len(recs), "task", "tasks"), strings.Join(bad, ", "))
	}
	return nil
}

// waitTimeout is the error of a wait that timed out: it names the tasks
// still open.
func waitTimeout(ctx context.Context, b *board.Board, ids []string, d time.Duration) error {
	var open []string
	anyRunning := false
	for _, id := range ids {
		r, err := b.Get(ctx, id)
		if err != nil {
			open = append(open, id)
			continue
		}
		if !r.State.Terminal() {
			open = append(open, fmt.Sprintf("%s (%s)", id, r.State))
			anyRunning = anyRunning || r.State == board.Running
		}
	}
	err := fmt.Errorf("timed out after %s; still open: %s", d, strings.Join(open, ", "))
	if anyRunning {
		return err
	}
	return withHint(err, "tasks run only while a worker is attached: start 'surf work' on this board")
}

// ---- cancel ----

const boardCancelUsage = `Usage: surf board cancel ID [--reason TEXT] [--json]

Cancels a task that has not ended: a pending or ready task never runs, a
running one is stopped by its worker. The tasks that run after it fail
(unless they run after failures).

Flags:
  --reason TEXT       why (default "cancelled by a user")
  --json              print the record as JSON
` + boardFlagsHelp + `

Example:
  surf board cancel hours --reason "not needed any more"`

func boardCancel(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	reason := fs.String("reason", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "cancel takes one task id, got %d arguments", fs.NArg())
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Cancel(ctx, fs.Arg(0), strings.TrimSpace(*reason))
	if err != nil {
		return notFoundHint(err)
	}
	if *asJSON {
		return printBoardJSON(cli.Stdout, r)
	}
	fmt.Fprintf(cli.Stdout, "cancelled %s\n", r.Task.ID)
	return nil
}

// ---- watch ----

const boardWatchUsage = `Usage: surf board watch [--once] [--json]

Shows what the workers are doing now: the number of tasks in each state,
and each running task with its worker, attempt, time running and last
progress. On a terminal the table is redrawn in place as the board
changes; otherwise each change is printed as one line. Ctrl-C stops.

Flags:
  --once              print the table once and exit
  --json              print one JSON event per line: {"record": ...,
                      "initial": true} for each task as it is, then one
                      per change (with --once, only the tasks as they are)
` + boardFlagsHelp + `

Example:
  surf board watch`

type watchEvent struct {
	Record  board.Record `json:"record"`
	Initial bool         `json:"initial,omitempty"`
}

func boardWatch(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	once := fs.Bool("once", false, "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "watch takes no arguments")
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	all, err := b.List(ctx)
	if err != nil {
		return err
	}
	w := &boardWatcher{cli: cli, recs: map[string]board.Record{}, json: *asJSON,
		tty: isTerminal(cli.Stdout) && !*asJSON, enc: json.NewEncoder(cli.Stdout)}
	for _, r := range all {
		w.recs[r.Task.ID] = r
	}
	if err := w.initial(all); err != nil || *once {
		return err
	}
	var tick <-chan time.Time
	if w.tty {
		// the running times move on even when the board does not
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	events, errc, stop := relayWatch(ctx, b)
	defer stop() // the watcher is done with the board before it closes
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			for _, r := range w.recs {
				if r.State == board.Running {
					w.draw()
					break
				}
			}
		case ev, ok := <-events:
			if !ok {
				select {
				case err := <-errc:
					return err
				default:
					return nil
				}
			}
			if err := w.apply(ev); err != nil {
				return err
			}
		}
	}
}

// relayWatch relays b's events on a channel, closed when the watch ends;
// its error, if any, is on errc first. stop ends the watch and waits for
// it to let go of the board.
func relayWatch(ctx context.Context, b *board.Board) (<-chan board.Event, <-chan error, func()) {
	events := make(chan board.Event)
	errc := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer close(events)
		for ev, err := range b.Watch(wctx) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case events <- ev:
			case <-wctx.Done():
				return
			}
		}
	}()
	return events, errc, func() {
		cancel()
		<-stopped
	}
}

// boardWatcher prints the board as surf board watch does: JSON events,
// a table redrawn on a terminal, or a line per change.
type boardWatcher struct {
	cli       *CLI
	recs      map[string]board.Record
	json, tty bool
	lines     int // lines of the table on screen, on a terminal
	enc       *json.Encoder
}

// initial prints the board as it is.
func (w *boardWatcher) initial(all []board.Record) error {
	if !w.json {
		w.draw()
		return nil
	}
	for _, r := range all {
		if err := w.enc.Encode(watchEvent{Record: r, Initial: true}); err != nil {
			return err
		}
	}
	return nil
}

func (w *boardWatcher) draw() {
	var buf bytes.Buffer
	printWatch(&buf, w.recs, time.Now(), termWidth(w.cli.Stdout))
	if w.tty && w.lines > 0 {
		fmt.Fprintf(w.cli.Stdout, "\033[%dA\033[J", w.lines)
	}
	w.lines = bytes.Count(buf.Bytes(), []byte("\n"))
	w.cli.Stdout.Write(buf.Bytes())
}

// apply takes in one event and prints it.
func (w *boardWatcher) apply(ev board.Event) error {
	r := ev.Record
	old, seen := w.recs[r.Task.ID]
	if seen && old.Revision >= r.Revision {
		return nil // the snapshot had it already
	}
	w.recs[r.Task.ID] = r
	switch {
	case w.json:
		return w.enc.Encode(watchEvent{Record: r, Initial: ev.Initial && !seen})
	case w.tty:
		w.draw()
	default:
		fmt.Fprintln(w.cli.Stdout, termsafe.String(changeLine(r, time.Now())))
	}
	return nil
}

// changeLine is one change as watch prints it off a terminal.
func changeLine(r board.Record, now time.Time) string {
	s := fmt.Sprintf("%s %s %s", now.Format("15:04:05"), r.Task.ID, r.State)
	if r.Worker != "" && !r.State.Terminal() && r.State != board.Ready {
		s += fmt.Sprintf(" %s attempt %d", r.Worker, r.Attempts)
	}
	if r.State == board.Running && r.Progress != "" {
		s += ": " + textcut.OneLine(r.Progress, 200)
	}
	if o := outcome(r); r.State.Terminal() && o != "" {
		s += ": " + textcut.OneLine(o, 200)
	}
	return s
}

// printWatch prints the counts per state and the running tasks.
func printWatch(w io.Writer, recs map[string]board.Record, now time.Time, width int) {
	counts := map[board.State]int{}
	var running []board.Record
	for _, r := range recs {
		counts[r.State]++
		if r.State == board.Running {
			running = append(running, r)
		}
	}
	parts := []string{fmt.Sprintf("%d %s", len(recs), pluralWord(len(recs), "task", "tasks"))}
	for _, s := range allStates {
		parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
	}
	fmt.Fprintln(w, strings.Join(parts, "  "))
	if len(running) == 0 {
		fmt.Fprintln(w, "nothing running")
		return
	}
	slices.SortFunc(running, func(a, b board.Record) int {
		return strings.Compare(a.Worker+"\x00"+a.Task.ID, b.Worker+"\x00"+b.Task.ID)
	})
	rows := [][]string{{"WORKER", "ID", "ATTEMPT", "FOR"}}
	for _, r := range running {
		since := "-"
		if !r.Started.IsZero() {
			since = age(now.Sub(r.Started))
		}
		rows = append(rows, []string{orDash(r.Worker), r.Task.ID, strconv.Itoa(r.Attempts), since})
	}
	last := []string{"PROGRESS"}
	for _, r := range running {
		last = append(last, orDash(r.Progress))
	}
	writeTable(w, rows, last, width)
}

// ---- report ----

const boardReportUsage = `Usage: surf board report ID [-o FILE.html] [--title TEXT] [--json]

Writes the report of a task's run (see 'surf help report'): its journal
and images, fetched from the board, as one self-contained HTML page. The
task must have run: the last attempt's journal is the one shown.

Flags:
  -o, --output FILE   where to write the page (default ID.html; "-" for
                      stdout)
      --title TEXT    the page's title (default: "surf run: " and the task)
      --json          print the summary as JSON
` + boardFlagsHelp + `

Example:
  surf board report hours -o hours.html`

func boardReport(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	out := fs.StringP("output", "o", "", "")
	title := fs.String("title", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef(c, "report takes one task id, got %d arguments", fs.NArg())
	}
	id := fs.Arg(0)
	if *out == "" {
		*out = id + ".html"
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	r, err := b.Get(ctx, id)
	if err != nil {
		return notFoundHint(err)
	}
	if r.Result == nil || r.Result.Journal == "" {
		why := fmt.Sprintf("it is %s", r.State)
		if r.State.Terminal() && r.Reason != "" {
			why += ": " + r.Reason
		}
		hint := "a task has a journal once a worker has run it; 'surf board show " + id + "' tells where it is"
		return withHint(fmt.Errorf("task %s has no journal on the board (%s)", id, why), hint)
	}
	dir, err := os.MkdirTemp("", "surf-board-report-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	jpath, err := fetchRun(ctx, b, r.Result, dir)
	if err != nil {
		return err
	}
	j, err := report.Read(jpath)
	if err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	opts := report.Options{Title: *title}
	var sum report.Summary
	if *out == "-" {
		sum, err = report.Write(cli.Stdout, j, opts)
	} else {
		sum, err = report.WriteFile(jpath, *out, opts)
	}
	if err != nil {
		return journalHint(err, jpath)
	}
	for _, n := range sum.Notes {
		fmt.Fprintf(cli.Stderr, "surf: note: %s\n", n)
	}
	if *out == "-" {
		return nil
	}
	if *asJSON {
		return json.NewEncoder(cli.Stdout).Encode(reportJSON{Output: *out, Summary: sum})
	}
	fmt.Fprintf(cli.Stdout, "wrote %s: %s\n", *out, describeReport(sum))
	return nil
}

// fetchRun copies a run's journal, and the images it refers to, from the
// board's file store into dir, laid out as the run wrote them: the images
// at the paths the journal names, relative to it. It returns the journal's
// path. An image the store does not hold is left out (the report shows it
// as missing).
func fetchRun(ctx context.Context, b *board.Board, res *board.Result, dir string) (string, error) {
	jpath := filepath.Join(dir, "journal.jsonl")
	if err := fetchFile(ctx, b, res.Journal, jpath); err != nil {
		return "", err
	}
	j, err := report.Read(jpath)
	if err != nil {
		return jpath, nil // report.Read is called again, and says what is wrong
	}
	stored := map[string]string{} // base name -> name in the store
	for _, name := range res.Images {
		stored[path.Base(name)] = name
	}
	done := map[string]bool{}
	for _, e := range j.Entries {
		if e.Image == "" || done[e.Image] {
			continue
		}
		done[e.Image] = true
		rel := filepath.FromSlash(e.Image)
		name, ok := stored[path.Base(filepath.ToSlash(e.Image))]
		if !ok || !filepath.IsLocal(rel) {
			continue
		}
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := fetchFile(ctx, b, name, dst); err != nil {
			return "", err
		}
	}
	return jpath, nil
}

func fetchFile(ctx context.Context, b *board.Board, name, dst string) (err error) {
	rc, err := b.File(ctx, name)
	if err != nil {
		return fmt.Errorf("fetching %s: %w", name, err)
	}
	defer rc.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := io.Copy(f, rc); err != nil {
		return fmt.Errorf("fetching %s: %w", name, err)
	}
	return nil
}

// ---- export ----

const boardExportUsage = `Usage: surf board export [--format jsonl|csv] [--label K=V]... [--state S]...

Writes the tasks' results as a table on stdout, one row a task, oldest
first: for a batch, select it by its label.

jsonl (the default) writes one JSON object a line: id, state, answer,
reason (why a task failed or was cancelled), data (its structured result)
and labels. csv writes the columns id, state, answer and reason, then one
column per top-level key of the structured results, named data.KEY (a
string as it is, any other value as JSON, empty when a task has no such
key); a structured result that is not an object goes whole, as JSON, in a
column named data.

Flags:
  --format F          jsonl or csv (default jsonl)
  --label K=V         only tasks with this label (repeatable: all must match)
  --state S           only tasks in state S (repeatable, or comma-separated)
` + boardFlagsHelp + `

Examples:
  surf board export --format csv --label batch=prices
  surf board export --state done`

func boardExport(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	format := fs.String("format", "jsonl", "")
	sel := addSelectionFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef(c, "export takes no arguments; select tasks with --label or --state")
	}
	if *format != "jsonl" && *format != "csv" {
		return usagef(c, "--format %q: jsonl or csv", *format)
	}
	recs, _, err := sel.records(ctx, cli, c, bf)
	if err != nil {
		return err
	}
	if *format == "csv" {
		return board.ExportCSV(cli.Stdout, recs)
	}
	return board.ExportJSONL(cli.Stdout, recs)
}
