package session

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
)

// Action is a session command that sends one request to the session.
type Action struct {
	// Name is the command's name; Summary its line in "surf help"; Usage
	// its usage text with an example (without the flags every session
	// command takes).
	Name, Summary, Usage string
	// Flags registers the command's own flags on fs and returns the
	// function that turns the command's positional arguments into its
	// request, or into a usage message (the request then is zero).
	Flags func(fs *pflag.FlagSet) func(args []string) (daemon.Request, string)
	// SaveImage says the response's image is to be saved to the file the
	// first argument names, instead of its text printed.
	SaveImage bool
}

// Outcome is a session command's outcome as one JSON object (--json): its
// text and the observation on success, its error, hint and exit code on
// failure.
type Outcome struct {
	OK          bool            `json:"ok"`
	Session     string          `json:"session"`
	Command     string          `json:"command"`
	Text        string          `json:"text,omitempty"`
	Error       string          `json:"error,omitempty"`
	Hint        string          `json:"hint,omitempty"`
	ExitCode    int             `json:"exit_code"`
	Observation json.RawMessage `json:"observation,omitempty"`
}

// NewOutcome is the outcome of command cmd on session from the daemon's
// response; a failure's exit code is at least 1.
func NewOutcome(session, cmd string, resp *daemon.Response) Outcome {
	out := Outcome{resp.OK, session, cmd, resp.Text, resp.Error, resp.Hint, 0, resp.Observation}
	if !resp.OK {
		out.Text, out.ExitCode = "", resp.ExitCode
		if out.ExitCode == 0 {
			out.ExitCode = 1
		}
	}
	return out
}

// request builds a request from a tool name and its arguments.
func request(tool string, args map[string]any) daemon.Request {
	var raw json.RawMessage
	if args != nil {
		raw, _ = json.Marshal(args)
	}
	return daemon.Request{Tool: tool, Args: raw}
}

// elementID parses an element id argument.
func elementID(s string) (int, string) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Sprintf("%q is not an element id (a number from the observation, such as 12)", s)
	}
	return n, ""
}

// pixel reads a coordinate of the screenshot.
func pixel(s string) (float64, string) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Sprintf("%q is not a coordinate (pixels of the screenshot, such as 412)", s)
	}
	return f, ""
}

// dragEnd reads an end of drag: an element id, or x,y.
func dragEnd(s string) (map[string]any, string) {
	if xs, ys, ok := strings.Cut(s, ","); ok {
		x, msg := pixel(xs)
		if msg != "" {
			return nil, msg
		}
		y, msg := pixel(ys)
		if msg != "" {
			return nil, msg
		}
		return map[string]any{"x": x, "y": y}, ""
	}
	id, msg := elementID(s)
	if msg != "" {
		return nil, fmt.Sprintf("%q is neither an element id (12) nor a point x,y (412,230)", s)
	}
	return map[string]any{"target_id": id}, ""
}

// simple is a command taking exactly the positional arguments named in
// want, turned into a request by mk.
func simple(want int, what string, mk func(args []string) (daemon.Request, string)) func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
	return func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
		return func(args []string) (daemon.Request, string) {
			if len(args) != want {
				return daemon.Request{}, what
			}
			return mk(args)
		}
	}
}

// targetTool is a command on one element: "surf click 12".
func targetTool(tool string) func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
	return simple(1, "it takes one element id", func(args []string) (daemon.Request, string) {
		id, msg := elementID(args[0])
		if msg != "" {
			return daemon.Request{}, msg
		}
		return request(tool, map[string]any{"target_id": id}), ""
	})
}

// noArgs is a command without arguments.
func noArgs(tool string) func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
	return simple(0, "it takes no arguments", func([]string) (daemon.Request, string) {
		return request(tool, nil), ""
	})
}

// Actions are the session commands that send one request to the session,
// from surf click to surf upload.
var Actions = []*Action{
	{
		Name:    "click",
		Summary: "session: click an element by its id",
		Usage: `Usage: surf click ID [--session NAME]

Clicks the element with id ID in the latest observation of the session
opened with 'surf open', and prints what happened and the new observation.

Example:
  surf click 12`,
		Flags: targetTool("click"),
	},
	{
		Name:    "click-at",
		Summary: "session: click a point of the screenshot (a canvas, a map)",
		Usage: `Usage: surf click-at X Y [--session NAME]

Clicks the point X pixels from the left and Y pixels from the top of the
latest observation's screenshot, for what has no element id: a canvas, a
map, a chart. The element at the point is checked against the policy like
a click.

Example:
  surf click-at 412 230`,
		Flags: simple(2, "it takes the point's x and y in the screenshot's pixels, such as 412 230", func(args []string) (daemon.Request, string) {
			x, msg := pixel(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			y, msg := pixel(args[1])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("click_at", map[string]any{"x": x, "y": y}), ""
		}),
	},
	{
		Name:    "drag",
		Summary: "session: drag from an element or point to another (a slider, a sortable list)",
		Usage: `Usage: surf drag FROM TO [--session NAME]

Presses the mouse at FROM, moves it to TO and releases it there. Each is an
element id of the latest observation (12) or a point of its screenshot in
pixels (412,230).

Example:
  surf drag 7 300,410`,
		Flags: simple(2, "it takes two ends, each an element id (12) or a point x,y (412,230)", func(args []string) (daemon.Request, string) {
			from, msg := dragEnd(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			to, msg := dragEnd(args[1])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("drag", map[string]any{"from": from, "to": to}), ""
		}),
	},
	{
		Name:    "type",
		Summary: "session: type text into a field (clears it and presses Enter unless told not to)",
		Usage: `Usage: surf type ID TEXT [--no-enter] [--append] [--session NAME]

Types TEXT into the field with id ID. By default it first clears the field
and presses Enter after typing, which usually submits the form.
Put -- before TEXT that starts with a dash.

Flags:
  --no-enter          do not press Enter after typing
  --append            keep the text already in the field

Example:
  surf type 4 "opening hours" --no-enter`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			noEnter := fs.Bool("no-enter", false, "")
			appendText := fs.Bool("append", false, "")
			return func(args []string) (daemon.Request, string) {
				if len(args) != 2 {
					return daemon.Request{}, "it takes an element id and the text"
				}
				id, msg := elementID(args[0])
				if msg != "" {
					return daemon.Request{}, msg
				}
				return request("input_text", map[string]any{
					"input_field_id": id, "text_value": args[1],
					"press_enter": !*noEnter, "delete_existing_text": !*appendText,
				}), ""
			}
		},
	},
	{
		Name:    "select",
		Summary: "session: choose an option of a dropdown by its label",
		Usage: `Usage: surf select ID OPTION [--session NAME]

Chooses the option labelled OPTION in the dropdown with id ID.

Example:
  surf select 4 "Wednesday"`,
		Flags: simple(2, "it takes an element id and the option's label", func(args []string) (daemon.Request, string) {
			id, msg := elementID(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("select_option", map[string]any{"target_id": id, "option": args[1]}), ""
		}),
	},
	{
		Name:    "scroll",
		Summary: "session: scroll the page, or an element, up, down, left or right",
		Usage: `Usage: surf scroll down|up|left|right [ID] [--session NAME]

Scrolls the page by about one viewport, or with ID the scrollable element
with that id (a list, a side bar, a carousel). left and right scroll
sideways: a page wider than the window, or a box that scrolls sideways.

Example:
  surf scroll down
  surf scroll up 9
  surf scroll right 4`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			return func(args []string) (daemon.Request, string) {
				if len(args) < 1 || len(args) > 2 || !slices.Contains([]string{"up", "down", "left", "right"}, args[0]) {
					return daemon.Request{}, "it takes up, down, left or right, and optionally an element id"
				}
				if len(args) == 1 {
					return request("page_"+args[0], nil), ""
				}
				id, msg := elementID(args[1])
				if msg != "" {
					return daemon.Request{}, msg
				}
				return request("scroll_element_"+args[0], map[string]any{"target_id": id}), ""
			}
		},
	},
	{
		Name:    "back",
		Summary: "session: go back in the tab's history",
		Usage: `Usage: surf back [--session NAME]

Goes back one page in the active tab's history.

Example:
  surf back`,
		Flags: noArgs("history_back"),
	},
	{
		Name:    "forward",
		Summary: "session: go forward in the tab's history",
		Usage: `Usage: surf forward [--session NAME]

Goes forward one page in the active tab's history.

Example:
  surf forward`,
		Flags: noArgs("history_forward"),
	},
	{
		Name:    "observe",
		Summary: "session: print the current page's observation again",
		Usage: `Usage: surf observe [--session NAME]

Observes the active tab again and prints the observation. Element ids are
renumbered: use the ids of the latest observation.

Example:
  surf observe`,
		Flags: noArgs(ReqObserve),
	},
	{
		Name:    "tabs",
		Summary: "session: list the open tabs",
		Usage: `Usage: surf tabs [--session NAME]

Lists the session's tabs, the active one marked with *, as
"* INDEX "TITLE" URL". Switch with 'surf tab INDEX'.

Example:
  surf tabs`,
		Flags: noArgs(ReqTabs),
	},
	{
		Name:    "tab",
		Summary: "session: switch to another tab",
		Usage: `Usage: surf tab INDEX [--session NAME]

Makes the tab at INDEX (0 is the first, as 'surf tabs' lists them) active.

Example:
  surf tab 1`,
		Flags: simple(1, "it takes a tab index", func(args []string) (daemon.Request, string) {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return daemon.Request{}, fmt.Sprintf("%q is not a tab index (0, 1, ...)", args[0])
			}
			return request("switch_tab", map[string]any{"index": n}), ""
		}),
	},
	{
		Name:    "screenshot",
		Summary: "session: save the set-of-mark screenshot (or a plain one) to a file",
		Usage: `Usage: surf screenshot FILE [--plain] [--session NAME]

Saves the set-of-mark screenshot of the latest observation (the numbered
boxes match the ids it listed) to FILE: PNG if FILE ends in .png, else
JPEG. With --plain, a screenshot of the viewport now, without marks.

Flags:
  --plain             a plain screenshot of the viewport, without marks

Example:
  surf screenshot page.png`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			plain := fs.Bool("plain", false, "")
			return func(args []string) (daemon.Request, string) {
				if len(args) != 1 {
					return daemon.Request{}, "it takes the file to write"
				}
				return request(ReqScreenshot, map[string]any{"plain": *plain}), ""
			}
		},
		SaveImage: true,
	},
	{
		Name:    "read",
		Summary: "session: read the page's main content as markdown, a page at a time",
		Usage: `Usage: surf read [PAGE] [--session NAME]

Prints the main content of the active tab as markdown, including what is
outside the viewport, split into pages; PAGE (default 1) picks one.

Example:
  surf read
  surf read 2`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			return func(args []string) (daemon.Request, string) {
				switch len(args) {
				case 0:
					return request("read_page", nil), ""
				case 1:
					n, err := strconv.Atoi(args[0])
					if err != nil || n < 1 {
						return daemon.Request{}, fmt.Sprintf("%q is not a page number (1, 2, ...)", args[0])
					}
					return request("read_page", map[string]any{"page": n}), ""
				}
				return daemon.Request{}, "it takes at most a page number"
			}
		},
	},
	{
		Name:    "key",
		Summary: "session: press keys (Enter, Tab, Control+A, ...) in order",
		Usage: `Usage: surf key KEY... [--session NAME]

Presses keys one after another in the focused element; a chord is written
with +. Key names are Playwright's: Enter, Tab, Escape, Backspace,
ArrowDown, PageDown, Control+A, Shift+Tab, ...

Example:
  surf key Control+A Backspace`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			return func(args []string) (daemon.Request, string) {
				if len(args) == 0 {
					return daemon.Request{}, "it takes at least one key"
				}
				return request("keypress", map[string]any{"keys": args}), ""
			}
		},
	},
	{
		Name:    "hover",
		Summary: "session: move the mouse over an element",
		Usage: `Usage: surf hover ID [--session NAME]

Moves the mouse over the element with id ID, for example to open a menu.

Example:
  surf hover 3`,
		Flags: targetTool("hover"),
	},
	{
		Name:    "dialog",
		Summary: "session: accept or dismiss the confirm or prompt dialog the page waits on",
		Usage: `Usage: surf dialog accept|dismiss [TEXT] [--session NAME]

Answers the dialog the observation reports pending (a confirm or a
prompt): accept presses OK, dismiss presses Cancel. TEXT is a prompt's
answer when accepting (without it, the prompt's default text). Any other
action dismisses a pending dialog instead.

Example:
  surf dialog accept
  surf dialog accept "Ada"`,
		Flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			return func(args []string) (daemon.Request, string) {
				if len(args) < 1 || len(args) > 2 || (args[0] != "accept" && args[0] != "dismiss") {
					return daemon.Request{}, "it takes accept or dismiss, and optionally a prompt's text"
				}
				in := map[string]any{"accept": args[0] == "accept"}
				if len(args) == 2 {
					in["prompt_text"] = args[1]
				}
				return request("answer_dialog", in), ""
			}
		},
	},
	{
		Name:    "upload",
		Summary: "session: choose a file for a file input",
		Usage: `Usage: surf upload ID FILE [--session NAME]

Puts FILE into the file input with id ID. FILE is relative to the uploads
directory the session was opened with ('surf open --uploads DIR'); files
outside it cannot be uploaded.

Example:
  surf upload 5 report.pdf`,
		Flags: simple(2, "it takes an element id and a file", func(args []string) (daemon.Request, string) {
			id, msg := elementID(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("upload_file", map[string]any{"target_id": id, "path": args[1]}), ""
		}),
	},
}
