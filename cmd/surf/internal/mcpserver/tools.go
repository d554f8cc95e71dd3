package mcpserver

import (
	"context"
	"errors"
	"slices"

	"github.com/surfkit/surf/tools"
)

// WebsurferTool is the name of the tool that runs the agent loop.
const WebsurferTool = "websurfer"

// WebsurferArgs is the input of the websurfer tool.
type WebsurferArgs struct {
	Instruction string `json:"instruction" jsonschema:"The task for the web surfer, in plain words: what to find or do, and what to answer. It browses on its own, step by step, and answers when done." schema:"minLength=1,maxLength=20000"`
	StartURL    string `json:"start_url,omitempty" jsonschema:"A page to open before the first step (it must be allowed by the browsing policy). Without it the surfer starts from the page this session is on." schema:"maxLength=8192"`
	MaxSteps    int    `json:"max_steps,omitempty" jsonschema:"The most steps (model calls) the surfer may take; default 25." schema:"minimum=1,maximum=100"`
}

// websurferSpec describes the websurfer tool.
var websurferSpec = tools.Spec[WebsurferArgs]{
	Name: WebsurferTool,
	Description: "Delegate a whole browsing task to surf's own web-surfing agent: it observes the page, picks actions, passes them through the browsing policy and acts, until it can answer. " +
		"Returns the answer and one line per step (tool, target, policy verdict). It works in this session's browser, so the page it ends on is where the other tools continue. " +
		"Needs a model configured on the server.",
}

// hidden are catalog tools the MCP server does not list: stop_action
// ends an agent run, and an MCP client runs its own loop.
var hidden = []string{"stop_action"}

// modelTools need a model; they are listed only when the server has one.
var modelTools = []string{"summarize_page", "answer_question"}

// definitions is a registry holding every catalog tool and the websurfer
// tool with handlers that are never called: it gives names, descriptions
// and schemas for tools/list. Calls run on each session's own registry.
func definitions() *tools.Registry {
	reg, err := tools.NewRegistry(tools.Config{})
	if err != nil {
		panic(err) // the zero config cannot fail
	}
	reg.Add(
		def(tools.VisitURL), def(tools.WebSearch), def(tools.HistoryBack), def(tools.HistoryForward), def(tools.RefreshPage),
		def(tools.PageUp), def(tools.PageDown), def(tools.ScrollElementUp), def(tools.ScrollElementDown),
		def(tools.PageLeft), def(tools.PageRight), def(tools.ScrollElementLeft), def(tools.ScrollElementRight),
		def(tools.Click), def(tools.ClickAt), def(tools.Drag), def(tools.InputText), def(tools.Hover), def(tools.SelectOption), def(tools.Keypress), def(tools.UploadFile),
		def(tools.CreateTab), def(tools.SwitchTab), def(tools.CloseTab),
		def(tools.Sleep), def(tools.ReadPage), def(tools.SummarizePage), def(tools.AnswerQuestion),
		def(tools.AnswerDialog), def(tools.StopAction),
		def(websurferSpec), def(observeSpec), def(screenshotSpec),
	)
	return reg
}

var errDefinitionOnly = errors.New("mcpserver: a tool definition was called")

func def[In any](s tools.Spec[In]) *tools.Tool {
	return s.Bind(func(context.Context, In) (*tools.Result, error) { return nil, errDefinitionOnly })
}

// listed is the tools clients see, in catalog order.
func listed(defs *tools.Registry, model bool) []string {
	return slices.DeleteFunc(defs.Names(), func(n string) bool {
		return slices.Contains(hidden, n) || (!model && slices.Contains(modelTools, n))
	})
}
