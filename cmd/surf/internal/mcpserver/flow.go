package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/surfkit/surf/tools"
)

// outputSchemaField is the argument of the websurfer tool (and of each
// board_add task) that asks for a structured answer. The registry's
// schemas cannot express an arbitrary JSON Schema, so it is taken out of
// the arguments before they are validated, parsed with
// tools.ParseOutputSchema, and added to the listed schema by hand.
const outputSchemaField = "output_schema"

// outputSchemaProp is the listed schema of the output_schema argument.
func outputSchemaProp() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Description: "A JSON Schema the answer's structured result must match, such as {\"type\": \"object\", \"properties\": {\"price\": {\"type\": \"number\"}}, \"required\": [\"price\"]}. " +
			"The surfer then answers with JSON data validated against it (three tries; then the run ends failed with the validator's message), returned beside the answer.",
	}
}

// withOutputSchemaArg adds output_schema to a tool's listed schema.
func withOutputSchemaArg(s *jsonschema.Schema) *jsonschema.Schema {
	props := make(map[string]*jsonschema.Schema, len(s.Properties)+1)
	for k, v := range s.Properties {
		props[k] = v
	}
	props[outputSchemaField] = outputSchemaProp()
	s.Properties = props
	s.PropertyOrder = append(s.PropertyOrder, outputSchemaField)
	return s
}

// schemaKey carries the websurfer call's output schema to its handler.
type schemaKey struct{}

// takeOutputSchema takes output_schema out of a call's arguments and
// parses it. Arguments that are not an object are returned as they are,
// for the registry to refuse.
func takeOutputSchema(args json.RawMessage) (*tools.OutputSchema, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil || m == nil {
		return nil, args, nil
	}
	raw, ok := m[outputSchemaField]
	if !ok {
		return nil, args, nil
	}
	delete(m, outputSchemaField)
	rest, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	if string(raw) == "null" {
		return nil, rest, nil
	}
	sch, err := tools.ParseOutputSchema(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %v", outputSchemaField, err)
	}
	return sch, rest, nil
}

func outputSchemaOf(ctx context.Context) *tools.OutputSchema {
	s, _ := ctx.Value(schemaKey{}).(*tools.OutputSchema)
	return s
}
