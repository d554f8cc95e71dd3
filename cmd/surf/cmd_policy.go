package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"

	"github.com/surfkit/surf/cmd/surf/internal/policycheck"
	"github.com/surfkit/surf/policy"
)

const policyUsage = `
Usage: surf policy check [--policy FILE | --allow LIST --deny LIST] [--base URL] [--context navigation|request] URL...
       surf policy check [flags] -      (read JSON lines {"url", "base", "context"} from stdin)

Judge URLs by a policy, without a browser, and print one JSON line per URL:
  {"url":..., "host":..., "decision":"allow|deny|ask", "rule":..., "reason":...}
"host" is the host as the URL Standard (and Chromium) reads it, empty when
the URL does not parse. URLs are resolved against --base as a link on that
page would be. --context request judges a subresource or WebSocket request
instead of a navigation.

Policy flags (shared by every browser command):
  --policy FILE   a YAML policy file; --allow and --deny narrow it, never widen it
  --allow LIST    hosts that may be reached, comma-separated; "*" is any public host;
                  a private address needs its IP or CIDR (127.0.0.1, 10.0.0.0/8)
  --deny LIST     hosts that may never be reached
With no policy flags, public hosts are allowed and private networks denied.

Patterns: example.com (exactly), *.example.com (subdomains only), * (any public
host), 127.0.0.1 or any IPv4 form, [::1], 10.0.0.0/8, example.com:8443,
example.com/docs/*, https://example.com.

Other flags:
  --base URL      resolve relative URLs against URL
  --context C     navigation (default) or request

Exit status: 0 when every URL was judged (whatever the decisions), 2 for bad
usage or a bad policy (the file, line and problem are printed).

Examples:
  surf policy check https://example.com/ http://127.0.0.1:8080/
  surf policy check --allow 127.0.0.1 http://2130706433/
  surf policy check --policy policy.yaml --base https://example.com/app/ ../admin
  printf '{"url":"https://a.test/\\n"}\n' | surf policy check -
`

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
