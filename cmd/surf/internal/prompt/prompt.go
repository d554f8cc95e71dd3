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
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/surfkit/surf/policy"
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
