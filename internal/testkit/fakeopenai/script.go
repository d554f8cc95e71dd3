package fakeopenai

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// Script is what the fake model does: a sequence of turns, each answering
// one request (or, for a repeat turn, several). Scripts are YAML files (JSON
// is accepted too, being YAML) loaded with Load or Parse, or built in Go.
//
// Turns are consumed in order. A turn with Match is chosen only for requests
// that satisfy it; a repeat turn answers every matching request until one
// arrives that it does not match (once it has answered Min requests) or it
// has answered Max. So map-reduce traffic is scripted as a repeat turn for
// the chunk requests, which may arrive concurrently and in any order,
// followed by a turn for the reduce request.
//
// Example:
//
//	turns:
//	  - name: open the page
//	    expect:
//	      model: gpt-4o
//	      image: true
//	      user_contains: "<page>"
//	      tools_include: [visit_url, click]
//	      max_tokens: 8000
//	    reply:
//	      tool_calls:
//	        - name: click
//	          arguments: '{"target_id": 12, "reasoning": "open pricing"}'
//	  - name: denied
//	    expect:
//	      tool_contains: denied
//	    reply:
//	      status: 429
//	      headers: {Retry-After: "1"}
//	  - name: retried
//	    reply:
//	      content: "The price is 12 EUR."
//	      usage: {prompt_tokens: 1200, completion_tokens: 9}
//	  - name: chunks
//	    match: {system_contains: "summarize chunk"}
//	    repeat: true
//	    min: 2
//	    expect: {max_tokens: 3000}
//	    reply: {content: "chunk summary"}
//	  - name: reduce
//	    match: {system_contains: "combine"}
//	    reply: {content: "summary"}
type Script struct {
	// AllowUnused lets Check pass when some turns were never requested.
	AllowUnused bool   `yaml:"allow_unused,omitempty"`
	Turns       []Turn `yaml:"turns"`
}

// Turn is one scripted step.
type Turn struct {
	Name string `yaml:"name,omitempty"` // shown in failures

	// Match, if set, restricts the turn to requests satisfying it.
	Match *Match `yaml:"match,omitempty"`

	// Repeat lets the turn answer several requests: at least Min (zero
	// means 1), at most Max (zero means no limit).
	Repeat bool `yaml:"repeat,omitempty"`
	Min    int  `yaml:"min,omitempty"`
	Max    int  `yaml:"max,omitempty"`

	// Expect is checked on every request the turn answers.
	Expect Expect `yaml:"expect,omitempty"`

	// Reply is what the turn answers. The zero Reply is an assistant
	// message with no content and no tool call.
	Reply Reply `yaml:"reply,omitempty"`
}

// Match selects requests for a turn. All set fields must hold.
type Match struct {
	SystemContains string `yaml:"system_contains,omitempty"` // text of a system message
	UserContains   string `yaml:"user_contains,omitempty"`   // text of the last user message
	Model          string `yaml:"model,omitempty"`
	Tool           string `yaml:"tool,omitempty"` // a tool offered by name
}

// Expect holds assertions on a request. A failed assertion is recorded
// (see Server.Check) and answered with HTTP 400 naming it.
type Expect struct {
	Model string `yaml:"model,omitempty"`
	// Image: true requires a data-URL image on the last user message,
	// false forbids one.
	Image          *bool   `yaml:"image,omitempty"`
	UserContains   Strings `yaml:"user_contains,omitempty"`   // last user message
	UserExcludes   Strings `yaml:"user_excludes,omitempty"`   // last user message
	ToolContains   Strings `yaml:"tool_contains,omitempty"`   // last tool message
	SystemContains Strings `yaml:"system_contains,omitempty"` // system messages
	ToolsInclude   Strings `yaml:"tools_include,omitempty"`   // offered tool names
	ToolsExclude   Strings `yaml:"tools_exclude,omitempty"`
	// MaxTokens bounds the request's estimated prompt tokens (messages,
	// images and tools, counted by internal/tokens).
	MaxTokens int `yaml:"max_tokens,omitempty"`
	// Messages, if set, is the exact number of messages.
	Messages int `yaml:"messages,omitempty"`
	// Header values the request must carry exactly.
	Header map[string]string `yaml:"header,omitempty"`
}

// Reply is a scripted answer.
type Reply struct {
	Content   string     `yaml:"content,omitempty"`
	ToolCalls []ToolCall `yaml:"tool_calls,omitempty"`
	// FinishReason defaults to "tool_calls" with tool calls, else "stop".
	FinishReason string `yaml:"finish_reason,omitempty"`
	// Usage defaults to estimated token counts.
	Usage *Usage `yaml:"usage,omitempty"`

	// Status, if set, is the HTTP status; a status of 400 or more without
	// Body sends an OpenAI-style error object.
	Status  int               `yaml:"status,omitempty"`
	Headers map[string]string `yaml:"headers,omitempty"`
	// Body, if set, is sent verbatim instead of a generated response.
	Body string `yaml:"body,omitempty"`
	// Delay is waited before answering (cut short if the client goes).
	Delay time.Duration `yaml:"delay,omitempty"`
	// Disconnect closes the connection without answering.
	Disconnect bool `yaml:"disconnect,omitempty"`
}

// ToolCall is a scripted tool call. Arguments is sent as is, so malformed
// JSON can be scripted. ID defaults to "call_R_I" (request R, call I).
type ToolCall struct {
	ID        string `yaml:"id,omitempty"`
	Name      string `yaml:"name"`
	Arguments string `yaml:"arguments,omitempty"`
}

// Usage is scripted token usage.
type Usage struct {
	PromptTokens     int `yaml:"prompt_tokens"`
	CompletionTokens int `yaml:"completion_tokens"`
}

// Strings is a list of strings that may be written in YAML as a single
// string.
type Strings []string

// UnmarshalYAML accepts a scalar or a sequence.
func (s *Strings) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*s = Strings{n.Value}
		return nil
	}
	var list []string
	if err := n.Decode(&list); err != nil {
		return err
	}
	*s = list
	return nil
}

// Load reads a script file.
func Load(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading script: %w", err)
	}
	s, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("loading script %s: %w", path, err)
	}
	return s, nil
}

// Parse parses a YAML (or JSON) script. Unknown fields are errors, so a
// misspelt expectation cannot pass silently.
func Parse(data []byte) (*Script, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// Validate checks a script built in Go.
func (s *Script) Validate() error {
	if len(s.Turns) == 0 {
		return errors.New("script has no turns")
	}
	for i, t := range s.Turns {
		if t.Min < 0 || t.Max < 0 || (t.Max > 0 && t.Min > t.Max) {
			return fmt.Errorf("turn %d: bad min %d / max %d", i+1, t.Min, t.Max)
		}
		if !t.Repeat && (t.Min != 0 || t.Max != 0) {
			return fmt.Errorf("turn %d: min and max need repeat: true", i+1)
		}
		for j, c := range t.Reply.ToolCalls {
			if c.Name == "" {
				return fmt.Errorf("turn %d: tool call %d has no name", i+1, j+1)
			}
		}
		if t.Reply.Status != 0 && (t.Reply.Status < 100 || t.Reply.Status > 599) {
			return fmt.Errorf("turn %d: bad status %d", i+1, t.Reply.Status)
		}
		if t.Reply.Delay < 0 {
			return fmt.Errorf("turn %d: negative delay", i+1)
		}
	}
	return nil
}

func (t *Turn) label(i int) string {
	if t.Name != "" {
		return fmt.Sprintf("turn %d %q", i+1, t.Name)
	}
	return fmt.Sprintf("turn %d", i+1)
}

func (t *Turn) min() int {
	if t.Min == 0 {
		return 1
	}
	return t.Min
}

// CallTool returns a turn that calls one tool.
func CallTool(name, arguments string) Turn {
	return Turn{Reply: Reply{ToolCalls: []ToolCall{{Name: name, Arguments: arguments}}}}
}

// Say returns a turn that answers with text.
func Say(content string) Turn {
	return Turn{Reply: Reply{Content: content}}
}

// Fail returns a turn that answers with an HTTP status and headers.
func Fail(status int, headers map[string]string) Turn {
	return Turn{Reply: Reply{Status: status, Headers: headers}}
}

// NewScript returns a script of the given turns.
func NewScript(turns ...Turn) *Script {
	return &Script{Turns: turns}
}
