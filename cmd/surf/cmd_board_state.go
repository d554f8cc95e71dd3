package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/worker"
)

func init() { addBoardSub("state", boardStateUsage, boardState) }

var boardStateUsage = helpText("board-state")

// boardState is surf board state.
func boardState(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	bf := addBoardFlags(fs)
	asJSON := fs.Bool("json", false, "")
	recipients := fs.StringArrayP("recipient", "r", nil, "")
	recipientFiles := fs.StringArrayP("recipients-file", "R", nil, "")
	output := fs.StringP("output", "o", "", "")
	sf := addStateFlags(fs)
	fs.Lookup("state").Hidden = true
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if sf.Path != "" {
		return usagef(c, "name the file as 'surf board state put NAME FILE', not with --state")
	}
	verb, rest := "", fs.Args()
	if len(rest) > 0 {
		verb, rest = rest[0], rest[1:]
	}
	onlyFor := func(v string, names ...string) error {
		for _, n := range names {
			if fs.Changed(n) && verb != v {
				return usagef(c, "--%s goes with 'surf board state %s'", n, v)
			}
		}
		return nil
	}
	if err := onlyFor("put", "recipient", "recipients-file", "state-passphrase-file", "state-identity"); err != nil {
		return err
	}
	if err := onlyFor("keygen", "output"); err != nil {
		return err
	}
	switch {
	case verb == "keygen" && len(rest) == 0:
		return stateKeygen(cli, c, *output)
	case verb == "put" && len(rest) == 2:
		keys, err := readRecipients(*recipients, *recipientFiles)
		if err != nil {
			return err
		}
		file, err := sf.key(rest[1], cli.Getenv)
		if err != nil {
			return err
		}
		return statePut(ctx, cli, bf, rest[0], file, keys, *asJSON)
	case verb == "list" && len(rest) == 0:
		return stateList(ctx, cli, bf, *asJSON)
	case verb == "rm" && len(rest) == 1:
		return stateRemove(ctx, cli, bf, rest[0])
	}
	return usagef(c, "the state commands are 'put NAME FILE', 'list', 'rm NAME' and 'keygen -o FILE'")
}

// readRecipients are the --recipient keys and the lines of the
// --recipients-file files.
func readRecipients(keys, files []string) ([]string, error) {
	out := append([]string(nil), keys...)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--recipients-file: %w", err)
		}
		out = append(out, string(b))
	}
	if len(out) == 0 {
		return nil, &exitError{code: 2, err: withHint(fmt.Errorf("no recipient: a saved state is encrypted to the public keys of the workers that may use it"),
			"give --recipient age1... (as 'surf board state keygen' prints it on a worker) or --recipients-file FILE")}
	}
	return out, nil
}

func stateKeygen(cli *CLI, c *command, output string) error {
	if output == "" {
		return usagef(c, "keygen writes the identity to a file: -o FILE")
	}
	pub, err := worker.KeyGen(output)
	if err != nil {
		return fmt.Errorf("keygen: %w", err)
	}
	fmt.Fprintln(cli.Stdout, pub)
	fmt.Fprintf(cli.Stderr, "surf: the identity is in %s (keep it secret); start workers with --state-identity %s and put states for %s\n",
		termsafe.String(output), termsafe.String(output), pub)
	return nil
}

func statePut(ctx context.Context, cli *CLI, bf *boardFlags, name string, file sandbox.StateFile, keys []string, asJSON bool) error {
	if err := board.CheckStateName(name); err != nil {
		return &exitError{code: 2, err: err}
	}
	rs, err := worker.ParseRecipients(keys...)
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	st, _, err := sandbox.ReadState(file)
	if err != nil {
		return stateError(err)
	}
	sealed, info, err := worker.SealState(name, st, rs)
	if err != nil {
		return err
	}
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.PutState(ctx, info, sealed); err != nil {
		return err
	}
	if asJSON {
		return printBoardJSON(cli.Stdout, info)
	}
	fmt.Fprintf(cli.Stdout, "stored %s: %s, %s, encrypted to %s\n", name, plural(info.Cookies, "cookie"),
		plural(info.Origins, "origin"), plural(len(info.Recipients), "recipient"))
	return nil
}

func stateList(ctx context.Context, cli *CLI, bf *boardFlags, asJSON bool) error {
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	list, err := b.States(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		if list == nil {
			list = []board.StateInfo{}
		}
		return printBoardJSON(cli.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(cli.Stderr, "surf: no saved states on this board ('surf board state put NAME FILE' stores one)")
		return nil
	}
	w := tabwriter.NewWriter(cli.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tCOOKIES\tORIGINS\tPUT\tHOSTS\tRECIPIENTS")
	for _, s := range list {
		fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\n", termsafe.String(s.Name), s.Cookies, s.Origins, s.Put.Format(time.RFC3339),
			termsafe.String(strings.Join(s.Hosts, ",")), termsafe.String(strings.Join(s.Recipients, ",")))
	}
	return w.Flush()
}

func stateRemove(ctx context.Context, cli *CLI, bf *boardFlags, name string) error {
	b, err := bf.open(ctx, cli, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.RemoveState(ctx, name); err != nil {
		return err
	}
	fmt.Fprintf(cli.Stdout, "removed %s\n", name)
	return nil
}
