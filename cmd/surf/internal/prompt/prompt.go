// Package prompt asks a person at a terminal to approve what the policy
// marks "ask" (surf run --approve prompt).
//
// Approver returns a policy.Approver that writes each question to out and
// reads the answer, a line, from in:
//
//	approver := prompt.Approver(os.Stdin, os.Stderr)
package prompt

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/surfkit/surf/policy"
	"golang.org/x/term"
)

// Approver asks on out whether to allow a decision and reads the answer
// from in: "y" or "yes" (in any case) approves, any other line or the
// end of in refuses. Questions are asked one at a time. A question whose
// context ends (another approver, such as the live view, answered it
// first) stops waiting: the line read next answers the next question.
func Approver(in io.Reader, out io.Writer) policy.Approver {
	var mu sync.Mutex
	// One reader of the terminal, started by the first question, so that
	// a question answered elsewhere can stop waiting.
	var start sync.Once
	lines := make(chan string)
	read := func() {
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadString('\n')
			if line != "" || err == nil {
				lines <- line
			}
			if err != nil {
				close(lines)
				return
			}
		}
	}
	return policy.ApproverFunc(func(ctx context.Context, d policy.Decision) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		start.Do(func() { go read() })
		what := d.Tool
		if d.URL != "" {
			what += " " + d.URL
		}
		opens := ""
		if d.Rule == policy.RuleAsk && d.Host != "" {
			opens = "; yes opens " + d.Host + " for this run"
		}
		fmt.Fprintf(out, "surf: approve %s? (%s%s) [y/N] ", what, strings.TrimPrefix(d.Reason, "ask: "), opens)
		select {
		case line, ok := <-lines:
			if !ok {
				return false, nil // end of input: no
			}
			ans := strings.ToLower(strings.TrimSpace(line))
			return ans == "y" || ans == "yes", nil
		case <-ctx.Done():
			fmt.Fprintln(out, "(answered elsewhere)")
			return false, ctx.Err()
		}
	})
}

// Mode is the --approve mode in effect: mode when given, else "prompt"
// when in is a terminal and "deny" otherwise. tty reports whether in is
// a terminal.
func Mode(mode string, in io.Reader) (_ string, tty bool) {
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		tty = true
	}
	if mode == "" {
		mode = "deny"
		if tty {
			mode = "prompt"
		}
	}
	return mode, tty
}

// ForMode is the approver of an --approve mode (as Mode picks it when
// mode is ""): "allow" approves everything, "deny" nothing, and "prompt"
// asks at the terminal in, writing the questions to out (Approver).
func ForMode(mode string, in io.Reader, out io.Writer) (policy.Approver, error) {
	mode, tty := Mode(mode, in)
	switch mode {
	case "allow":
		return policy.AllowAll(), nil
	case "deny":
		return policy.DenyAll(), nil
	case "prompt":
		if !tty {
			return nil, errors.New("--approve prompt needs a terminal; use allow or deny")
		}
		return Approver(in, out), nil
	}
	return nil, fmt.Errorf("--approve must be prompt, deny or allow, not %q", mode)
}
