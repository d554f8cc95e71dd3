package board

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/surfkit/surf/policy"
)

// ErrPolicySecrets refuses secrets in a task's policy: tasks are kept on
// the board for anyone who can read it, and secrets belong to the
// workers' own policies.
var ErrPolicySecrets = errors.New("a task's policy cannot hold secrets: tasks are stored on the board, readable by everyone who uses it")

// MaxTaskLine bounds one line of a JSONL batch of tasks (see ReadTasks).
const MaxTaskLine = 1 << 20

// A LineError is a bad line of a JSONL batch of tasks: Name is the
// batch's name (a file name, "stdin"), Line counts from 1.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s line %d: %v", e.Name, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// ReadTasks reads a batch of tasks as JSONL: one task a line, as the JSON
// of a Task, with no unknown fields; blank lines and lines starting with
// # are skipped. It returns the tasks and the line each came from, so
// that an error of Add about its task i can name line lines[i-1]. A bad
// line is a *LineError (a policy with secrets wraps ErrPolicySecrets), a
// line over MaxTaskLine too. A batch with no tasks is no error: Add
// refuses it. The tasks are not checked beyond having an instruction:
// Add checks them.
func ReadTasks(r io.Reader, name string) ([]Task, []int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxTaskLine)
	var (
		tasks []Task
		lines []int
		n     int
	)
	bad := func(err error) error { return &LineError{Name: name, Line: n, Err: err} }
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var t Task
		if err := dec.Decode(&t); err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			if strings.Contains(msg, `unknown field "secrets"`) {
				return nil, nil, bad(ErrPolicySecrets)
			}
			return nil, nil, bad(errors.New(msg))
		}
		if dec.More() {
			return nil, nil, bad(errors.New("more than one JSON value on the line"))
		}
		if strings.TrimSpace(t.Instruction) == "" {
			return nil, nil, bad(errors.New("the task has no instruction"))
		}
		tasks = append(tasks, t)
		lines = append(lines, n)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			n++
			return nil, nil, bad(errors.New("the line is longer than 1 MiB"))
		}
		return nil, nil, fmt.Errorf("reading tasks from %s: %w", name, err)
	}
	return tasks, lines, nil
}

// TaskPolicy is the narrowing of a task's policy: the allow, ask, deny
// and action rules of a policy file (none when file is ""), with allow
// and deny added; nil when that is no rule at all. A policy file with
// secrets is refused (ErrPolicySecrets, naming the line) before any is
// resolved; a file that cannot be read is an error wrapping the
// *fs.PathError; any other error is the policy's, as policy.Load gives
// it.
//
// A task's policy is applied on top of the worker's as one restriction:
// allow rules from a file and from allow together would allow either, so
// a caller narrowing with both should refuse that.
func TaskPolicy(file string, allow, deny []policy.HostRule) (*Policy, error) {
	if file == "" {
		if len(allow) == 0 && len(deny) == 0 {
			return nil, nil
		}
		return &Policy{Allow: allow, Deny: deny}, nil
	}
	if err := refuseSecrets(file); err != nil {
		return nil, err
	}
	// Getenv is nil: a task's policy has no secrets to resolve.
	cfg, err := policy.Load(file, policy.LoadOptions{})
	if err != nil {
		return nil, err
	}
	p := &Policy{Allow: append(cfg.Allow, allow...), Ask: cfg.Ask, Deny: append(cfg.Deny, deny...), Actions: cfg.Actions}
	if len(p.Allow) == 0 && len(p.Ask) == 0 && len(p.Deny) == 0 && len(p.Actions) == 0 {
		return nil, nil
	}
	return p, nil
}

// refuseSecrets refuses a policy file with a secrets section, before
// policy.Load would resolve them.
func refuseSecrets(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("reading policy: %w", err)
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
			return fmt.Errorf("%s:%d: %w", file, k.Line, ErrPolicySecrets)
		}
	}
	return nil
}
