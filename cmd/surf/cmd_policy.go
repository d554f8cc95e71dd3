package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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

// policyLine is one output line of "surf policy check".
type policyLine struct {
	URL      string `json:"url"`
	Host     string `json:"host"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

// policyInput is one stdin line of "surf policy check -".
type policyInput struct {
	URL     *string `json:"url"`
	Base    string  `json:"base"`
	Context string  `json:"context"`
}

// maxPolicyLine bounds one stdin line.
const maxPolicyLine = 1 << 20

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
	emit := func(line policyLine) error { return enc.Encode(line) }
	judge := func(raw, base string, kind policy.Kind) policyLine {
		d := p.DecideURL(kind, raw, base)
		return policyLine{URL: raw, Host: d.Host, Decision: d.Verdict.String(), Rule: d.Rule, Reason: d.Reason}
	}
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
			if err := emit(policyLine{URL: u, Host: d.Host, Decision: d.Verdict.String(), Rule: d.Rule, Reason: d.Reason}); err != nil {
				return err
			}
			continue
		}
		if err := checkStdin(ctx, cli.Stdin, *base, kind, judge, emit); err != nil {
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

// checkStdin judges JSON lines from r. A line that is not a JSON object
// with a string "url" (and optional string "base" and "context") gets a
// deny line with rule "input". Blank lines are skipped.
func checkStdin(ctx context.Context, r io.Reader, defBase string, defKind policy.Kind,
	judge func(raw, base string, kind policy.Kind) policyLine, emit func(policyLine) error) error {
	if r == nil {
		r = strings.NewReader("")
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readLine(br, maxPolicyLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading stdin: %w", err)
		}
		eof := errors.Is(err, io.EOF)
		if eof && len(line) == 0 && !tooLong {
			return nil
		}
		var out policyLine
		switch {
		case tooLong:
			out = inputError(n, "", fmt.Sprintf("line longer than %d bytes", maxPolicyLine))
		case len(bytes.TrimSpace(line)) == 0:
			if eof {
				return nil
			}
			continue
		default:
			out = judgeInputLine(n, line, defBase, defKind, judge)
		}
		if err := emit(out); err != nil {
			return err
		}
		if eof {
			return nil
		}
	}
}

func judgeInputLine(n int, line []byte, defBase string, defKind policy.Kind, judge func(raw, base string, kind policy.Kind) policyLine) policyLine {
	var in policyInput
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return inputError(n, "", "not a JSON object {\"url\", \"base\", \"context\"}: "+err.Error())
	}
	if dec.More() {
		return inputError(n, "", "more than one JSON value on the line")
	}
	if in.URL == nil {
		return inputError(n, "", `missing "url"`)
	}
	kind := defKind
	if in.Context != "" {
		k, err := policy.ParseKind(in.Context)
		if err != nil {
			return inputError(n, *in.URL, err.Error())
		}
		kind = k
	}
	base := defBase
	if in.Base != "" {
		base = in.Base
	}
	return judge(*in.URL, base, kind)
}

func inputError(n int, url, msg string) policyLine {
	return policyLine{URL: url, Decision: policy.Deny.String(), Rule: "input",
		Reason: fmt.Sprintf("denied: stdin line %d: %s (rule input)", n, msg)}
}

// readLine reads one '\n'-terminated line (without the newline, and
// without a trailing '\r'). A line longer than max is consumed and
// reported with tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		return line, tooLong, err
	}
}
