package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
)

// benchUsage is the usage text of surf bench.
var benchUsage = helpText("bench")

func init() {
	c := &command{
		name:    "bench",
		summary: "measure observation speed and size, the server under concurrent sessions, the board, or actions against Playwright MCP",
		usage:   benchUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		if len(args) > 0 && args[0] == "sessions" {
			return benchSessions(ctx, cli, c, args[1:])
		}
		if len(args) > 0 && args[0] == "board" {
			return benchBoard(ctx, cli, c, args[1:])
		}
		if len(args) > 0 && args[0] == "actions" {
			return benchActions(ctx, cli, c, args[1:])
		}
		if len(args) == 0 || args[0] != "observe" {
			return usagef(c, "bench needs a subcommand: observe, sessions, board or actions")
		}
		return benchObserve(ctx, cli, c, args[1:])
	}
	register(c)
}

// benchObserve is surf bench observe.
func benchObserve(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	corpus := fs.String("corpus", "", "")
	rounds := fs.Int("rounds", 3, "")
	asJSON := fs.Bool("json", false, "")
	phases := fs.Bool("phases", false, "")
	cpuprofile := fs.String("cpuprofile", "", "")
	bf := addBrowserFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if *corpus == "" {
		return usagef(c, "--corpus DIR is required")
	}
	if *rounds < 1 || *rounds > 100 {
		return usagef(c, "--rounds must be 1 to 100")
	}
	pages, err := bench.CorpusPages(*corpus)
	if err != nil {
		return err
	}
	srv, err := bench.ServeCorpus(*corpus)
	if err != nil {
		return err
	}
	defer srv.Close()
	base, err := originPolicy(srv.Listener.Addr().String())
	if err != nil {
		return err
	}
	b, err := bf.open(ctx, cli, openOptions{base: base})
	if err != nil {
		return err
	}
	defer b.Close()
	if *cpuprofile != "" {
		stop, err := bench.StartCPUProfile(*cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	res, err := bench.Observe(ctx, b.Surfer(), bench.ObserveConfig{
		Base: srv.URL, Pages: pages, Rounds: *rounds,
		Skipped: func(name string, err error) { fmt.Fprintf(cli.Stderr, "surf: skipping %s: %v\n", name, err) },
		Page: func(p bench.ObservePage) {
			if !*asJSON {
				bench.WriteObservePage(cli.Stderr, p)
			}
		},
	})
	if err != nil {
		return err
	}
	return printObserveBench(cli, res, *phases, *asJSON)
}

// printObserveBench prints surf bench observe's results.
func printObserveBench(cli *CLI, res *bench.ObserveResult, phases, asJSON bool) error {
	if phases {
		bench.WritePhases(cli.Stderr, res)
	}
	if asJSON {
		return json.NewEncoder(cli.Stdout).Encode(res)
	}
	bench.WriteObserve(cli.Stdout, res)
	return nil
}
