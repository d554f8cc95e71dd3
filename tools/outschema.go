package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sashabaranov/go-openai"
)

// AnswerDataField is the argument of stop_action that carries the
// structured answer when a run has an output schema.
const AnswerDataField = "data"

// MaxOutputSchemaBytes bounds the size of an output schema.
const MaxOutputSchemaBytes = 64 << 10

// MaxAnswerDataBytes bounds the size of a structured answer.
const MaxAnswerDataBytes = 256 << 10

// ReadOutputSchema reads the output schema in the file at path and parses
// it (ParseOutputSchema). It reads at most MaxOutputSchemaBytes and one
// more byte, so a bigger file is refused without being read whole. An
// error reading the file is an *fs.PathError; any other is the parse's.
func ReadOutputSchema(path string) (*OutputSchema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxOutputSchemaBytes+1))
	if err != nil {
		return nil, err
	}
	return ParseOutputSchema(b)
}

// OutputSchema is a JSON Schema (draft 2020-12) the structured answer of a
// run must match. It is validated with github.com/google/jsonschema-go:
// the keywords of the core and validation vocabularies are enforced;
// "format" is an annotation only; references to other documents ("$ref"
// to a URL) are refused when the schema is parsed.
type OutputSchema struct {
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

var jsonTypes = map[string]bool{"null": true, "boolean": true, "object": true, "array": true, "number": true, "string": true, "integer": true}

// ParseOutputSchema parses and resolves a JSON Schema for a structured
// answer. It refuses what is not a schema object, unknown type names and
// references to other documents, with an error that says why.
func ParseOutputSchema(b []byte) (*OutputSchema, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("output schema: empty")
	}
	if len(b) > MaxOutputSchemaBytes {
		return nil, fmt.Errorf("output schema: %d bytes, more than the %d allowed", len(b), MaxOutputSchemaBytes)
	}
	if b[0] != '{' {
		return nil, errors.New("output schema: not a JSON object")
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	var tree any
	if err := json.Unmarshal(b, &tree); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if err := checkTypeNames(tree); err != nil {
		return nil, err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return &OutputSchema{raw: compact.Bytes(), resolved: rs}, nil
}

// checkTypeNames refuses a "type" that names no JSON type: the validator
// accepts such a schema and then fails every answer.
func checkTypeNames(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			switch k {
			case "enum", "const", "default", "examples":
				continue // values, not schemas
			case "type":
				names, ok := sub.([]any)
				if !ok {
					names = []any{sub}
				}
				for _, n := range names {
					if s, ok := n.(string); ok && !jsonTypes[s] {
						return fmt.Errorf("output schema: unknown type %q", s)
					}
				}
			}
			if err := checkTypeNames(sub); err != nil {
				return err
			}
		}
	case []any:
		for _, sub := range v {
			if err := checkTypeNames(sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// JSON returns the schema as given (compacted).
func (o *OutputSchema) JSON() json.RawMessage { return append(json.RawMessage(nil), o.raw...) }

// Validate checks a structured answer against the schema. The error is
// the validator's message, meant to be shown to the model.
func (o *OutputSchema) Validate(data json.RawMessage) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errors.New("no data")
	}
	if len(data) > MaxAnswerDataBytes {
		return fmt.Errorf("the data is %d bytes, more than the %d allowed", len(data), MaxAnswerDataBytes)
	}
	// decodeJSON refuses duplicate keys and deep nesting; the validator
	// then gets float64 numbers, not json.Number.
	if _, err := decodeJSON(data); err != nil {
		return fmt.Errorf("the data is not valid JSON: %v", err)
	}
	var plain any
	if err := json.Unmarshal(data, &plain); err != nil {
		return fmt.Errorf("the data is not valid JSON: %v", err)
	}
	return o.resolved.Validate(plain)
}

// StopActionTool returns the stop_action definition t with a required
// data argument whose schema is o; the other definitions are returned
// unchanged.
func (o *OutputSchema) StopActionTool(t openai.Tool) openai.Tool {
	if t.Function == nil || t.Function.Name != StopAction.Name {
		return t
	}
	var params map[string]any
	raw, _ := t.Function.Parameters.(json.RawMessage)
	if json.Unmarshal(raw, &params) != nil {
		return t
	}
	props, _ := params["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[AnswerDataField] = json.RawMessage(o.raw)
	params["properties"] = props
	req, _ := params["required"].([]any)
	params["required"] = append(req, AnswerDataField)
	b, err := json.Marshal(params)
	if err != nil {
		return t
	}
	f := *t.Function
	f.Description += " This task asks for a structured result: give it in data, matching its schema; answer keeps the result in words."
	f.Parameters = json.RawMessage(b)
	t.Function = &f
	return t
}
