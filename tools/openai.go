package tools

import (
	"encoding/json"

	"github.com/sashabaranov/go-openai"
)

// OpenAITools returns OpenAI function-calling definitions for the named
// tools, in the order given. Names that are not registered are skipped, so
// the result lists exactly the tools Call would run for the same offered
// set; with no names it is empty. Each definition's Parameters is the
// tool's full input schema (limits and defaults included).
func (r *Registry) OpenAITools(names ...string) []openai.Tool {
	return r.openAITools(false, names)
}

// OpenAIStrictTools is like OpenAITools but marks each function strict and
// rewrites its schema into the subset OpenAI's strict mode accepts: every
// property required, optional ones nullable (null means absent, so the
// default applies), and length limits and defaults moved into the
// descriptions. Call enforces the full schema either way.
func (r *Registry) OpenAIStrictTools(names ...string) []openai.Tool {
	return r.openAITools(true, names)
}

func (r *Registry) openAITools(strict bool, names []string) []openai.Tool {
	out := make([]openai.Tool, 0, len(names))
	for _, n := range names {
		t, ok := r.Lookup(n)
		if !ok {
			continue
		}
		params := t.schemaJSON
		if strict {
			params = t.strictJSON
		}
		out = append(out, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        t.name,
				Description: t.description,
				Strict:      strict,
				Parameters:  append(json.RawMessage(nil), params...),
			},
		})
	}
	return out
}
