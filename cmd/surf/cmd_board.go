package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/board"
)

// boardSub is one "surf board" subcommand. Its command carries the
// subcommand's own usage text, for usage errors and --help.
type boardSub struct {
	cmd *command
	run func(ctx context.Context, cli *CLI, c *command, args []string) error
}

// boardSubs are the subcommands of surf board, by name. A new subcommand
// lives in a file of its own (cmd_board_NAME.go) that registers it from its
// init with addBoardSub, and gets a line in boardUsage.
var boardSubs = map[string]*boardSub{}

// addBoardSub registers the subcommand "surf board NAME".
func addBoardSub(name, usage string, run func(ctx context.Context, cli *CLI, c *command, args []string) error) {
	if _, dup := boardSubs[name]; dup {
		panic("surf board " + name + " is registered twice")
	}
	boardSubs[name] = &boardSub{cmd: &command{name: "board " + name, usage: usage}, run: run}
}

var boardUsage = helpText("board")

func init() {
	c := &command{
		name:    "board",
		summary: "the task board: add, list, show, wait for, cancel, watch and report tasks",
		usage:   boardUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		if len(args) == 0 {
			return usagef(c, "no board command given")
		}
		name := args[0]
		if name == "-h" || name == "--help" || name == "help" {
			return &usageError{cmd: c, msg: helpRequested}
		}
		s, ok := boardSubs[name]
		if !ok {
			return unknownBoardSub(c, name)
		}
		return s.run(ctx, cli, s.cmd, args[1:])
	}
	register(c)
}

// unknownBoardSub is the usage error of "surf board NAME" for a NAME that
// is no subcommand.
func unknownBoardSub(c *command, name string) error {
	names := slices.Sorted(maps.Keys(boardSubs))
	hint := "the board commands are " + strings.Join(names, ", ") + " (run 'surf help board')"
	if strings.HasPrefix(name, "-") {
		return &usageError{cmd: c, msg: fmt.Sprintf("%s comes after the board command, as in 'surf board list %s'", name, name), hint: hint}
	}
	if sg := suggest(name, names); sg != "" {
		hint = fmt.Sprintf("did you mean 'surf board %s'? (%s)", sg, hint)
	}
	return &usageError{cmd: c, msg: fmt.Sprintf("unknown board command %q", name), hint: hint}
}

// notFoundHint adds advice to an unknown task id.
func notFoundHint(err error) error {
	if errors.Is(err, board.ErrNotFound) {
		return withHint(err, "'surf board list' shows the tasks on this board (check --data or --nats)")
	}
	return err
}

func printBoardJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// selection is the --state and --label flags that list and export share.
type selection struct{ states, labels *[]string }

func addSelectionFlags(fs *pflag.FlagSet) selection {
	return selection{fs.StringArray("state", nil, ""), fs.StringArray("label", nil, "")}
}

// records reads the board's tasks and keeps those the flags select; all
// is every task on the board.
func (sel selection) records(ctx context.Context, cli *CLI, c *command, bf *boardFlags) (recs, all []board.Record, err error) {
	states, err := board.ParseStates(*sel.states...)
	if err != nil {
		return nil, nil, usagef(c, "--%v", err)
	}
	labels, err := board.ParseLabels(*sel.labels...)
	if err != nil {
		return nil, nil, usagef(c, "--%v", err)
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return nil, nil, err
	}
	defer b.Close()
	if all, err = b.List(ctx); err != nil {
		return nil, nil, err
	}
	return board.Filter{States: states, Labels: labels}.Select(all), all, nil
}
