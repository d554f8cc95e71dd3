package boardcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/termsafe"
)

// WatchEvent is one line of surf board watch --json.
type WatchEvent struct {
	Record  board.Record `json:"record"`
	Initial bool         `json:"initial,omitempty"`
}

// A Watcher prints a board as surf board watch does: JSON events, a table
// redrawn in place on a terminal, or a line per change.
type Watcher struct {
	Out io.Writer
	// JSON prints one WatchEvent a line.
	JSON bool
	// TTY redraws the table in place (Out is a terminal); otherwise each
	// change is one line. JSON wins over TTY.
	TTY bool

	recs  map[string]board.Record
	lines int // lines of the table on screen, on a terminal
	enc   *json.Encoder
}

// Run prints the board as it is, then (unless once) each change until
// ctx ends, which is no error, or the board's watch fails.
func (w *Watcher) Run(ctx context.Context, b *board.Board, once bool) error {
	w.TTY = w.TTY && !w.JSON
	w.recs = map[string]board.Record{}
	w.enc = json.NewEncoder(w.Out)
	all, err := b.List(ctx)
	if err != nil {
		return err
	}
	for _, r := range all {
		w.recs[r.Task.ID] = r
	}
	if err := w.initial(all); err != nil || once {
		return err
	}
	var tick <-chan time.Time
	if w.TTY {
		// the running times move on even when the board does not
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
	}
	events, errc, stop := relayWatch(ctx, b)
	defer stop() // the watcher is done with the board before it closes
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick:
			w.redrawRunning()
		case ev, ok := <-events:
			if !ok {
				select {
				case err := <-errc:
					return err
				default:
					return nil
				}
			}
			if err := w.apply(ev); err != nil {
				return err
			}
		}
	}
}

// redrawRunning redraws the table when a task is running.
func (w *Watcher) redrawRunning() {
	for _, r := range w.recs {
		if r.State == board.Running {
			w.draw()
			return
		}
	}
}

// relayWatch relays b's events on a channel, closed when the watch ends;
// its error, if any, is on errc first. stop ends the watch and waits for
// it to let go of the board.
func relayWatch(ctx context.Context, b *board.Board) (<-chan board.Event, <-chan error, func()) {
	events := make(chan board.Event)
	errc := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer close(events)
		for ev, err := range b.Watch(wctx) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case events <- ev:
			case <-wctx.Done():
				return
			}
		}
	}()
	return events, errc, func() {
		cancel()
		<-stopped
	}
}

// initial prints the board as it is.
func (w *Watcher) initial(all []board.Record) error {
	if !w.JSON {
		w.draw()
		return nil
	}
	for _, r := range all {
		if err := w.enc.Encode(WatchEvent{Record: r, Initial: true}); err != nil {
			return err
		}
	}
	return nil
}

func (w *Watcher) draw() {
	var buf bytes.Buffer
	WatchTable(&buf, w.recs, time.Now(), TermWidth(w.Out))
	if w.TTY && w.lines > 0 {
		fmt.Fprintf(w.Out, "\033[%dA\033[J", w.lines)
	}
	w.lines = bytes.Count(buf.Bytes(), []byte("\n"))
	w.Out.Write(buf.Bytes())
}

// apply takes in one event and prints it.
func (w *Watcher) apply(ev board.Event) error {
	r := ev.Record
	old, seen := w.recs[r.Task.ID]
	if seen && old.Revision >= r.Revision {
		return nil // the snapshot had it already
	}
	w.recs[r.Task.ID] = r
	switch {
	case w.JSON:
		return w.enc.Encode(WatchEvent{Record: r, Initial: ev.Initial && !seen})
	case w.TTY:
		w.draw()
	default:
		fmt.Fprintln(w.Out, termsafe.String(ChangeLine(r, time.Now())))
	}
	return nil
}
