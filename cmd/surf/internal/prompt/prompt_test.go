package prompt_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/prompt"
	"github.com/surfkit/surf/policy"
)

// syncBuffer is a bytes.Buffer safe for the approver and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestApprover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out syncBuffer
	a := prompt.Approver(strings.NewReader("y\nno\n YES \n"), &out)
	d := policy.Decision{Tool: "visit_url", URL: "https://example.com/", Host: "example.com", Rule: policy.RuleAsk, Reason: "ask: example.com is on the ask list"}
	for i, want := range []bool{true, false, true, false, false} {
		ok, err := a.Approve(ctx, d)
		if err != nil || ok != want {
			t.Errorf("answer %d = %v, %v; want %v", i+1, ok, err, want)
		}
	}
	if q := "surf: approve visit_url https://example.com/? (example.com is on the ask list; yes opens example.com for this run) [y/N] "; !strings.HasPrefix(out.String(), q) {
		t.Errorf("question %q, want %q", out.String(), q)
	}
}

// TestApproverAnsweredElsewhere checks that a question whose context ends
// stops waiting, and that the next line answers the next question.
func TestApproverAnsweredElsewhere(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	var out syncBuffer
	a := prompt.Approver(pr, &out)
	d := policy.Decision{Tool: "click", Reason: "ask: a payment"}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := a.Approve(ctx, d); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled question: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("a cancelled question still waits")
	}
	if !strings.Contains(out.String(), "(answered elsewhere)") {
		t.Errorf("output %q", out.String())
	}

	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel2()
	go pw.Write([]byte("y\n"))
	if ok, err := a.Approve(ctx2, d); !ok || err != nil {
		t.Errorf("next question = %v, %v; want approved", ok, err)
	}
}

// TestForMode checks the --approve modes away from a terminal: no mode
// is deny, allow and deny answer at once, prompt and unknown modes are
// refused with the flag's message.
func TestForMode(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	for _, in := range []io.Reader{strings.NewReader(""), devnull} {
		if mode, tty := prompt.Mode("", in); mode != "deny" || tty {
			t.Errorf("Mode(%T) = %q, %v; want deny, false", in, mode, tty)
		}
		if mode, _ := prompt.Mode("allow", in); mode != "allow" {
			t.Errorf("Mode(allow) = %q", mode)
		}
		for mode, want := range map[string]bool{"": false, "deny": false, "allow": true} {
			a, err := prompt.ForMode(mode, in, io.Discard)
			if err != nil {
				t.Fatalf("ForMode(%q): %v", mode, err)
			}
			if ok, err := a.Approve(context.Background(), policy.Decision{Verdict: policy.Ask}); ok != want || err != nil {
				t.Errorf("ForMode(%q) approves: %v, %v; want %v", mode, ok, err, want)
			}
		}
		if _, err := prompt.ForMode("prompt", in, io.Discard); err == nil || err.Error() != "--approve prompt needs a terminal; use allow or deny" {
			t.Errorf("ForMode(prompt) off a terminal: %v", err)
		}
		if _, err := prompt.ForMode("maybe", in, io.Discard); err == nil || !strings.Contains(err.Error(), `not "maybe"`) {
			t.Errorf("ForMode(maybe): %v", err)
		}
	}
}
