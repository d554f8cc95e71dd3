package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// The session commands: "surf open" starts (or reuses) a background
// session daemon and each later command is one action on it, for agents
// that work through a shell. See session_daemon.go for the daemon and
// cmd/surf/internal/daemon for the socket and protocol.

const sessionHelp = `Sessions: 'surf open' starts a background session (one daemon process and
browser per session name) that later commands act on. Each action prints
what happened and the new observation, or "surf: error: ..." on stderr.
The daemon listens on a unix socket in $SURF_RUNTIME_DIR, else
$XDG_RUNTIME_DIR/surf, else $TMPDIR/surf-UID (mode 0700, socket 0600,
only this user may connect). It exits after --idle without a command
(default 10m) or on 'surf close'.

Exit codes: 0 done; 1 the action failed (no such element, denied, no
session open); 2 bad usage.`

// openUsage is the usage text of surf open.
const openUsage = `Usage: surf open [URL] [--session NAME] [--idle DURATION] [flags]

Starts a background session daemon with its own sandboxed browser, or
reuses the one already running under that name, opens URL and prints the
observation (as 'surf visit' does). Without URL it prints the current page.
Then drive it with one command per action: surf click, type, select,
scroll, back, forward, hover, key, upload, read, tabs, tab, observe,
screenshot, and finally surf close.

The policy and browser flags are given here, when the session starts, and
are fixed for its life: later commands take none, and reusing a running
session with different flags is refused (close it first).

Flags:
  --session NAME      the session (default "default", or $SURF_SESSION)
  --idle DURATION     close the session after this long without a command (default 10m)
  --json              print the outcome and the observation as one JSON object
` + browserFlagsHelp + `
` + stateFlagsHelp + `
                      (saved when the session closes: surf close, --idle)

` + sessionHelp + `

Example:
  surf open http://127.0.0.1:8080/ --allow 127.0.0.1
  surf type 4 "harbour"
  surf click 7
  surf close`

// closeUsage is the usage text of surf close.
const closeUsage = `Usage: surf close [--session NAME | --all]

Closes the session's browser, stops its daemon and removes its socket.
Closing a session that is not open is not an error.

Flags:
  --session NAME      the session (default "default", or $SURF_SESSION)
  --all               close every open session

Example:
  surf close`

func init() {
	open := &command{
		name:    "open",
		summary: "start (or reuse) a background browser session and open a URL in it",
		usage:   openUsage,
	}
	open.run = func(ctx context.Context, cli *CLI, args []string) error { return runOpen(ctx, cli, open, args) }
	register(open)

	closeCmd := &command{
		name:    "close",
		summary: "close a background session: its browser and daemon",
		usage:   closeUsage,
	}
	closeCmd.run = func(ctx context.Context, cli *CLI, args []string) error { return runClose(ctx, cli, closeCmd, args) }
	register(closeCmd)

	for _, a := range sessionActions {
		registerAction(a)
	}
}

// openFlags are surf open's flags and URL.
type openFlags struct {
	name  string
	idle  time.Duration
	json  bool
	bf    *browserFlags
	url   string
	flags []string // the session's flags, as given
}

func parseOpenFlags(c *command, cli *CLI, args []string) (*openFlags, error) {
	fs := newFlags(c)
	f := &openFlags{}
	name := addSessionFlag(fs, cli)
	fs.DurationVar(&f.idle, "idle", 0, "")
	fs.BoolVar(&f.json, "json", false, "")
	f.bf = addBrowserFlags(fs)
	f.bf.state = addStateFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 1 {
		return nil, usagef(c, "open takes at most one URL")
	}
	if f.idle < 0 {
		return nil, usagef(c, "--idle must not be negative")
	}
	f.name, f.url = *name, fs.Arg(0)
	f.flags = sessionFlagArgs(fs, nil)
	return f, nil
}

// check checks what can be checked before a browser starts: the policy
// flags, the state file and the uploads directory. It returns the policy.
func (f *openFlags) check(cli *CLI) (*policy.Policy, error) {
	pol, err := f.bf.pol.policy(cli.Getenv)
	if err != nil {
		return nil, err
	}
	if _, err := f.bf.state.file(cli.Getenv); err != nil {
		return nil, err
	}
	if f.bf.uploads != "" {
		if fi, err := os.Stat(f.bf.uploads); err != nil || !fi.IsDir() {
			return nil, withHint(fmt.Errorf("--uploads %s is not a directory", f.bf.uploads), "create it and put the files the agent may upload in it")
		}
	}
	return pol, nil
}

// runOpen is surf open.
func runOpen(ctx context.Context, cli *CLI, c *command, args []string) error {
	f, err := parseOpenFlags(c, cli, args)
	if err != nil {
		return err
	}
	p, err := sessionPaths(cli, f.name)
	if err != nil {
		return err
	}
	// For a new session, the URL is checked under its policy here; a
	// running session checks the URL itself.
	pol, err := f.check(cli)
	if err != nil {
		return err
	}
	conn, err := daemon.Dial(ctx, p.Socket)
	started := false
	if errors.Is(err, daemon.ErrNoDaemon) {
		if f.url != "" {
			if err := (&browser{pol: pol, bf: f.bf}).checkURL(f.url); err != nil {
				return err
			}
		}
		conn, started, err = connectOrStart(ctx, p, f.flags)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	if !started && len(f.flags) > 0 {
		if err := checkSameFlags(ctx, conn, f.name, f.flags); err != nil {
			return err
		}
	}
	a, _ := json.Marshal(map[string]string{"url": f.url})
	resp, err := conn.Call(ctx, daemon.Request{Tool: reqOpen, Args: a})
	if err != nil {
		return err
	}
	if f.json {
		return printJSON(cli, f.name, "open", resp)
	}
	if !resp.OK {
		return responseError(resp)
	}
	printText(cli, resp.Text)
	return nil
}

// runClose is surf close.
func runClose(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	name := addSessionFlag(fs, cli)
	all := fs.Bool("all", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "close takes no arguments")
	}
	if *all && fs.Changed("session") {
		return usagef(c, "--all and --session do not go together")
	}
	names := []string{*name}
	if *all {
		dir := daemon.RuntimeDir(cli.Getenv)
		if err := daemon.EnsureDir(dir); err != nil {
			return err
		}
		socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
		names = names[:0]
		for _, s := range socks {
			names = append(names, strings.TrimSuffix(filepath.Base(s), ".sock"))
		}
		sort.Strings(names)
	}
	var errs []error
	for _, n := range names {
		if err := closeSession(ctx, cli, n); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// closeSession closes one session and waits for its daemon to exit. A
// session that is not open is reported on stderr, not as an error; its
// stale files, if any, are removed.
func closeSession(ctx context.Context, cli *CLI, name string) error {
	p, err := sessionPaths(cli, name)
	if err != nil {
		return err
	}
	conn, err := daemon.Dial(ctx, p.Socket)
	if errors.Is(err, daemon.ErrNoDaemon) {
		if lock, err := daemon.Acquire(p.Lock); err == nil {
			daemon.CleanStale(p, cli.Logger)
			lock.Release()
		}
		fmt.Fprintf(cli.Stderr, "surf: no session %q is open\n", name)
		return nil
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := conn.Call(ctx, daemon.Request{Tool: reqClose})
	if err != nil {
		return err
	}
	if !resp.OK {
		return responseError(resp)
	}
	if err := daemon.WaitGone(ctx, conn.PID(), daemonExitWait); err != nil {
		return err
	}
	printText(cli, resp.Text)
	return nil
}

// printText prints a response's text, ending it with a newline.
func printText(cli *CLI, s string) {
	if s == "" {
		return
	}
	fmt.Fprint(termsafe.Writer(cli.Stdout), s)
	if !strings.HasSuffix(s, "\n") {
		fmt.Fprintln(cli.Stdout)
	}
}

// sessionAction is one command that sends one request to the session.
type sessionAction struct {
	name, summary, usage string
	// flags registers the command's own flags; build turns the
	// positional arguments into the request, or returns a usage message.
	flags func(fs *pflag.FlagSet) func(args []string) (daemon.Request, string)
	// after handles the response instead of printing its text.
	after func(cli *CLI, args []string, resp *daemon.Response) error
}

func registerAction(a *sessionAction) {
	c := &command{name: a.name, summary: a.summary, usage: actionUsage(a.usage)}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		name := addSessionFlag(fs, cli)
		asJSON := fs.Bool("json", false, "")
		var build func([]string) (daemon.Request, string)
		if a.flags != nil {
			build = a.flags(fs)
		}
		// The open flags are registered only to refuse them clearly.
		openOnly := openFlagNames()
		addBrowserFlags(fs)
		addStateFlags(fs)
		fs.Duration("idle", 0, "")
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		var refused []string
		fs.Visit(func(f *pflag.Flag) {
			if openOnly[f.Name] {
				refused = append(refused, "--"+f.Name)
			}
		})
		if len(refused) > 0 {
			return usagef(c, "%s can only be given to 'surf open': a session's policy and browser are fixed when it opens (close it and open it again to change them)", strings.Join(refused, ", "))
		}
		req, msg := build(fs.Args())
		if msg != "" {
			return usagef(c, "%s", msg)
		}
		if *asJSON && a.after == nil {
			resp, err := rawCallSession(ctx, cli, *name, req)
			if err != nil {
				return err
			}
			return printJSON(cli, *name, a.name, resp)
		}
		resp, err := callSession(ctx, cli, *name, req)
		if err != nil {
			return err
		}
		if a.after != nil {
			return a.after(cli, fs.Args(), resp)
		}
		printText(cli, resp.Text)
		return nil
	}
	register(c)
}

// printJSON prints a session command's outcome as one JSON object:
// {"ok", "session", "command", "text", "observation"} on success, with
// "error", "hint" and "exit_code" instead of text on failure, and ends
// with the exit code the text form would have.
func printJSON(cli *CLI, session, cmd string, resp *daemon.Response) error {
	out := struct {
		OK          bool            `json:"ok"`
		Session     string          `json:"session"`
		Command     string          `json:"command"`
		Text        string          `json:"text,omitempty"`
		Error       string          `json:"error,omitempty"`
		Hint        string          `json:"hint,omitempty"`
		ExitCode    int             `json:"exit_code"`
		Observation json.RawMessage `json:"observation,omitempty"`
	}{resp.OK, session, cmd, resp.Text, resp.Error, resp.Hint, 0, resp.Observation}
	if !resp.OK {
		out.Text, out.ExitCode = "", resp.ExitCode
		if out.ExitCode == 0 {
			out.ExitCode = 1
		}
	}
	enc := json.NewEncoder(cli.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return &exitError{code: out.ExitCode}
	}
	return nil
}

// actionUsage adds --session to an action's flags and a pointer to
// 'surf help open' before its example.
func actionUsage(u string) string {
	const session = "  --session NAME      the session (default \"default\", or $SURF_SESSION)\n" +
		"  --json              print the outcome and the observation as one JSON object\n"
	if i := strings.Index(u, "Flags:\n"); i >= 0 {
		i += len("Flags:\n")
		u = u[:i] + session + u[i:]
	} else if i := strings.Index(u, "\n\nExample:"); i >= 0 {
		u = u[:i] + "\n\nFlags:\n" + strings.TrimSuffix(session, "\n") + u[i:]
	}
	return u + "\n\nIt acts on the session 'surf open' started; see 'surf help open'."
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

var sessionActions = []*sessionAction{
	{
		name:    "click",
		summary: "session: click an element by its id",
		usage: `Usage: surf click ID [--session NAME]

Clicks the element with id ID in the latest observation of the session
opened with 'surf open', and prints what happened and the new observation.

Example:
  surf click 12`,
		flags: targetTool("click"),
	},
	{
		name:    "click-at",
		summary: "session: click a point of the screenshot (a canvas, a map)",
		usage: `Usage: surf click-at X Y [--session NAME]

Clicks the point X pixels from the left and Y pixels from the top of the
latest observation's screenshot, for what has no element id: a canvas, a
map, a chart. The element at the point is checked against the policy like
a click.

Example:
  surf click-at 412 230`,
		flags: simple(2, "it takes the point's x and y in the screenshot's pixels, such as 412 230", func(args []string) (daemon.Request, string) {
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
		name:    "drag",
		summary: "session: drag from an element or point to another (a slider, a sortable list)",
		usage: `Usage: surf drag FROM TO [--session NAME]

Presses the mouse at FROM, moves it to TO and releases it there. Each is an
element id of the latest observation (12) or a point of its screenshot in
pixels (412,230).

Example:
  surf drag 7 300,410`,
		flags: simple(2, "it takes two ends, each an element id (12) or a point x,y (412,230)", func(args []string) (daemon.Request, string) {
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
		name:    "type",
		summary: "session: type text into a field (clears it and presses Enter unless told not to)",
		usage: `Usage: surf type ID TEXT [--no-enter] [--append] [--session NAME]

Types TEXT into the field with id ID. By default it first clears the field
and presses Enter after typing, which usually submits the form.
Put -- before TEXT that starts with a dash.

Flags:
  --no-enter          do not press Enter after typing
  --append            keep the text already in the field

Example:
  surf type 4 "opening hours" --no-enter`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
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
		name:    "select",
		summary: "session: choose an option of a dropdown by its label",
		usage: `Usage: surf select ID OPTION [--session NAME]

Chooses the option labelled OPTION in the dropdown with id ID.

Example:
  surf select 4 "Wednesday"`,
		flags: simple(2, "it takes an element id and the option's label", func(args []string) (daemon.Request, string) {
			id, msg := elementID(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("select_option", map[string]any{"target_id": id, "option": args[1]}), ""
		}),
	},
	{
		name:    "scroll",
		summary: "session: scroll the page, or an element, up, down, left or right",
		usage: `Usage: surf scroll down|up|left|right [ID] [--session NAME]

Scrolls the page by about one viewport, or with ID the scrollable element
with that id (a list, a side bar, a carousel). left and right scroll
sideways: a page wider than the window, or a box that scrolls sideways.

Example:
  surf scroll down
  surf scroll up 9
  surf scroll right 4`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
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
		name:    "back",
		summary: "session: go back in the tab's history",
		usage: `Usage: surf back [--session NAME]

Goes back one page in the active tab's history.

Example:
  surf back`,
		flags: noArgs("history_back"),
	},
	{
		name:    "forward",
		summary: "session: go forward in the tab's history",
		usage: `Usage: surf forward [--session NAME]

Goes forward one page in the active tab's history.

Example:
  surf forward`,
		flags: noArgs("history_forward"),
	},
	{
		name:    "observe",
		summary: "session: print the current page's observation again",
		usage: `Usage: surf observe [--session NAME]

Observes the active tab again and prints the observation. Element ids are
renumbered: use the ids of the latest observation.

Example:
  surf observe`,
		flags: noArgs(reqObserve),
	},
	{
		name:    "tabs",
		summary: "session: list the open tabs",
		usage: `Usage: surf tabs [--session NAME]

Lists the session's tabs, the active one marked with *, as
"* INDEX "TITLE" URL". Switch with 'surf tab INDEX'.

Example:
  surf tabs`,
		flags: noArgs(reqTabs),
	},
	{
		name:    "tab",
		summary: "session: switch to another tab",
		usage: `Usage: surf tab INDEX [--session NAME]

Makes the tab at INDEX (0 is the first, as 'surf tabs' lists them) active.

Example:
  surf tab 1`,
		flags: simple(1, "it takes a tab index", func(args []string) (daemon.Request, string) {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 0 {
				return daemon.Request{}, fmt.Sprintf("%q is not a tab index (0, 1, ...)", args[0])
			}
			return request("switch_tab", map[string]any{"index": n}), ""
		}),
	},
	{
		name:    "screenshot",
		summary: "session: save the set-of-mark screenshot (or a plain one) to a file",
		usage: `Usage: surf screenshot FILE [--plain] [--session NAME]

Saves the set-of-mark screenshot of the latest observation (the numbered
boxes match the ids it listed) to FILE: PNG if FILE ends in .png, else
JPEG. With --plain, a screenshot of the viewport now, without marks.

Flags:
  --plain             a plain screenshot of the viewport, without marks

Example:
  surf screenshot page.png`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			plain := fs.Bool("plain", false, "")
			return func(args []string) (daemon.Request, string) {
				if len(args) != 1 {
					return daemon.Request{}, "it takes the file to write"
				}
				return request(reqScreenshot, map[string]any{"plain": *plain}), ""
			}
		},
		after: func(cli *CLI, args []string, resp *daemon.Response) error {
			if len(resp.Image) == 0 {
				return errors.New("the session sent no image")
			}
			if err := saveImage(args[0], &websurfer.Observation{Image: resp.Image}); err != nil {
				return fmt.Errorf("saving the screenshot: %w", err)
			}
			fmt.Fprintf(cli.Stdout, "saved %s to %s\n", resp.Text, args[0])
			return nil
		},
	},
	{
		name:    "read",
		summary: "session: read the page's main content as markdown, a page at a time",
		usage: `Usage: surf read [PAGE] [--session NAME]

Prints the main content of the active tab as markdown, including what is
outside the viewport, split into pages; PAGE (default 1) picks one.

Example:
  surf read
  surf read 2`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
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
		name:    "key",
		summary: "session: press keys (Enter, Tab, Control+A, ...) in order",
		usage: `Usage: surf key KEY... [--session NAME]

Presses keys one after another in the focused element; a chord is written
with +. Key names are Playwright's: Enter, Tab, Escape, Backspace,
ArrowDown, PageDown, Control+A, Shift+Tab, ...

Example:
  surf key Control+A Backspace`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
			return func(args []string) (daemon.Request, string) {
				if len(args) == 0 {
					return daemon.Request{}, "it takes at least one key"
				}
				return request("keypress", map[string]any{"keys": args}), ""
			}
		},
	},
	{
		name:    "hover",
		summary: "session: move the mouse over an element",
		usage: `Usage: surf hover ID [--session NAME]

Moves the mouse over the element with id ID, for example to open a menu.

Example:
  surf hover 3`,
		flags: targetTool("hover"),
	},
	{
		name:    "dialog",
		summary: "session: accept or dismiss the confirm or prompt dialog the page waits on",
		usage: `Usage: surf dialog accept|dismiss [TEXT] [--session NAME]

Answers the dialog the observation reports pending (a confirm or a
prompt): accept presses OK, dismiss presses Cancel. TEXT is a prompt's
answer when accepting (without it, the prompt's default text). Any other
action dismisses a pending dialog instead.

Example:
  surf dialog accept
  surf dialog accept "Ada"`,
		flags: func(fs *pflag.FlagSet) func([]string) (daemon.Request, string) {
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
		name:    "upload",
		summary: "session: choose a file for a file input",
		usage: `Usage: surf upload ID FILE [--session NAME]

Puts FILE into the file input with id ID. FILE is relative to the uploads
directory the session was opened with ('surf open --uploads DIR'); files
outside it cannot be uploaded.

Example:
  surf upload 5 report.pdf`,
		flags: simple(2, "it takes an element id and a file", func(args []string) (daemon.Request, string) {
			id, msg := elementID(args[0])
			if msg != "" {
				return daemon.Request{}, msg
			}
			return request("upload_file", map[string]any{"target_id": id, "path": args[1]}), ""
		}),
	},
}
