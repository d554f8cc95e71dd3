package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/surfkit/surf/internal/textcut"
)

// DefaultMaxArgBytes is the size cap on a call's raw arguments when
// Config.MaxArgBytes is zero: 2 MiB. The longest valid call is some
// 200 KB (a 20,000-character string and the reasoning, every character
// escaped), so the cap is well above any valid call, and an oversized
// field (say a 1 MB string for a 10,000-character field) is still parsed
// and named in the error, while parsing what the cap lets through costs
// little memory. Each string is further capped by its schema's maxLength
// (DefaultMaxLength when the schema gives none) before the handler runs.
const DefaultMaxArgBytes = 2 << 20

// maxNameBytes bounds the tool name a call may give.
const maxNameBytes = 256

// Config configures a Registry. The zero value is ready to use.
type Config struct {
	// Logger receives handler panics (with stacks, at Error level) and
	// refused calls (at Debug level). Nil means discard.
	Logger *slog.Logger
	// MaxArgBytes caps the size of a call's raw arguments; larger calls
	// are refused unread. Zero means DefaultMaxArgBytes.
	MaxArgBytes int
	// Unavailable, when set, says why a known tool is not offered now
	// ("already at the top of the page"); a call to it is then refused
	// with that reason instead of the list of available tools. An empty
	// answer keeps the list.
	Unavailable func(tool string) string
	// Observe, when set, is called as a validated call's handler starts,
	// with the call's context and the tool's registered name; the
	// context it returns is the handler's (a tracing span's, say), and
	// done is called with the handler's result and error once it
	// returns (a panic comes as an error). It sees no arguments.
	Observe func(ctx context.Context, tool string) (_ context.Context, done func(*Result, error))
}

// A Registry holds tools by name and runs calls to them. It is safe for
// concurrent use; Add is meant for start-up but may run at any time.
type Registry struct {
	log     *slog.Logger
	maxArgs int
	why     func(string) string
	observe func(context.Context, string) (context.Context, func(*Result, error))

	mu    sync.RWMutex
	tools map[string]*Tool
	order []string
}

// NewRegistry returns an empty registry configured by cfg.
func NewRegistry(cfg Config) (*Registry, error) {
	if cfg.MaxArgBytes < 0 {
		return nil, fmt.Errorf("tools: MaxArgBytes is negative (%d)", cfg.MaxArgBytes)
	}
	r := &Registry{
		log:     cfg.Logger,
		maxArgs: cfg.MaxArgBytes,
		why:     cfg.Unavailable,
		observe: cfg.Observe,
		tools:   map[string]*Tool{},
	}
	if r.log == nil {
		r.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if r.maxArgs == 0 {
		r.maxArgs = DefaultMaxArgBytes
	}
	return r, nil
}

// MaxArgBytes is the size cap on a call's raw arguments.
func (r *Registry) MaxArgBytes() int { return r.maxArgs }

// TooLarge is the refusal of a call to tool whose arguments are n bytes,
// over the limit: it names the limit and never quotes the arguments.
func TooLarge(tool string, n, limit int) string {
	return fmt.Sprintf("invalid arguments for %s: %d bytes, at most %d allowed per tool call; the call did not run (each text field has its own maxLength too)", strings.TrimSpace(textcut.Line(tool, 64)), n, limit)
}

// Add registers tools. Like http.ServeMux, it panics on a nil tool or a
// name that is already registered: both are programming errors.
func (r *Registry) Add(tools ...*Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		if t == nil || t.run == nil {
			panic("tools: Registry.Add of a nil or zero Tool (make tools with tools.New)")
		}
		if _, dup := r.tools[t.name]; dup {
			panic(fmt.Sprintf("tools: Registry.Add: tool %q already registered", t.name))
		}
		r.tools[t.name] = t
		r.order = append(r.order, t.name)
	}
}

// Lookup returns the tool registered under exactly name.
func (r *Registry) Lookup(name string) (*Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered tool names in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Resolve maps the name a model called to a registered tool name. Models
// and frameworks often decorate names, so after an exact match it tries,
// in order:
//
//  1. a registered name that the called name ends with, preceded by a
//     separator ('_', '.', '-', ':' or '/') and a non-empty prefix:
//     "WebSurfer_click", "functions.click", "websurfer.click" and
//     "WebSurfer-input_text" resolve to click and input_text. Tool names
//     contain underscores themselves, so the longest such name wins:
//     "agent_scroll_element_up" is scroll_element_up, not a tool "up".
//  2. the same two steps on the lowercased name ("Click", "WebSurfer_Click").
//
// Surrounding white space is ignored. Resolve never matches a prefix of a
// registered name or guesses between tools ("clik" resolves to nothing).
func (r *Registry) Resolve(called string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.resolve(called)
}

func (r *Registry) resolve(called string) (string, bool) {
	called = strings.TrimSpace(called)
	if called == "" || len(called) > maxNameBytes {
		return "", false
	}
	for _, n := range []string{called, strings.ToLower(called)} {
		if _, ok := r.tools[n]; ok {
			return n, true
		}
		if best := r.suffixMatch(n); best != "" {
			return best, true
		}
	}
	return "", false
}

func (r *Registry) suffixMatch(called string) string {
	best := ""
	for name := range r.tools {
		cut := len(called) - len(name) - 1 // index of the separator
		if cut < 1 || !strings.HasSuffix(called, name) || !strings.ContainsRune("_.-:/", rune(called[cut])) {
			continue
		}
		if len(name) > len(best) {
			best = name
		}
	}
	return best
}

// Call runs the tool the model called by name with raw JSON arguments.
// offered lists the tools offered to the model for the current step; a
// call to any other tool is refused, and with no offered names every call
// is refused (the gate fails closed). Pass r.Names()... to allow all.
//
// Call resolves the name (see [Registry.Resolve]), refuses unknown and
// unoffered tools, then validates the arguments against the tool's schema
// before the handler runs. Unknown fields, wrong types, missing required
// fields, out-of-range numbers and oversized strings or arrays are refused
// with an error result naming each problem and the tool's usage; the
// handler is not called. Arguments are read leniently where that is safe:
//
//   - empty arguments, or null, mean {};
//   - an object encoded as a JSON string ("{\"url\": ...}") is unwrapped;
//   - null for an optional field means the field is absent (its default
//     applies);
//   - integer and number fields accept a decimal string ("12"), boolean
//     fields accept "true" and "false": models often quote scalars, and the
//     meaning is unambiguous;
//   - an array field accepts a single value as a one-element array.
//
// Nothing else is coerced; duplicate keys and trailing data are refused.
//
// The handler's tool errors ([*Error]) come back as error results. A panic
// in the handler is recovered into an error result carrying the panic
// message (Result.Panic holds it; the stack goes to the Logger). Any other
// handler error is a runtime error: Call returns it, with a nil Result,
// and the run should end. A context already done is also a runtime error.
//
// Call is safe for concurrent use and does not panic on any input.
func (r *Registry) Call(ctx context.Context, name string, args json.RawMessage, offered ...string) (res *Result, err error) {
	defer func() {
		// Handler panics are recovered in invoke; this catches bugs in the
		// registry itself so that no input can crash the caller.
		if v := recover(); v != nil {
			r.log.Error("tools: internal panic in Call", "tool", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = &Result{Text: "internal error in the tool dispatcher; the call did not run", IsError: true}, nil
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("calling tool %s: %w", preview(name, 64), err)
	}

	r.mu.RLock()
	canon, ok := r.resolve(name)
	t := r.tools[canon]
	avail := r.available(offered)
	r.mu.RUnlock()

	if !ok {
		return r.refuse(&Result{}, "unknown tool %s; %s", preview(strings.TrimSpace(name), 64), listAvailable(avail)), nil
	}
	res = &Result{Tool: canon}
	if !slices.Contains(avail, canon) {
		if r.why != nil {
			if why := r.why(canon); why != "" {
				return r.refuse(res, "%s is not available now: %s", canon, why), nil
			}
		}
		return r.refuse(res, "tool '%s' is not available now; %s", canon, listAvailable(avail)), nil
	}
	if len(args) > r.maxArgs {
		return r.refuse(res, "%s. Usage: %s", TooLarge(canon, len(args), r.maxArgs), t.usage), nil
	}
	m, perr := parseArgs(args)
	if perr != nil {
		return r.refuse(res, "invalid arguments for %s: %v. Usage: %s", canon, perr, t.usage), nil
	}
	if s, ok := m[ReasoningField].(string); ok && len(s) <= 4*ReasoningMaxLength {
		res.Reasoning = s
	}
	var c checker
	norm := c.object("", t.schema, m)
	if err := c.err(); err != nil {
		return r.refuse(res, "invalid arguments for %s: %v. Usage: %s", canon, err, t.usage), nil
	}
	// Second opinion from jsonschema-go, the validator MCP uses: the
	// normalized arguments must satisfy the published schema.
	if err := t.resolved.Validate(norm); err != nil {
		r.log.Error("tools: normalized arguments fail schema validation", "tool", canon, "err", err)
		return r.refuse(res, "invalid arguments for %s: %s. Usage: %s", canon, textcut.Line(err.Error(), 200), t.usage), nil
	}
	reasoning, _ := norm[ReasoningField].(string)
	res.Reasoning = reasoning
	if !t.ownReasoning {
		delete(norm, ReasoningField)
	}
	argJSON, err := json.Marshal(norm)
	if err != nil {
		return r.refuse(res, "invalid arguments for %s: %v", canon, err), nil
	}

	ictx := context.WithValue(ctx, reasoningKey{}, reasoning)
	var done func(*Result, error)
	if r.observe != nil {
		ictx, done = r.observe(ictx, canon)
	}
	out, panicked, herr := r.invoke(ictx, t, argJSON)
	if done != nil {
		switch {
		case panicked != "":
			done(out, fmt.Errorf("tool %s panicked", canon))
		default:
			done(out, herr)
		}
	}
	res.Args = argJSON
	res.Ran = true
	var de *decodeError
	switch {
	case panicked != "":
		res.Panic = panicked
		res.IsError = true
		res.Text = fmt.Sprintf("tool '%s' crashed: %s. The action may have been partly done; look at the page before retrying.", canon, textcut.Line(panicked, 300))
		return res, nil
	case errors.As(herr, &de):
		r.log.Error("tools: validated arguments do not decode into the input type", "tool", canon, "err", herr)
		res.IsError = true
		res.Text = fmt.Sprintf("invalid arguments for %s: %v. Usage: %s", canon, herr, t.usage)
		return res, nil
	case herr != nil && IsToolError(herr):
		res.IsError = true
		res.Text = herr.Error()
		if out != nil {
			if out.Text != "" {
				res.Text += "\n" + out.Text
			}
			res.Images, res.Data = out.Images, out.Data
		}
		return res, nil
	case herr != nil:
		return nil, fmt.Errorf("running tool %s: %w", canon, herr)
	}
	if out != nil {
		res.Text, res.Images, res.IsError, res.Data = out.Text, out.Images, out.IsError, out.Data
	}
	return res, nil
}

// invoke runs the handler, recovering a panic into its printed value.
func (r *Registry) invoke(ctx context.Context, t *Tool, args []byte) (res *Result, panicked string, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicked = fmt.Sprint(v)
			if panicked == "" {
				panicked = fmt.Sprintf("panic(%T)", v)
			}
			r.log.Error("tools: handler panicked", "tool", t.name, "panic", panicked, "stack", string(debug.Stack()))
			res, err = nil, nil
		}
	}()
	res, err = t.run(ctx, args)
	return res, "", err
}

// available returns the offered names that are registered, in registration
// order. r.mu must be held.
func (r *Registry) available(offered []string) []string {
	var out []string
	for _, n := range r.order {
		if slices.Contains(offered, n) {
			out = append(out, n)
		}
	}
	return out
}

func listAvailable(avail []string) string {
	if len(avail) == 0 {
		return "no tools are available now"
	}
	return "available: " + strings.Join(avail, ", ")
}

func (r *Registry) refuse(res *Result, format string, args ...any) *Result {
	res.IsError = true
	res.Text = fmt.Sprintf(format, args...)
	r.log.Debug("tools: call refused", "tool", res.Tool, "reason", res.Text)
	return res
}
