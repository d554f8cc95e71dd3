package websurfer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/surfkit/surf/internal/textcut"
)

// Progress. A caller that shows what surf is doing while it does it (an
// MCP client's progress bar, a terminal's status line) puts a reporter in
// the context with WithProgress; actions and runs under that context tell
// it what they are doing as they start each part: loading a page, waiting
// for it to settle, reading it, asking the model, acting. The messages are
// short lines for people, not for parsing.

type progressKey struct{}

// WithProgress returns a copy of ctx whose actions and runs report their
// progress to report. report is called on the caller's goroutine, between
// the parts of the work: it should return quickly. A report already in
// ctx is replaced.
func WithProgress(ctx context.Context, report func(msg string)) context.Context {
	return context.WithValue(ctx, progressKey{}, report)
}

// progress reports a message to ctx's reporter, if it has one.
func progress(ctx context.Context, format string, args ...any) {
	if report, _ := ctx.Value(progressKey{}).(func(string)); report != nil {
		report(fmt.Sprintf(format, args...))
	}
}

// stepProgress is ctx with its reporter's messages prefixed by "step N: ",
// for the actions of a run's step.
func stepProgress(ctx context.Context, n int) context.Context {
	report, _ := ctx.Value(progressKey{}).(func(string))
	if report == nil {
		return ctx
	}
	return WithProgress(ctx, func(msg string) { report(fmt.Sprintf("step %d: %s", n, msg)) })
}

// describeCall is a tool call in a few words for a progress message: the
// tool and what it acts on ("click 7", "visit_url https://example.org/"),
// never the text typed (it may hold a secret's placeholder).
func describeCall(tool string, args json.RawMessage) string {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	for _, k := range []string{"target_id", "input_field_id", "url", "query", "index", "keys", "option", "seconds"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		s := fmt.Sprint(v)
		if b, err := json.Marshal(v); err == nil && k == "keys" {
			s = string(b)
		}
		return tool + " " + textcut.Bytes(strings.TrimSpace(s), 100)
	}
	return tool
}
