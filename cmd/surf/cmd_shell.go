package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/chzyer/readline"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
	"golang.org/x/term"
)

func init() {
	c := &command{
		name:    "shell",
		summary: "an interactive session: one action per line, each printing the new observation",
		usage: `Usage: surf shell [URL] [--out DIR] [flags]

Opens a session (on URL if given) and reads one action per line: a tool name
and its arguments, positional in the tool's order or as --name=value.
Each action prints the new observation and saves its set-of-mark image in
DIR (default ./surf-shell).

  click 12
  input_text 7 "hello world" --press_enter=false
  select_option 4 Blue
  keypress Control+A Backspace
  page_down
  tabs                 the open tabs
  observe              observe again
  help [TOOL]          the tools offered now, or one tool's arguments
  quit

Flags:
  --out DIR           where the set-of-mark images go (default surf-shell)
` + browserFlagsHelp + `
` + stateFlagsHelp + `

Example:
  surf shell https://example.com/`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) (err error) {
		fs := newFlags(c)
		out := fs.String("out", "surf-shell", "")
		bf := addBrowserFlags(fs)
		bf.state = addStateFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() > 1 {
			return usagef(c, "shell takes at most one URL")
		}
		b, err := bf.open(ctx, cli, openOptions{})
		if err != nil {
			return err
		}
		defer b.closeInto(&err)
		sh := &shell{cli: cli, b: b, reg: b.surf.Tools(), out: *out}
		if fs.NArg() == 1 {
			if err := b.checkURL(fs.Arg(0)); err != nil {
				return err
			}
			sh.exec(ctx, "visit_url "+quoteArg(fs.Arg(0)))
		} else if obs, err := b.surf.Observe(ctx); err == nil {
			sh.show(&websurfer.ActionResult{Summary: "a blank tab is open", Observation: obs})
		}
		return sh.loop(ctx)
	}
	register(c)
}

type shell struct {
	cli  *CLI
	b    *browser
	reg  *tools.Registry
	out  string
	step int
}

// loop reads lines: with line editing and history on a terminal, plainly
// otherwise (scripts, tests).
func (sh *shell) loop(ctx context.Context) error {
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
		sh.exec(ctx, line)
	}
}

func (sh *shell) reader() (func() (string, error), func(), error) {
	if f, ok := sh.cli.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		hist := ""
		if dir, err := os.UserCacheDir(); err == nil {
			hist = filepath.Join(dir, "surf", "shell_history")
			os.MkdirAll(filepath.Dir(hist), 0o755)
		}
		rl, err := readline.NewEx(&readline.Config{
			Prompt:          "surf> ",
			HistoryFile:     hist,
			AutoComplete:    sh.completer(),
			InterruptPrompt: "^C",
			EOFPrompt:       "quit",
			Stdout:          sh.cli.Stdout,
			Stderr:          sh.cli.Stderr,
		})
		if err != nil {
			return nil, nil, err
		}
		return rl.Readline, func() { rl.Close() }, nil
	}
	sc := bufio.NewScanner(sh.cli.Stdin)
	sc.Buffer(make([]byte, 64<<10), 2<<20)
	return func() (string, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", err
			}
			return "", io.EOF
		}
		fmt.Fprintf(sh.stdout(), "surf> %s\n", sc.Text())
		return sc.Text(), nil
	}, func() {}, nil
}

func (sh *shell) completer() readline.AutoCompleter {
	var items []readline.PrefixCompleterInterface
	for _, n := range append(sh.reg.Names(), "tabs", "observe", "help", "quit") {
		items = append(items, readline.PcItem(n))
	}
	return readline.NewPrefixCompleter(items...)
}

// exec runs one line.
func (sh *shell) exec(ctx context.Context, line string) {
	words, err := splitWords(line)
	if err != nil {
		fmt.Fprintf(sh.stdout(), "error: %v\n", err)
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
		obs, err := sh.b.surf.Observe(ctx)
		if err != nil {
			fmt.Fprintf(sh.stdout(), "error: %v\n", err)
			return
		}
		for _, t := range obs.Tabs {
			mark := " "
			if t.Active {
				mark = "*"
			}
			fmt.Fprintf(sh.stdout(), "%s %d %q %s\n", mark, t.Index, t.Title, t.URL)
		}
		return
	case "observe":
		obs, err := sh.b.surf.Observe(ctx)
		if err != nil {
			fmt.Fprintf(sh.stdout(), "error: %v\n", err)
			return
		}
		sh.show(&websurfer.ActionResult{Summary: "observed", Observation: obs})
		return
	}
	name, ok := sh.reg.Resolve(words[0])
	if !ok {
		fmt.Fprintf(sh.stdout(), "error: unknown action %q; type help for the list\n", words[0])
		return
	}
	args, err := toolArgs(name, words[1:])
	if err != nil {
		fmt.Fprintf(sh.stdout(), "error: %v\n", err)
		return
	}
	res, err := sh.reg.Call(ctx, name, args, sh.b.surf.Offered()...)
	if err != nil {
		fmt.Fprintf(sh.stdout(), "error: %v\n", err)
		return
	}
	if res.IsError {
		fmt.Fprintf(sh.stdout(), "error: %s\n", res.Text)
		return
	}
	sh.step++
	fmt.Fprintln(sh.stdout(), res.Text)
	for _, img := range res.Images {
		sh.save(img.Data)
	}
}

func (sh *shell) show(r *websurfer.ActionResult) {
	sh.step++
	fmt.Fprintln(sh.stdout(), r.Text())
	if r.Observation != nil {
		sh.save(r.Observation.Image)
	}
}

func (sh *shell) save(jpegData []byte) {
	if len(jpegData) == 0 || sh.out == "" {
		return
	}
	if err := os.MkdirAll(sh.out, 0o755); err != nil {
		fmt.Fprintf(sh.stdout(), "error: %v\n", err)
		return
	}
	p := filepath.Join(sh.out, fmt.Sprintf("step-%03d.jpg", sh.step))
	if err := os.WriteFile(p, jpegData, 0o644); err != nil {
		fmt.Fprintf(sh.stdout(), "error: %v\n", err)
		return
	}
	fmt.Fprintf(sh.stdout(), "[set-of-mark image: %s]\n", p)
}

func (sh *shell) help(args []string) {
	if len(args) > 0 {
		name, ok := sh.reg.Resolve(args[0])
		t, _ := sh.reg.Lookup(name)
		if !ok || t == nil {
			fmt.Fprintf(sh.stdout(), "error: unknown action %q\n", args[0])
			return
		}
		fmt.Fprintf(sh.stdout(), "%s\n  %s\n", t.Usage(), t.Description())
		return
	}
	offered := sh.b.surf.Offered()
	sort.Strings(offered)
	fmt.Fprintln(sh.stdout(), "actions offered on this page:")
	for _, n := range offered {
		if t, ok := sh.reg.Lookup(n); ok {
			fmt.Fprintf(sh.stdout(), "  %s\n", t.Usage())
		}
	}
	fmt.Fprintln(sh.stdout(), "also: tabs, observe, help TOOL, quit")
}

// toolArgs maps shell words onto a tool's input struct: positional words
// fill the fields in order (a list field takes all the rest), --name=value
// sets a field by its JSON name.
func toolArgs(name string, words []string) (json.RawMessage, error) {
	typ, ok := tools.CatalogInput(name)
	if !ok {
		return nil, fmt.Errorf("unknown action %q", name)
	}
	type field struct {
		name string
		kind reflect.Type
	}
	var fields []field
	byName := map[string]reflect.Type{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		jn := strings.Split(f.Tag.Get("json"), ",")[0]
		if jn == "" || jn == "-" {
			continue
		}
		fields = append(fields, field{jn, f.Type})
		byName[jn] = f.Type
	}
	byName["reasoning"] = reflect.TypeOf("")
	out := map[string]any{}
	pos := 0
	for i := 0; i < len(words); i++ {
		w := words[i]
		if strings.HasPrefix(w, "--") {
			k, v, hasV := strings.Cut(w[2:], "=")
			t, ok := byName[k]
			if !ok {
				return nil, fmt.Errorf("%s has no argument %q", name, k)
			}
			if !hasV {
				if t.Kind() == reflect.Bool {
					v = "true"
				} else if i+1 < len(words) {
					i++
					v = words[i]
				} else {
					return nil, fmt.Errorf("--%s needs a value", k)
				}
			}
			val, err := convert(k, t, []string{v})
			if err != nil {
				return nil, err
			}
			out[k] = val
			continue
		}
		if pos >= len(fields) {
			return nil, fmt.Errorf("%s takes %d arguments; %q is one too many", name, len(fields), w)
		}
		f := fields[pos]
		pos++
		if f.kind.Kind() == reflect.Slice {
			rest := []string{w}
			for i+1 < len(words) && !strings.HasPrefix(words[i+1], "--") {
				i++
				rest = append(rest, words[i])
			}
			val, err := convert(f.name, f.kind, rest)
			if err != nil {
				return nil, err
			}
			out[f.name] = val
			continue
		}
		val, err := convert(f.name, f.kind, []string{w})
		if err != nil {
			return nil, err
		}
		out[f.name] = val
	}
	return json.Marshal(out)
}

func convert(name string, t reflect.Type, vs []string) (any, error) {
	switch t.Kind() {
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.Atoi(vs[0])
		if err != nil {
			return nil, fmt.Errorf("%s must be a whole number, not %q", name, vs[0])
		}
		return n, nil
	case reflect.Float64, reflect.Float32:
		f, err := strconv.ParseFloat(vs[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s must be a number, not %q", name, vs[0])
		}
		return f, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(vs[0])
		if err != nil {
			return nil, fmt.Errorf("%s must be true or false, not %q", name, vs[0])
		}
		return b, nil
	case reflect.Slice:
		return vs, nil
	default:
		return vs[0], nil
	}
}

// splitWords splits a line like a shell: spaces separate words, quotes
// (single or double) group them, a backslash escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	esc := false
	for _, r := range s {
		switch {
		case esc:
			cur.WriteRune(r)
			esc = false
		case r == '\\' && quote != '\'':
			esc, inWord = true, true
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c quote", quote)
	}
	if esc {
		return nil, errors.New("a line cannot end with a backslash")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func quoteArg(s string) string { return strconv.Quote(s) }

// stdout is where the shell prints: page text with its control characters
// escaped (readline gets the terminal itself).
func (sh *shell) stdout() io.Writer { return termsafe.Writer(sh.cli.Stdout) }
