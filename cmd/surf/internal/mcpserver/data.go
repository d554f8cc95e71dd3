package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // the screenshot's size
	_ "image/png"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// Results as data. Every tool whose result is data (the board tools,
// session_list, websurfer, observe and screenshot) declares an
// outputSchema, inferred from the Go type below that it returns as
// structuredContent beside its text; the text stays as it was, for
// clients that do not read structuredContent. Error results carry no
// data (board_wait's timeout excepted: the tasks as they stand). The
// browser actions declare none: their result is the page for a model to
// read, and observe gives it as data.
//
// Token cost: the board tools' text is their data as JSON already (the
// MCP specification asks for that text beside structured content), so
// only websurfer, session_list and observe say things twice. observe's
// data leaves out the page's visible text, the bulk of an observation
// (the text content has it), and carries the elements the text lists,
// whose JSON is about twice their text.

// The names of the tools that read the page without acting.
const (
	ObserveTool    = "observe"
	ScreenshotTool = "screenshot"
)

// ObserveArgs is the input of observe.
type ObserveArgs struct {
	Text bool `json:"text,omitempty" jsonschema:"Also put the page's visible text in the structured result (the text content has it anyway). Default false."`
}

// ScreenshotArgs is the input of screenshot.
type ScreenshotArgs struct{}

var (
	observeSpec = tools.Spec[ObserveArgs]{
		Name: ObserveTool,
		Description: "Look at the current page without acting: the title and URL, the numbered elements you can act on and the visible text, with the screenshot as the actions return it. " +
			"The structured result lists the elements as data (id, role, name, value, box, ...). An error when the session has no page yet: visit_url first.",
	}
	screenshotSpec = tools.Spec[ScreenshotArgs]{
		Name:        ScreenshotTool,
		Description: "A screenshot of the current page's viewport, without element numbers (secrets the policy knows are masked), with its URL and size. An error when the session has no page yet: visit_url first.",
	}
)

// ObservedPage is observe's structured result: the page as surf sees it.
// Element ids are valid until the next call that changes the page.
type ObservedPage struct {
	// Seq numbers the session's observations.
	Seq      int                  `json:"seq"`
	URL      string               `json:"url"`
	Title    string               `json:"title"`
	Viewport perception.Viewport  `json:"viewport"`
	Elements []perception.Element `json:"elements"`
	// Unlisted counts elements left out by the token budget, by where
	// they are.
	Unlisted map[string]int `json:"unlisted,omitempty"`
	// Focused is the id of the focused element, when listed.
	Focused int                  `json:"focused,omitempty"`
	Tabs    []perception.TabInfo `json:"tabs"`
	// Text is the visible text, when asked for.
	Text string `json:"text,omitempty"`
}

// Screenshot is screenshot's structured result; the image is the result's
// image content.
type Screenshot struct {
	URL    string `json:"url"`
	MIME   string `json:"mime"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// WebsurferResult is the websurfer tool's structured result.
type WebsurferResult struct {
	// Answer is the run's answer; empty when it ended without one.
	Answer string `json:"answer"`
	// Data is the structured answer, validated against the call's
	// output_schema, when it gave one.
	Data      json.RawMessage `json:"data,omitempty"`
	Failure   string          `json:"failure,omitempty"`
	EndReason string          `json:"end_reason"`
	Steps     int             `json:"steps"`
	Tokens    int             `json:"tokens"`
	// Error is the error that ended the run, if any.
	Error     string `json:"error,omitempty"`
	LastURL   string `json:"last_url,omitempty"`
	LastTitle string `json:"last_title,omitempty"`
	Journal   string `json:"journal,omitempty"`
	// Summary is one line per step: tool, target, policy verdict.
	Summary []string `json:"summary"`
}

// SessionInfo is one session in session_list's structured result.
type SessionInfo struct {
	Name    string `json:"name"`
	Default bool   `json:"default"`
	// Open says whether its browser context is open (its next call opens
	// a new one if not).
	Open  bool   `json:"open"`
	URL   string `json:"url,omitempty"`
	Title string `json:"title,omitempty"`
	Tabs  int    `json:"tabs"`
	Busy  bool   `json:"busy"`
	// IdleSeconds is how long it has had no call, when not busy.
	IdleSeconds float64 `json:"idle_seconds"`
	// StateFile is the base name of its state file, if any.
	StateFile string `json:"state_file,omitempty"`
	Calls     int    `json:"calls"`
}

// SessionList is session_list's structured result.
type SessionList struct {
	Sessions []SessionInfo `json:"sessions"`
	// Open and Max are the server's open browser contexts, over all
	// connections, and its cap.
	Open int `json:"open"`
	Max  int `json:"max"`
}

// The board tools' structured results (BoardTask and BoardRecord are in
// board.go).
type (
	// BoardTasks is board_add's result.
	BoardTasks struct {
		Tasks []BoardTask `json:"tasks"`
	}
	// BoardStatus is board_status's result; More counts the tasks left
	// out (the oldest).
	BoardStatus struct {
		Tasks []BoardTask `json:"tasks"`
		More  int         `json:"more,omitempty"`
	}
	// BoardWaited is board_wait's result; Open lists the tasks still
	// open, with their state, on a timeout.
	BoardWaited struct {
		Tasks []BoardTask `json:"tasks"`
		Open  []string    `json:"open,omitempty"`
	}
)

// outputTypes are the types of the tools' structured results.
var outputTypes = map[string]reflect.Type{
	ObserveTool:     reflect.TypeFor[ObservedPage](),
	ScreenshotTool:  reflect.TypeFor[Screenshot](),
	WebsurferTool:   reflect.TypeFor[WebsurferResult](),
	"session_list":  reflect.TypeFor[SessionList](),
	BoardAddTool:    reflect.TypeFor[BoardTasks](),
	BoardStatusTool: reflect.TypeFor[BoardStatus](),
	BoardWaitTool:   reflect.TypeFor[BoardWaited](),
	BoardResultTool: reflect.TypeFor[BoardRecord](),
	BoardFileTool:   reflect.TypeFor[BoardFileInfo](),
	BoardCancelTool: reflect.TypeFor[BoardTask](),
}

// outputSchema is the listed output schema of a tool; nil for a tool
// without structured results. It panics on a type the schema cannot be
// inferred from, at start-up.
func outputSchema(name string) *jsonschema.Schema {
	t, ok := outputTypes[name]
	if !ok {
		return nil
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		// Data a schema of the caller's own describes: any JSON value.
		// Not the empty schema, which marshals as true: the TypeScript
		// SDK refuses a property schema that is not an object.
		reflect.TypeFor[json.RawMessage](): {Description: "Structured data matching the output schema the task or call gave: any JSON value."},
	}})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: the output schema of %s: %v", name, err))
	}
	return s
}

// observed is observe's result: the observation's text and image, and
// the page as data.
func observed(o *websurfer.Observation, withText bool) *tools.Result {
	res := tools.Text(o.Text())
	if len(o.Image) > 0 {
		res = res.WithImage(o.ImageMIME, o.Image)
	}
	p := ObservedPage{
		Seq: o.Seq, URL: o.URL, Title: o.Title, Viewport: o.Viewport,
		Elements: o.Elements, Focused: o.Focused, Tabs: o.Tabs,
	}
	if p.Elements == nil {
		p.Elements = []perception.Element{}
	}
	if p.Tabs == nil {
		p.Tabs = []perception.TabInfo{}
	}
	for loc, n := range o.Unlisted {
		if p.Unlisted == nil {
			p.Unlisted = map[string]int{}
		}
		p.Unlisted[string(loc)] = n
	}
	if withText {
		p.Text = o.VisibleText
	}
	res.Data = p
	return res
}

// errNoPage is the tool error of observe and screenshot in a session that
// has not opened a page.
func errNoPage(name string) error {
	return tools.Errorf("%s: this session has no page yet; open one with visit_url (or web_search) first", name)
}

// pageTools are observe and screenshot bound to a session's surfer.
func pageTools(surf *websurfer.Surfer) []*tools.Tool {
	return []*tools.Tool{
		observeSpec.Bind(func(ctx context.Context, in ObserveArgs) (*tools.Result, error) {
			if surf.Last() == nil && blank(surf) {
				return nil, errNoPage(ObserveTool)
			}
			o, err := surf.Observe(ctx)
			if err != nil {
				return nil, err
			}
			return observed(o, in.Text), nil
		}),
		screenshotSpec.Bind(func(ctx context.Context, _ ScreenshotArgs) (*tools.Result, error) {
			if surf.Last() == nil && blank(surf) {
				return nil, errNoPage(ScreenshotTool)
			}
			img, err := surf.Screenshot(ctx)
			if err != nil {
				return nil, err
			}
			return screenshot(surf, img)
		}),
	}
}

// blank reports whether the surfer's page is the empty one a new browser
// context opens on.
func blank(surf *websurfer.Surfer) bool {
	p := surf.Page()
	return p == nil || p.URL() == "" || p.URL() == "about:blank"
}

// screenshot is screenshot's result for an image the surfer took.
func screenshot(surf *websurfer.Surfer, img []byte) (*tools.Result, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(img))
	if err != nil {
		return nil, fmt.Errorf("reading the screenshot: %w", err)
	}
	mime := "image/" + format
	u := ""
	if p := surf.Page(); p != nil {
		u = surf.Policy().Redact(p.URL())
	}
	out := Screenshot{URL: u, MIME: mime, Width: cfg.Width, Height: cfg.Height}
	res := tools.Textf("screenshot of %s, %dx%d", perception.Quote(u, 200), cfg.Width, cfg.Height).WithImage(mime, img)
	res.Data = out
	return res, nil
}
