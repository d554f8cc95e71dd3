// Package shell is the read-act-print loop of surf shell: one action of
// surf's action space a line, each printing the new observation and saving
// its set-of-mark image.
//
// A line is a tool name and its arguments, split like a shell's words
// (SplitWords) and mapped onto the tool's input struct (ToolArgs):
// positional in the struct's field order, or as --name=value. New takes
// an open surfer; Loop reads lines until quit, end of input or the
// context's end:
//
//	sh := shell.New(shell.Config{Surfer: s, Stdin: os.Stdin, Stdout: os.Stdout, Dir: "shots"})
//	sh.Exec(ctx, "visit_url "+shell.Quote(url))
//	err := sh.Loop(ctx)
package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/chzyer/readline"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
	"golang.org/x/term"
)

// Config is what a shell reads from, writes to and acts on.
type Config struct {
	// Surfer is the open session the actions run in; required.
	Surfer *websurfer.Surfer
	// Stdin holds the lines; a terminal gets line editing and history.
	// Nil reads nothing.
	Stdin io.Reader
	// Stdout and Stderr take the shell's output (page text with its
	// control characters escaped); nil discards it.
	Stdout, Stderr io.Writer
	// Dir is where the set-of-mark images go, one step-NNN.jpg a step;
	// "" saves none.
	Dir string
	// HistoryFile keeps the line history on a terminal; "" keeps none.
	HistoryFile string
}

// Shell runs the lines of one session.
type Shell struct {
	cfg  Config
	reg  *tools.Registry
	out  io.Writer
	step int
}

// New returns a shell on cfg.Surfer.
func New(cfg Config) *Shell {
	if cfg.Stdin == nil {
		cfg.Stdin = strings.NewReader("")
	}
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	return &Shell{cfg: cfg, reg: cfg.Surfer.Tools(), out: termsafe.Writer(cfg.Stdout)}
}

// Loop reads lines and runs them until quit or exit, the end of the
// input, an interrupt or the end of ctx: with line editing and history on
// a terminal, plainly otherwise (scripts, tests).
func (sh *Shell) Loop(ctx context.Context) error {
	next, closeFn, err := sh.reader()
	if err != nil {
		return err
	}
	defer closeFn()
	for {
		if ctx.Err() != nil {
			return nil
		}
		line, err := next()
		if errors.Is(err, io.EOF) || errors.Is(err, readline.ErrInterrupt) {
			return nil
		}
		if err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if line == "quit" || line == "exit" {
			return nil
		}
		sh.Exec(ctx, line)
	}
}

func (sh *Shell) reader() (func() (string, error), func(), error) {
	if f, ok := sh.cfg.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if sh.cfg.HistoryFile != "" {
			os.MkdirAll(filepath.Dir(sh.cfg.HistoryFile), 0o755)
		}
		rl, err := readline.NewEx(&readline.Config{
			Prompt:          "surf> ",
			HistoryFile:     sh.cfg.HistoryFile,
			AutoComplete:    sh.completer(),
			InterruptPrompt: "^C",
			EOFPrompt:       "quit",
			Stdout:          sh.cfg.Stdout,
			Stderr:          sh.cfg.Stderr,
		})
		if err != nil {
			return nil, nil, err
		}
		return rl.Readline, func() { rl.Close() }, nil
	}
	sc := bufio.NewScanner(sh.cfg.Stdin)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	return func() (string, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
		fmt.Fprintf(sh.out, "surf> %s\n", sc.Text())
		return sc.Text(), nil
	}, func() {}, nil
}

func (sh *Shell) completer() readline.AutoCompleter {
	var items []readline.PrefixCompleterInterface
	for _, n := range append(sh.reg.Names(), "tabs", "observe", "help", "quit") {
		items = append(items, readline.PcItem(n))
	}
	return readline.NewPrefixCompleter(items...)
}

// Exec runs one line: an action, or one of the shell's own words (help,
// tabs, observe). What goes wrong is printed as "error: ...", and the
// shell goes on.
func (sh *Shell) Exec(ctx context.Context, line string) {
	words, err := SplitWords(line)
	if err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	if len(words) == 0 {
		return
	}
	switch words[0] {
	case "help":
		sh.help(words[1:])
		return
	case "tabs":
		sh.tabs(ctx)
		return
	case "observe":
		obs, err := sh.cfg.Surfer.Observe(ctx)
		if err != nil {
			fmt.Fprintf(sh.out, "error: %v\n", err)
			return
		}
		sh.Show(&websurfer.ActionResult{Summary: "observed", Observation: obs})
		return
	}
	name, ok := sh.reg.Resolve(words[0])
	if !ok {
		fmt.Fprintf(sh.out, "error: unknown action %q; type help for the list\n", words[0])
		return
	}
	args, err := ToolArgs(name, words[1:])
	if err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	res, err := sh.reg.Call(ctx, name, args, sh.cfg.Surfer.Offered()...)
	if err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	if res.IsError {
		fmt.Fprintf(sh.out, "error: %s\n", res.Text)
		return
	}
	sh.step++
	fmt.Fprintln(sh.out, res.Text)
	for _, img := range res.Images {
		sh.save(img.Data)
	}
}

// tabs prints the open tabs, the active one marked with *.
func (sh *Shell) tabs(ctx context.Context) {
	obs, err := sh.cfg.Surfer.Observe(ctx)
	if err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	for _, t := range obs.Tabs {
		mark := " "
		if t.Active {
			mark = "*"
		}
		fmt.Fprintf(sh.out, "%s %d %q %s\n", mark, t.Index, t.Title, t.URL)
	}
}

// Show prints a result as a step of the shell and saves its image.
func (sh *Shell) Show(r *websurfer.ActionResult) {
	sh.step++
	fmt.Fprintln(sh.out, r.Text())
	if r.Observation != nil {
		sh.save(r.Observation.Image)
	}
}

func (sh *Shell) save(jpegData []byte) {
	if len(jpegData) == 0 || sh.cfg.Dir == "" {
		return
	}
	if err := os.MkdirAll(sh.cfg.Dir, 0o755); err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	p := filepath.Join(sh.cfg.Dir, fmt.Sprintf("step-%03d.jpg", sh.step))
	if err := os.WriteFile(p, jpegData, 0o644); err != nil {
		fmt.Fprintf(sh.out, "error: %v\n", err)
		return
	}
	fmt.Fprintf(sh.out, "[set-of-mark image: %s]\n", p)
}

func (sh *Shell) help(args []string) {
	if len(args) > 0 {
		name, ok := sh.reg.Resolve(args[0])
		t, _ := sh.reg.Lookup(name)
		if !ok || t == nil {
			fmt.Fprintf(sh.out, "error: unknown action %q\n", args[0])
			return
		}
		fmt.Fprintf(sh.out, "%s\n  %s\n", t.Usage(), t.Description())
		return
	}
	offered := sh.cfg.Surfer.Offered()
	sort.Strings(offered)
	fmt.Fprintln(sh.out, "actions offered on this page:")
	for _, n := range offered {
		if t, ok := sh.reg.Lookup(n); ok {
			fmt.Fprintf(sh.out, "  %s\n", t.Usage())
		}
	}
	fmt.Fprintln(sh.out, "also: tabs, observe, help TOOL, quit")
}
