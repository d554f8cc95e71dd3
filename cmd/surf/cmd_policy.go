package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/cmd/surf/internal/policycheck"
	"github.com/surfkit/surf/policy"
)

var policyUsage = helpText("policy")

func init() {
	register(&command{
		name:    "policy",
		summary: "judge URLs by a policy (surf policy check URL...)",
		usage:   policyUsage,
		run:     runPolicy,
	})
}

func runPolicy(ctx context.Context, cli *CLI, args []string) error {
	c := commands["policy"]
	if len(args) == 0 {
		return usagef(c, "missing subcommand (want: check)")
	}
	switch args[0] {
	case "check":
		return runPolicyCheck(ctx, cli, c, args[1:])
	case "-h", "--help", "help":
		return usagef(c, helpRequested)
	}
	return usagef(c, "unknown subcommand %q (want: check)", args[0])
}

func runPolicyCheck(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	pf := addPolicyFlags(fs)
	base := fs.String("base", "", "resolve relative URLs against `URL`")
	kindName := fs.String("context", "navigation", "navigation or request")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	kind, err := policy.ParseKind(*kindName)
	if err != nil {
		return usagef(c, "--context: %v", err)
	}
	urls := fs.Args()
	if len(urls) == 0 {
		return usagef(c, "no URLs to check (give URLs, or - to read JSON lines from stdin)")
	}
	stdin := 0
	for _, u := range urls {
		if u == "-" {
			stdin++
		}
	}
	if stdin > 1 {
		return usagef(c, "- (stdin) may be given only once")
	}
	p, err := pf.policy(cli.Getenv)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(cli.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	emit := func(line policycheck.Line) error { return enc.Encode(line) }
	// Advice for denied command-line URLs goes to stderr after the lines,
	// once per hint.
	var hints []string
	seen := map[string]bool{}
	for _, u := range urls {
		if err := ctx.Err(); err != nil {
			return err
		}
		if u != "-" {
			d := p.DecideURL(kind, u, *base)
			if h := pf.hint(d); h != "" && !seen[h] {
				seen[h] = true
				hints = append(hints, h)
			}
			if err := emit(policycheck.LineOf(u, d)); err != nil {
				return err
			}
			continue
		}
		if err := policycheck.Stdin(ctx, cli.Stdin, p, *base, kind, emit); err != nil {
			return err
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	for _, h := range hints {
		fmt.Fprintf(cli.Stderr, "surf: hint: %s\n", h)
	}
	return nil
}
