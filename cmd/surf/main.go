// Command surf lets language-model agents browse the web in a sandboxed,
// policy-gated Chromium.
//
// It drives a real Chromium through Playwright, shows the page to a model
// as an accessibility-tree observation plus a set-of-mark screenshot, and
// acts through a fixed, policy-gated action space: as a CLI, an MCP server
// (surf serve) or background sessions (surf open, surf click, ...).
//
// Usage:
//
//	surf <command> [flags] [args]
//
// Run "surf help" for the list of commands and "surf help <command>" for the
// flags of one. Errors are printed as "surf: error: ..." on stderr, followed
// by "surf: hint: ..." when there is something the user can do about it.
//
// Exit codes: 0 success; 1 the command failed; 2 bad usage or a bad policy.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"

	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/sandbox"

	"go.opentelemetry.io/otel/trace"
)

// command is one surf subcommand. Each lives in its own cmd_*.go file and
// registers itself from init, so commands can be added without touching this
// file.
type command struct {
	name    string
	summary string // one line for "surf help"
	usage   string // full usage with an example, printed by "surf help NAME" and on usage errors
	run     func(ctx context.Context, cli *CLI, args []string) error
	hidden  bool
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("surf: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// CLI carries what a command may touch of the outside world, so tests can
// run commands in-process.
type CLI struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Logger *slog.Logger
	// Tracer makes the command's spans (startTracing sets it from the
	// OTEL_* variables); nil means none.
	Tracer trace.TracerProvider
}

// usageError is bad usage of a command: exit code 2, with the usage text.
type usageError struct {
	cmd *command
	msg string
	// hint, when set, is printed instead of the whole usage text: the
	// mistake is small (a mistyped flag) and the hint names the fix.
	hint string
}

func (e *usageError) Error() string { return e.msg }

// helpRequested is the usageError message for "-h"/"--help": usage goes to
// stdout and the exit code is 0.
const helpRequested = "help requested"

func usagef(c *command, format string, args ...any) error {
	return &usageError{cmd: c, msg: fmt.Sprintf(format, args...)}
}

// hintError is an error with advice for the user, printed as "surf: hint:".
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hintError{err: err, hint: hint}
}

// exitError ends the command with a specific exit code, after printing err
// (when non-nil).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}
func (e *exitError) Unwrap() error { return e.err }

func main() {
	sandbox.RunLauncher() // first: this binary is also the browser's launcher
	os.Exit(Main())
}

// tuneGC paces Go's collector for surf's work: every observation allocates
// a few megabytes (the page's snapshot, the screenshot's coefficients) and
// at Go's default pace a collection, whose dedicated worker takes one of a
// small machine's cores, runs during most of them, competing with the
// browser's capture. Collecting at 400% growth instead, with a soft limit
// of 1 GiB on the heap, measured observe/raw p50 1.44, 1.47, 1.49 against
// 1.68, 1.58, 1.55 at the default, run for run. GOGC and GOMEMLIMIT in the
// environment win.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// Main runs surf with the process's arguments and returns the exit code.
func Main() int {
	tuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cli := &CLI{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	return cli.Run(ctx, os.Args[1:])
}

// Run runs one surf command line and returns the exit code.
func (cli *CLI) Run(ctx context.Context, args []string) int {
	if cli.Getenv == nil {
		cli.Getenv = func(string) string { return "" }
	}
	if cli.Logger == nil {
		level := slog.LevelWarn
		if cli.Getenv("SURF_DEBUG") != "" {
			level = slog.LevelDebug
		}
		cli.Logger = slog.New(slog.NewTextHandler(cli.Stderr, &slog.HandlerOptions{Level: level}))
	}
	if len(args) == 0 {
		cli.printHelp()
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				fmt.Fprintln(cli.Stdout, strings.TrimSpace(c.usage))
				return 0
			}
			fmt.Fprintf(cli.Stderr, "surf: error: unknown command %q\nsurf: hint: %s\n", args[1], unknownCommandHint(args[1]))
			return 2
		}
		cli.printHelp()
		return 0
	case "-v", "--version", "version":
		fmt.Fprintln(cli.Stdout, "surf", version())
		return 0
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(cli.Stderr, "surf: error: unknown command %q\nsurf: hint: %s\n", name, unknownCommandHint(name))
		return 2
	}
	flush, err := cli.startTracing(ctx)
	if err != nil {
		return cli.report(err)
	}
	defer flush()
	return cli.report(c.run(ctx, cli, args[1:]))
}

// report prints err the surf way and returns the exit code for it.
func (cli *CLI) report(err error) int {
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	var ue *usageError
	if errors.As(err, &ue) {
		if ue.msg == helpRequested {
			fmt.Fprintln(cli.Stdout, strings.TrimSpace(ue.cmd.usage))
			return 0
		}
		if ue.hint != "" {
			fmt.Fprintf(cli.Stderr, "surf: error: %s\nsurf: hint: %s\n", termsafe.Lines(ue.msg), termsafe.Lines(ue.hint))
			return 2
		}
		fmt.Fprintf(cli.Stderr, "surf: error: %s\n\n%s\n", termsafe.Lines(ue.msg), strings.TrimSpace(ue.cmd.usage))
		return 2
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(cli.Stderr, "surf: interrupted")
		return 130
	}
	// Errors carry page, file and peer text: escaped, as all such output.
	fmt.Fprintf(cli.Stderr, "surf: error: %s\n", termsafe.Lines(err.Error()))
	var he *hintError
	if errors.As(err, &he) {
		for _, line := range strings.Split(he.hint, "\n") {
			fmt.Fprintf(cli.Stderr, "surf: hint: %s\n", termsafe.String(line))
		}
	} else if hint := hintFor(err); hint != "" {
		fmt.Fprintf(cli.Stderr, "surf: hint: %s\n", termsafe.Lines(hint))
	}
	return code
}

// hintFor finds advice for errors that carry their own hint (a Hint() method),
// such as the sandbox's "machine not ready" error.
func hintFor(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

func (cli *CLI) printHelp() {
	fmt.Fprintln(cli.Stdout, "surf: a sandboxed browser agent runtime\n\nUsage: surf <command> [flags] [args]\n       surf <session command> [args] [--session NAME]\n\n"+
		"A background session: 'surf open URL' starts it, the commands marked\n\"session:\" act in it (--session NAME, or $SURF_SESSION, for another\nthan \"default\"), 'surf close' ends it.\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(cli.Stdout, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(cli.Stdout, "\nRun 'surf help <command>' for its flags and an example.")
}

func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
