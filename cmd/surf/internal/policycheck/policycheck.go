// Package policycheck judges URLs by a policy for "surf policy check",
// one JSON line of verdict a URL, the URLs given one by one or as JSON
// lines on stdin. It also builds the policy of every command's policy
// flags (Build: --policy, --allow, --deny) and gives advice for a URL
// they deny (Hint).
//
// LineOf turns a policy's decision into the output line; Stdin reads the
// input lines and judges each:
//
//	enc := json.NewEncoder(os.Stdout)
//	err := policycheck.Stdin(ctx, os.Stdin, pol, "", policy.Navigation,
//		func(l policycheck.Line) error { return enc.Encode(l) })
package policycheck

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

// Line is one output line of "surf policy check": a URL's verdict.
type Line struct {
	URL      string `json:"url"`
	Host     string `json:"host"`
	Decision string `json:"decision"`
	Rule     string `json:"rule"`
	Reason   string `json:"reason"`
}

// LineOf is the output line of decision d on URL raw.
func LineOf(raw string, d policy.Decision) Line {
	return Line{URL: raw, Host: d.Host, Decision: d.Verdict.String(), Rule: d.Rule, Reason: d.Reason}
}

// policyInput is one stdin line (its name shows in json's errors, which the
// output lines quote).
type policyInput struct {
	URL     *string `json:"url"`
	Base    string  `json:"base"`
	Context string  `json:"context"`
}

// MaxLine bounds one stdin line.
const MaxLine = 1 << 20

// Stdin judges the JSON lines of r by policy p, passing each line's
// verdict to emit: {"url": "...", "base": "...", "context": "request"},
// base and context defaulting to defBase and defKind. A line that is not
// such a JSON object (with a string "url"), or is longer than MaxLine
// bytes, gets a deny line with rule "input"; blank lines are skipped. It
// stops at the end of r, at emit's first error or at the end of ctx.
func Stdin(ctx context.Context, r io.Reader, p *policy.Policy, defBase string, defKind policy.Kind, emit func(Line) error) error {
	judge := func(raw, base string, kind policy.Kind) Line { return LineOf(raw, p.DecideURL(kind, raw, base)) }
	if r == nil {
		r = strings.NewReader("")
	}
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tooLong, err := readLine(br, MaxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading stdin: %w", err)
		}
		eof := errors.Is(err, io.EOF)
		if eof && len(line) == 0 && !tooLong {
			return nil
		}
		var out Line
		switch {
		case tooLong:
			out = inputError(n, "", fmt.Sprintf("line longer than %d bytes", MaxLine))
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

func judgeInputLine(n int, line []byte, defBase string, defKind policy.Kind, judge func(raw, base string, kind policy.Kind) Line) Line {
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

func inputError(n int, url, msg string) Line {
	return Line{URL: url, Decision: policy.Deny.String(), Rule: "input",
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
