package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/surfkit/surf/policy"
	"golang.org/x/term"
)

// statusLine shows what a run is doing while it waits (asking the model,
// loading a page), on stderr: on a terminal as one line redrawn in place
// and cleared before the next output, and with --progress (anywhere) as
// plain lines "surf: step 2: asking the model".
type statusLine struct {
	w     io.Writer
	tty   bool // redraw one line in place
	width int  // the terminal's columns
	mu    sync.Mutex
	shown bool // a redrawn line is on the screen
}

// newStatusLine returns the status line for a run, or nil when there is
// to be none: stderr is not a terminal and lines were not asked for.
func newStatusLine(stderr io.Writer, lines bool) *statusLine {
	if lines {
		return &statusLine{w: stderr}
	}
	f, ok := stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return &statusLine{w: stderr, tty: true, width: width}
}

// show shows msg, replacing what the status line showed.
func (p *statusLine) show(msg string) {
	if p == nil {
		return
	}
	msg = strings.Join(strings.Fields(msg), " ")
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintf(p.w, "surf: %s\n", msg)
		return
	}
	// One screen line: a longer one would wrap, and only its last row be
	// cleared.
	r := []rune(msg)
	if n := max(p.width-2, 1); len(r) > n {
		r = r[:n]
	}
	fmt.Fprintf(p.w, "\r\033[K%s…", string(r))
	p.shown = true
}

// clear removes a redrawn line, before other output.
func (p *statusLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// clearing clears the status line before a's question, which is asked on
// the terminal.
func (p *statusLine) clearing(a policy.Approver) policy.Approver {
	return policy.ApproverFunc(func(ctx context.Context, d policy.Decision) (bool, error) {
		p.clear()
		return a.Approve(ctx, d)
	})
}
