package board

import (
	"context"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// deafWatcher is a KV watcher whose consumer was lost: it yields the
// records as they were, then nothing more.
type deafWatcher struct {
	jetstream.KeyWatcher
	out  chan jetstream.KeyValueEntry
	stop sync.Once
	done chan struct{}
}

func deafen(w jetstream.KeyWatcher) *deafWatcher {
	d := &deafWatcher{KeyWatcher: w, out: make(chan jetstream.KeyValueEntry), done: make(chan struct{})}
	go func() {
		for {
			select {
			case <-d.done:
				return
			case e, ok := <-w.Updates():
				if !ok {
					return
				}
				select {
				case d.out <- e:
				case <-d.done:
					return
				}
				if e == nil {
					<-d.done // the initial records are all it gives
					return
				}
			}
		}
	}()
	return d
}

func (d *deafWatcher) Updates() <-chan jetstream.KeyValueEntry { return d.out }

func (d *deafWatcher) Stop() error {
	d.stop.Do(func() { close(d.done) })
	return d.KeyWatcher.Stop()
}

// A watch whose KV watcher goes deaf (its consumer lost with a NATS node,
// as TestClusterFileLeaderLostWhileStoring saw on a busy machine: the
// record was done on every node and Wait never heard of it) finds out
// that the board has moved on and watches again: Wait returns the record
// as it ended, and a change is yielded once.
func TestWatchOutlivesALostWatcher(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	var mu sync.Mutex
	deafened := 0
	watchHook = func(w jetstream.KeyWatcher) jetstream.KeyWatcher {
		mu.Lock()
		defer mu.Unlock()
		deafened++
		if deafened == 1 {
			return deafen(w)
		}
		return w
	}
	t.Cleanup(func() { watchHook = nil })
	if _, err := b.Add(ctx, Task{ID: "t", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Add(ctx, Task{ID: "other", Instruction: "y"}); err != nil {
		t.Fatal(err)
	}
	type waited struct {
		recs []Record
		err  error
	}
	got := make(chan waited, 1)
	started := make(chan struct{})
	go func() {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var w waited
		for ev, err := range b.Watch(wctx, "t") {
			if err != nil {
				w.err = err
				break
			}
			if ev.Initial {
				close(started)
				continue
			}
			w.recs = append(w.recs, ev.Record)
			if ev.Record.State.Terminal() {
				break
			}
		}
		got <- w
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the watch yielded no initial record")
	}
	if _, err := b.update(ctx, "t", func(r *Record) error {
		r.State, r.Reason = Failed, "ended while the watcher was deaf"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var w waited
	select {
	case w = <-got:
	case <-ctx.Done():
		t.Fatal("the watch never saw the record end: it trusted a watcher that had gone deaf")
	}
	if w.err != nil || len(w.recs) != 1 || w.recs[0].State != Failed {
		t.Fatalf("the watch yielded %d changes (%+v), err %v; want the end once", len(w.recs), w.recs, w.err)
	}
	if deafened < 2 {
		t.Errorf("%d watchers started; want the deaf one replaced", deafened)
	}
}
