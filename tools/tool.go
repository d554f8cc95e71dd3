// Package tools defines the actions a model can take in surf and runs them
// safely.
//
// Each tool is a typed input struct plus a
// handler, its JSON schema is derived from the struct, and a [Registry]
// resolves the name the model called, refuses tools that were not offered,
// validates the arguments before the handler runs, recovers handler panics,
// and exports the definitions to OpenAI function calling and to MCP. The
// package also holds surf's catalog of tool specs ([VisitURL], [Click],
// [InputText], ...), so the websurfer package only binds handlers; it does
// not depend on the browser.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"
)

// Handler runs a tool with validated input. It returns a tool error (an
// error wrapping [*Error], made with [Errorf] or [NewError]) for failures the
// model should see and can correct; any other non-nil error is a runtime
// error that ends the run.
type Handler[In any] func(ctx context.Context, in In) (*Result, error)

// A Tool is a named, described action with a typed input. Make one with
// [New] or [Spec.Bind]; a Tool is immutable and safe for concurrent use.
type Tool struct {
	name         string
	description  string
	input        reflect.Type
	schema       *jsonschema.Schema // canonical: limits, defaults, reasoning
	resolved     *jsonschema.Resolved
	schemaJSON   []byte
	strictJSON   []byte
	usage        string
	ownReasoning bool // the input struct declares the reasoning field itself
	run          func(ctx context.Context, args []byte) (*Result, error)
}

var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// New makes a tool from a handler whose input type In is a struct. The
// input schema is inferred from In's fields:
//
//   - `json` tags give the argument names; a field tagged omitempty or
//     omitzero is optional, every other field is required.
//   - `jsonschema` tags give each argument's description (the model reads it).
//   - `schema` tags add constraints: minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum, minLength, maxLength, minItems, maxItems,
//     enum=a|b|c, default=<JSON value> and items.<key>=... for array
//     elements, comma-separated, e.g. `schema:"minimum=1,maximum=1000000"`.
//
// A string without maxLength is capped at [DefaultMaxLength] code points and
// an array without maxItems at [DefaultMaxItems]; integers are always
// within ±2^53. Every tool also accepts the optional [ReasoningField].
//
// Names are lowercase snake case of at most 64 characters. New panics if
// the name or description is invalid, the handler is nil, or In cannot
// produce a schema the registry can enforce (a map, an interface, a
// malformed tag): such mistakes surface at start-up, never at call time.
func New[In any](name, description string, handler Handler[In]) *Tool {
	if !toolName.MatchString(name) {
		panic(fmt.Sprintf("tools.New: invalid tool name %q (want lowercase snake case, at most 64 characters)", name))
	}
	if description == "" {
		panic(fmt.Sprintf("tools.New(%q): empty description", name))
	}
	if handler == nil {
		panic(fmt.Sprintf("tools.New(%q): nil handler", name))
	}
	in := reflect.TypeFor[In]()
	s, own, err := inferSchema(in)
	if err != nil {
		panic(fmt.Sprintf("tools.New(%q): input %v: %v", name, in, err))
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tools.New(%q): %v", name, err))
	}
	schemaJSON, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools.New(%q): %v", name, err))
	}
	strictJSON, err := json.Marshal(strictSchema(s, false))
	if err != nil {
		panic(fmt.Sprintf("tools.New(%q): %v", name, err))
	}
	t := &Tool{
		name:         name,
		description:  description,
		input:        in,
		schema:       s,
		resolved:     resolved,
		schemaJSON:   schemaJSON,
		strictJSON:   strictJSON,
		usage:        usage(name, s),
		ownReasoning: own,
	}
	t.run = func(ctx context.Context, args []byte) (*Result, error) {
		var v In
		if err := unmarshalStrict(args, &v); err != nil {
			return nil, &decodeError{err}
		}
		return handler(ctx, v)
	}
	return t
}

// decodeError marks arguments that passed validation but did not decode
// into the input struct: a bug in this package or in the input type.
type decodeError struct{ err error }

func (e *decodeError) Error() string { return "decoding arguments: " + e.err.Error() }

// Name returns the tool's name as the model calls it.
func (t *Tool) Name() string { return t.name }

// Description returns the text the model reads about the tool.
func (t *Tool) Description() string { return t.description }

// InputType returns the handler's input struct type.
func (t *Tool) InputType() reflect.Type { return t.input }

// Usage returns a one-line signature such as
// "click(target_id: integer, reasoning?: string)".
func (t *Tool) Usage() string { return t.usage }

// Schema returns a copy of the tool's input JSON schema: the schema the
// registry validates against and the one exported to MCP and (non-strict)
// OpenAI.
func (t *Tool) Schema() *jsonschema.Schema { return t.schema.CloneSchemas() }

// SchemaJSON returns the input schema as JSON.
func (t *Tool) SchemaJSON() json.RawMessage { return append(json.RawMessage(nil), t.schemaJSON...) }

// Spec is a catalog entry: a tool's name and description with its input
// type, waiting for a handler. websurfer binds one handler per spec.
type Spec[In any] struct {
	Name        string
	Description string
}

// Bind makes the tool from the spec and a handler. It panics like [New].
func (s Spec[In]) Bind(h Handler[In]) *Tool { return New(s.Name, s.Description, h) }

// InputType returns the spec's input struct type.
func (s Spec[In]) InputType() reflect.Type { return reflect.TypeFor[In]() }

// Image is an image returned to the model, for example a screenshot.
type Image struct {
	MIME string // e.g. "image/png"
	Data []byte // raw bytes, not base64
}

// Result is what a tool call returns to the model.
//
// Handlers fill in Text, Images and, rarely, IsError. Registry.Call fills in
// the rest for the journal; a handler leaves those zero.
type Result struct {
	Text    string
	Images  []Image
	IsError bool // the call failed; Text says why
	// Data is the result as structured data, for callers that read it
	// (an MCP client gets it as structuredContent, beside the text); nil
	// means none. It must marshal to JSON matching the tool's output
	// schema, if it declares one. The model reads Text, never Data.
	Data any

	// Tool is the registered name the call resolved to ("" when the
	// called name matched no tool).
	Tool string
	// Reasoning is the call's reasoning argument, if given.
	Reasoning string
	// Args are the arguments the handler received, as normalized JSON:
	// defaults filled in, lenient spellings converted, reasoning removed.
	// Nil when the call was refused before the handler ran.
	Args json.RawMessage
	// Ran reports whether the handler was invoked.
	Ran bool
	// Panic holds the recovered panic value, printed, when the handler
	// panicked; the model sees only a short error.
	Panic string
}

// Text returns a result holding s.
func Text(s string) *Result { return &Result{Text: s} }

// Textf returns a result holding the formatted text.
func Textf(format string, args ...any) *Result { return &Result{Text: fmt.Sprintf(format, args...)} }

// WithImage appends an image to r and returns r.
func (r *Result) WithImage(mime string, data []byte) *Result {
	r.Images = append(r.Images, Image{MIME: mime, Data: data})
	return r
}

// Error is a tool error: a failure reported back to the model as an error
// result ("no element 99 on this page", "element 12 is covered by a cookie
// banner", "denied: host not in allowlist") rather than ending the run.
// Handlers return it through [Errorf] or [NewError]; Registry.Call finds it
// with errors.As anywhere in the returned error's chain.
type Error struct {
	Err error
}

func (e *Error) Error() string {
	if e == nil || e.Err == nil {
		return "tool error"
	}
	return e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a tool error with the formatted message; %w wraps as in
// fmt.Errorf, so callers can still match sentinels such as policy.ErrDenied.
func Errorf(format string, args ...any) error {
	return &Error{Err: fmt.Errorf(format, args...)}
}

// NewError marks err as a tool error. It returns nil for a nil err.
func NewError(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Err: err}
}

// IsToolError reports whether err is or wraps a tool error.
func IsToolError(err error) bool {
	var te *Error
	return errors.As(err, &te)
}

type reasoningKey struct{}

// Reasoning returns the reasoning argument of the call a handler is
// running, or "" if the model gave none.
func Reasoning(ctx context.Context) string {
	s, _ := ctx.Value(reasoningKey{}).(string)
	return s
}

func unmarshalStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
