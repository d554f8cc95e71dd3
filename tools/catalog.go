package tools

import "reflect"

// This file is surf's tool catalog: the input type and description of
// every action the model can take. websurfer binds a handler to each spec,
// for example:
//
//	reg.Add(tools.Click.Bind(func(ctx context.Context, in tools.TargetArgs) (*tools.Result, error) {
//		...
//	}))
//
// Argument names follow AutoGen's MultimodalWebSurfer where it has them.

// NoArgs is the input of tools without arguments (they still accept the
// optional reasoning argument).
type NoArgs struct{}

// URLArgs is the input of visit_url and create_tab.
type URLArgs struct {
	URL string `json:"url" jsonschema:"The address to open. Without a scheme: text containing a space is searched for on the web, anything else gets https:// in front." schema:"minLength=1,maxLength=8192"`
}

// WebSearchArgs is the input of web_search.
type WebSearchArgs struct {
	Query string `json:"query" jsonschema:"The search query." schema:"minLength=1,maxLength=2000"`
}

// TargetArgs is the input of tools that act on one element: click, hover,
// scroll_element_up, scroll_element_down, scroll_element_left and
// scroll_element_right.
type TargetArgs struct {
	TargetID int `json:"target_id" jsonschema:"The id of the element: the number on its label in the screenshot and in the element list." schema:"minimum=1,maximum=1000000"`
}

// InputTextArgs is the input of input_text. PressEnter and
// DeleteExistingText default to true: when the model omits them (or sends
// null) the handler receives true.
type InputTextArgs struct {
	InputFieldID       int    `json:"input_field_id" jsonschema:"The id of the text field, text area or other editable element to type into." schema:"minimum=1,maximum=1000000"`
	TextValue          string `json:"text_value" jsonschema:"The text to type." schema:"maxLength=10000"`
	PressEnter         bool   `json:"press_enter,omitempty" jsonschema:"Press Enter after typing, which usually submits the form or search. Default true." schema:"default=true"`
	DeleteExistingText bool   `json:"delete_existing_text,omitempty" jsonschema:"Delete the text already in the field before typing. Default true." schema:"default=true"`
}

// SelectOptionArgs is the input of select_option.
// Option or Options must be given; a multi-select ends with exactly the
// options named in both (Options given empty, and no Option, clears it).
type SelectOptionArgs struct {
	TargetID int      `json:"target_id" jsonschema:"The id of the dropdown (a select element or a listbox)." schema:"minimum=1,maximum=1000000"`
	Option   string   `json:"option,omitempty" jsonschema:"The visible label of the option to choose, as shown in the dropdown." schema:"maxLength=1000"`
	Options  []string `json:"options,omitempty" jsonschema:"For a list that allows several choices (a multi-select): the visible labels of all the options to leave selected. The selection becomes exactly these (and option, if given): any other option is deselected, and an empty list clears the selection." schema:"maxItems=100,items.minLength=1,items.maxLength=1000"`
}

// ClickAtArgs is the input of click_at: a point of the screenshot, in its
// pixels.
type ClickAtArgs struct {
	X float64 `json:"x" jsonschema:"Pixels from the left edge of the screenshot." schema:"minimum=0,maximum=100000"`
	Y float64 `json:"y" jsonschema:"Pixels from the top edge of the screenshot." schema:"minimum=0,maximum=100000"`
}

// PointArgs is one end of a drag: an element's id, or a point of the
// screenshot.
type PointArgs struct {
	TargetID int      `json:"target_id,omitempty" jsonschema:"An element's id (its centre), or give x and y." schema:"minimum=1,maximum=1000000"`
	X        *float64 `json:"x,omitempty" jsonschema:"Screenshot pixels from the left." schema:"minimum=0,maximum=100000"`
	Y        *float64 `json:"y,omitempty" jsonschema:"Screenshot pixels from the top." schema:"minimum=0,maximum=100000"`
}

// DragArgs is the input of drag.
type DragArgs struct {
	From PointArgs `json:"from" jsonschema:"Where to press the mouse."`
	To   PointArgs `json:"to" jsonschema:"Where to release it."`
}

// KeypressArgs is the input of keypress. Each key is a Playwright key name
// or a chord of names joined with '+'; the handler presses them in order.
type KeypressArgs struct {
	Keys []string `json:"keys" jsonschema:"The keys to press, in order. Each is a key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, PageUp, PageDown, Home, End, F1 to F12, or one character such as a) or a chord with modifiers joined by + (Control+A, Shift+Tab, Control+Shift+ArrowLeft)." schema:"minItems=1,maxItems=50,items.minLength=1,items.maxLength=64"`
}

// UploadFileArgs is the input of upload_file.
type UploadFileArgs struct {
	TargetID int    `json:"target_id" jsonschema:"The id of the file input (or the button that opens the file chooser)." schema:"minimum=1,maximum=1000000"`
	Path     string `json:"path" jsonschema:"The file to upload, relative to the session's uploads directory, e.g. report.pdf." schema:"minLength=1,maxLength=1024"`
}

// TabArgs is the input of switch_tab and close_tab. Index is 0-based, as
// in the tab list of the observation.
type TabArgs struct {
	Index int `json:"index" jsonschema:"The position of the tab in the tab list; 0 is the first tab." schema:"minimum=0,maximum=99"`
}

// SleepArgs is the input of sleep. Seconds defaults to 3.
type SleepArgs struct {
	Seconds float64 `json:"seconds,omitempty" jsonschema:"How long to wait, in seconds: more than 0 and at most 10. Default 3." schema:"exclusiveMinimum=0,maximum=10,default=3"`
}

// ReadPageArgs is the input of read_page. Page defaults to 1.
type ReadPageArgs struct {
	Page int `json:"page,omitempty" jsonschema:"Which page of the content to read, starting at 1. Default 1." schema:"minimum=1,maximum=10000,default=1"`
}

// AnswerDialogArgs is the input of answer_dialog.
type AnswerDialogArgs struct {
	Accept     bool   `json:"accept" jsonschema:"true to press OK (accept), false to press Cancel (dismiss)."`
	PromptText string `json:"prompt_text,omitempty" jsonschema:"For a prompt dialog you accept: the text to answer with. Without it the prompt's default text is used." schema:"maxLength=2000"`
}

// QuestionArgs is the input of answer_question.
type QuestionArgs struct {
	Question string `json:"question" jsonschema:"The question about the current page." schema:"minLength=1,maxLength=2000"`
}

// StopActionArgs is the input of stop_action.
type StopActionArgs struct {
	Answer string `json:"answer" jsonschema:"The final answer to the task, or why it cannot be done, with what you found." schema:"minLength=1,maxLength=20000"`
}

// RequestHelpArgs is the input of request_help.
type RequestHelpArgs struct {
	Reason string `json:"reason" jsonschema:"What the person should do, e.g. 'log in to example.com' or 'solve the CAPTCHA'." schema:"minLength=1,maxLength=2000"`
}

// RequestHelp asks a person to take over the browser. It is not in
// Catalog: it belongs to surf's own agent loop (websurfer.Config.Human),
// not to the tools an MCP client drives itself.
var RequestHelp = Spec[RequestHelpArgs]{
	Name:        "request_help",
	Description: "Ask the person watching this session to take over the browser, for what only a human can do: a login wall, a second factor, a CAPTCHA. Waits (minutes at most) until they hand the browser back, then tells you what they said; the next observation shows the page as they left it. Do not ask for help with things you can do yourself.",
}

// The catalog. Each spec's Description is what the model reads.
var (
	VisitURL = Spec[URLArgs]{
		Name:        "visit_url",
		Description: "Open a URL in the current tab. Without a scheme, text containing a space is treated as a web search and anything else gets https:// (example.com opens https://example.com). Prefer this to clicking links when you know the address. Addresses the browsing policy forbids are refused.",
	}
	WebSearch = Spec[WebSearchArgs]{
		Name:        "web_search",
		Description: "Search the web for a query with the configured search engine and open the results page in the current tab. Keep queries short and simple.",
	}
	HistoryBack = Spec[NoArgs]{
		Name:        "history_back",
		Description: "Go back one page in the current tab's history, like the browser's back button.",
	}
	HistoryForward = Spec[NoArgs]{
		Name:        "history_forward",
		Description: "Go forward one page in the current tab's history, like the browser's forward button.",
	}
	RefreshPage = Spec[NoArgs]{
		Name:        "refresh_page",
		Description: "Reload the current page.",
	}
	PageUp = Spec[NoArgs]{
		Name:        "page_up",
		Description: "Scroll the page up by one viewport height minus a small overlap, so some of what was at the top stays in view. It scrolls the page itself; for a scrollable box inside the page use scroll_element_up.",
	}
	PageDown = Spec[NoArgs]{
		Name:        "page_down",
		Description: "Scroll the page down by one viewport height minus a small overlap, so some of what was at the bottom stays in view. It scrolls the page itself; for a scrollable box inside the page use scroll_element_down.",
	}
	ScrollElementUp = Spec[TargetArgs]{
		Name:        "scroll_element_up",
		Description: "Scroll up inside the element with the given id by turning the mouse wheel over it. Use it for scrollable boxes within the page (lists, menus, chat panels, side bars) that page_up does not move.",
	}
	ScrollElementDown = Spec[TargetArgs]{
		Name:        "scroll_element_down",
		Description: "Scroll down inside the element with the given id by turning the mouse wheel over it. Use it for scrollable boxes within the page (lists, menus, chat panels, side bars) that page_down does not move.",
	}
	PageLeft = Spec[NoArgs]{
		Name:        "page_left",
		Description: "Scroll the page left by one viewport width minus a small overlap, on a page wider than the window. It scrolls the page itself; for a scrollable box inside the page use scroll_element_left.",
	}
	PageRight = Spec[NoArgs]{
		Name:        "page_right",
		Description: "Scroll the page right by one viewport width minus a small overlap, on a page wider than the window. It scrolls the page itself; for a scrollable box inside the page use scroll_element_right.",
	}
	ScrollElementLeft = Spec[TargetArgs]{
		Name:        "scroll_element_left",
		Description: "Scroll left inside the element with the given id by turning the mouse wheel sideways over it. Use it for boxes that scroll sideways (carousels, wide tables, tab strips) when an element is scrolled out of view inside it to the left.",
	}
	ScrollElementRight = Spec[TargetArgs]{
		Name:        "scroll_element_right",
		Description: "Scroll right inside the element with the given id by turning the mouse wheel sideways over it. Use it for boxes that scroll sideways (carousels, wide tables, tab strips) when an element is scrolled out of view inside it to the right.",
	}
	Click = Spec[TargetArgs]{
		Name:        "click",
		Description: "Click the element with the given id.",
	}
	InputText = Spec[InputTextArgs]{
		Name:        "input_text",
		Description: "Type text into the editable element with the given id. By default it first deletes the text already in the field and presses Enter after typing, which usually submits the form; set delete_existing_text or press_enter to false to avoid that.",
	}
	ClickAt = Spec[ClickAtArgs]{
		Name:        "click_at",
		Description: "Click a point of the screenshot, given in its pixels from the top-left corner, for what has no id: a canvas, a map, a chart. Prefer click when the thing has an id. A point covered by a dialog or banner is refused.",
	}
	Drag = Spec[DragArgs]{
		Name:        "drag",
		Description: "Press the mouse at one place, move it to another and release it there, as a person drags: a slider's handle, an item of a sortable list, a map. Each end is an element's id or a point of the screenshot in its pixels.",
	}
	Hover = Spec[TargetArgs]{
		Name:        "hover",
		Description: "Move the mouse over the element with the given id, for example to open a menu or show a tooltip.",
	}
	SelectOption = Spec[SelectOptionArgs]{
		Name:        "select_option",
		Description: "Choose an option in the dropdown with the given id by the option's visible label. In a list that allows several choices, give options: the selection becomes exactly the options named.",
	}
	Keypress = Spec[KeypressArgs]{
		Name:        "keypress",
		Description: "Press keys one after another, not all at once; a chord such as Control+A holds its modifiers while pressing the last key. Keys go to the focused element. To type text use input_text.",
	}
	UploadFile = Spec[UploadFileArgs]{
		Name:        "upload_file",
		Description: "Choose a file for the file input with the given id. The path is relative to the session's uploads directory; files outside it cannot be uploaded.",
	}
	CreateTab = Spec[URLArgs]{
		Name:        "create_tab",
		Description: "Open a new tab, switch to it and open the URL there (the URL is read as for visit_url).",
	}
	SwitchTab = Spec[TabArgs]{
		Name:        "switch_tab",
		Description: "Switch to the tab at the given position in the tab list (0 is the first tab).",
	}
	CloseTab = Spec[TabArgs]{
		Name:        "close_tab",
		Description: "Close the tab at the given position in the tab list (0 is the first tab). If it was the current tab, another open tab becomes current.",
	}
	Sleep = Spec[SleepArgs]{
		Name:        "sleep",
		Description: "Wait a few seconds (default 3, at most 10), for example while a page is still loading or an animation runs.",
	}
	ReadPage = Spec[ReadPageArgs]{
		Name:        "read_page",
		Description: "Read the main content of the current page as Markdown, including the parts outside the viewport. Long content is split into numbered pages; the result says which page this is and how many there are.",
	}
	SummarizePage = Spec[NoArgs]{
		Name:        "summarize_page",
		Description: "Summarize the whole current page, not only the part in view.",
	}
	AnswerQuestion = Spec[QuestionArgs]{
		Name:        "answer_question",
		Description: "Answer a question about the content of the current page, using the whole page, not only the part in view.",
	}
	AnswerDialog = Spec[AnswerDialogArgs]{
		Name:        "answer_dialog",
		Description: "Answer the dialog (confirm or prompt) the page is waiting on, when the observation says one is pending: accept it (OK) or dismiss it (Cancel); for a prompt you accept, give the text in prompt_text. Any other action dismisses the dialog instead.",
	}
	StopAction = Spec[StopActionArgs]{
		Name:        "stop_action",
		Description: "End the task and give the final answer. Use it when the task is done, or cannot be done; say what you found or why you stopped.",
	}
)

// CatalogEntry describes one spec of the catalog without its type parameter.
type CatalogEntry struct {
	Name        string
	Description string
	Input       reflect.Type // the input struct, e.g. TargetArgs
}

func entry[In any](s Spec[In]) CatalogEntry {
	return CatalogEntry{Name: s.Name, Description: s.Description, Input: s.InputType()}
}

// Catalog lists surf's tool specs in a stable order (navigation, scrolling,
// element actions, tabs, reading, stopping).
func Catalog() []CatalogEntry {
	return []CatalogEntry{
		entry(VisitURL), entry(WebSearch), entry(HistoryBack), entry(HistoryForward), entry(RefreshPage),
		entry(PageUp), entry(PageDown), entry(ScrollElementUp), entry(ScrollElementDown),
		entry(PageLeft), entry(PageRight), entry(ScrollElementLeft), entry(ScrollElementRight),
		entry(Click), entry(ClickAt), entry(Drag), entry(InputText), entry(Hover), entry(SelectOption), entry(Keypress), entry(UploadFile),
		entry(CreateTab), entry(SwitchTab), entry(CloseTab),
		entry(Sleep), entry(ReadPage), entry(SummarizePage), entry(AnswerQuestion),
		entry(AnswerDialog), entry(StopAction),
	}
}

// CatalogNames returns the names of all catalog specs, in Catalog order.
func CatalogNames() []string {
	var names []string
	for _, e := range Catalog() {
		names = append(names, e.Name)
	}
	return names
}

// CatalogInput returns the input struct type of the named catalog spec.
func CatalogInput(name string) (reflect.Type, bool) {
	for _, e := range Catalog() {
		if e.Name == name {
			return e.Input, true
		}
	}
	return nil, false
}
