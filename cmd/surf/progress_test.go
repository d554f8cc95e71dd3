package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/surfkit/surf/policy"
)

// TestStatusLineOnTerminal: on a terminal the status is one line, cut to
// the width, redrawn in place, and cleared once before other output (and
// before an approval question).
func TestStatusLineOnTerminal(t *testing.T) {
	var b bytes.Buffer
	p := &statusLine{w: &b, tty: true, width: 20}
	p.show("step 1: asking the model")
	p.show("step 1:\nclick 7")
	if got, want := b.String(), "\r\033[Kstep 1: asking the…\r\033[Kstep 1: click 7…"; got != want {
		t.Errorf("shown %q, want %q", got, want)
	}
	b.Reset()
	p.clear()
	p.clear()
	if got, want := b.String(), "\r\033[K"; got != want {
		t.Errorf("cleared with %q, want %q", got, want)
	}
	p.show("step 2: asking the model")
	b.Reset()
	a := p.clearing(policy.ApproverFunc(func(context.Context, policy.Decision) (bool, error) {
		b.WriteString("approve? ")
		return true, nil
	}))
	if ok, err := a.Approve(context.Background(), policy.Decision{}); !ok || err != nil {
		t.Fatalf("the approver's answer was lost: %v %v", ok, err)
	}
	if got, want := b.String(), "\r\033[Kapprove? "; got != want {
		t.Errorf("the question came as %q, want %q", got, want)
	}
}

// TestStatusLineLines: off a terminal (--progress), each status is a
// plain line, and clearing writes nothing.
func TestStatusLineLines(t *testing.T) {
	var b bytes.Buffer
	p := newStatusLine(&b, true)
	p.show("step 1: asking the model")
	p.clear()
	p.show("step 1: click 7")
	if got, want := b.String(), "surf: step 1: asking the model\nsurf: step 1: click 7\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
	if newStatusLine(&b, false) != nil {
		t.Error("a status line on a buffer that is not a terminal, without --progress")
	}
}
