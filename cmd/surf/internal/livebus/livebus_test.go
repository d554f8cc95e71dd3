package livebus_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
)

func setup(t *testing.T) (context.Context, *board.Board) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b, err := board.Open(ctx, board.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return ctx, b
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestRequests: a viewer's requests reach the worker's session, and
// the wrong ones get the right errors, changing nothing.
func TestRequests(t *testing.T) {
	ctx, b := setup(t)
	hub := live.New(live.Config{})
	defer hub.Close()
	s, err := hub.Open(live.SessionOptions{Owner: "worker w task t1", Task: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	br, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: "w.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	f, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, ctx, "the session on the follower's list", func() bool {
		l := f.Sessions()
		return len(l) == 1 && l[0].ID == s.ID() && l[0].Worker == "w.1" && l[0].Task == "t1" && l[0].Bridge == br.ID()
	})

	do := func(rq livebus.Request) error {
		_, err := f.Do(ctx, br.ID(), rq)
		return err
	}
	if err := do(livebus.Request{Op: livebus.OpApprove, Session: "nope", Approval: 1, Approve: true}); !errors.Is(err, livebus.ErrNotFound) {
		t.Errorf("an unknown session: %v", err)
	}
	if err := do(livebus.Request{Op: livebus.OpApprove, Session: s.ID(), Approval: 7, Approve: true}); !errors.Is(err, livebus.ErrNotFound) {
		t.Errorf("an unknown approval: %v", err)
	}
	if err := do(livebus.Request{Op: "explode", Session: s.ID()}); err == nil || errors.Is(err, livebus.ErrNotFound) {
		t.Errorf("an unknown op: %v", err)
	}
	if _, err := f.Do(ctx, "nobody", livebus.Request{Op: livebus.OpTakeOver, Session: s.ID()}); !errors.Is(err, livebus.ErrNotFound) {
		t.Errorf("an unknown bridge: %v", err)
	}
	if s.TakenOver() {
		t.Fatal("a bad request took the session over")
	}
	if err := do(livebus.Request{Op: livebus.OpTakeOver, Session: s.ID(), By: "ana"}); err != nil {
		t.Fatal(err)
	}
	if err := do(livebus.Request{Op: livebus.OpTakeOver, Session: s.ID(), By: "bo"}); !errors.Is(err, livebus.ErrConflict) {
		t.Errorf("a second takeover: %v", err)
	}
	if sum := s.Summary(); sum.TakenBy != "ana" {
		t.Errorf("taken by %q, want ana", sum.TakenBy)
	}
	rep, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpSnapshot, Session: s.ID()})
	if err != nil || rep.Snapshot == nil || rep.Snapshot.Summary.State != live.TakenOver {
		t.Fatalf("the snapshot: %+v %v", rep, err)
	}
	if err := do(livebus.Request{Op: livebus.OpHandBack, Session: s.ID()}); err != nil || s.TakenOver() {
		t.Fatalf("hand back: %v (taken over: %v)", err, s.TakenOver())
	}
	// the session's end reaches the list
	s.Close()
	waitFor(t, ctx, "the ended session to leave the list", func() bool { return len(f.Sessions()) == 0 })
}

// TestSilentBridgeForgotten: a worker that dies without a word (its
// process killed) leaves the list after three of its intervals; one that
// closes leaves it at once.
func TestSilentBridgeForgotten(t *testing.T) {
	ctx, b := setup(t)
	f, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := livebus.Announcement{Bridge: "dead1", Worker: "w", Interval: time.Second,
		Sessions: []live.Summary{{ID: "s1", Owner: "worker w task t", State: live.Working}}}
	data, _ := json.Marshal(a)
	if err := b.Conn().Publish(livebus.Prefix+".dead1.sessions", data); err != nil {
		t.Fatal(err)
	}
	// an announcement on another bridge's subject is not believed
	a.Bridge = "liar"
	lie, _ := json.Marshal(a)
	if err := b.Conn().Publish(livebus.Prefix+".other.sessions", lie); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the silent bridge's session", func() bool { return len(f.Sessions()) == 1 })
	heard := time.Now()
	waitFor(t, ctx, "the silent bridge to be forgotten", func() bool { return len(f.Sessions()) == 0 })
	if f.Known("liar") {
		t.Error("a bridge announced on another's subject is listed")
	}
	t.Logf("forgotten %v after its last announcement (interval 1s)", time.Since(heard).Round(100*time.Millisecond))

	hub := live.New(live.Config{})
	defer hub.Close()
	if _, err := hub.Open(live.SessionOptions{Owner: "x"}); err != nil {
		t.Fatal(err)
	}
	br, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: "w2", Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live bridge", func() bool { return f.Known(br.ID()) })
	br.Close()
	waitFor(t, ctx, "the closed bridge to leave", func() bool { return !f.Known(br.ID()) })
}

// TestFrameLease: a frame request starts the session's screencast (a
// viewer) and keeps it for FrameLease; when the requests stop, it stops.
func TestFrameLease(t *testing.T) {
	ctx, b := setup(t)
	hub := live.New(live.Config{})
	defer hub.Close()
	s, err := hub.Open(live.SessionOptions{Owner: "worker w task t1", Task: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	br, err := livebus.Publish(ctx, livebus.Config{Conn: b.Conn(), Hub: hub, Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	defer br.Close()
	f, err := livebus.Follow(b.Conn())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	waitFor(t, ctx, "the bridge", func() bool { return f.Known(br.ID()) })
	if v := s.Summary().Viewers; v != 0 || br.Watching() != 0 {
		t.Fatalf("%d viewers, %d watched before any frame request", v, br.Watching())
	}
	// no browser: no frame comes, but the request holds a viewer
	rep, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpFrame, Session: s.ID(), Wait: 100 * time.Millisecond})
	if err != nil || len(rep.Frame) != 0 {
		t.Fatalf("a frame of a session without a browser: %d bytes, %v", len(rep.Frame), err)
	}
	if v := s.Summary().Viewers; v != 1 || br.Watching() != 1 {
		t.Fatalf("%d viewers, %d watched after a frame request; want 1 and 1", v, br.Watching())
	}
	// a second request renews the lease, not a second viewer
	if _, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpFrame, Session: s.ID(), Wait: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if v := s.Summary().Viewers; v != 1 {
		t.Fatalf("%d viewers after two requests, want 1", v)
	}
	asked := time.Now()
	waitFor(t, ctx, "the lease to end", func() bool { return br.Watching() == 0 && s.Summary().Viewers == 0 })
	t.Logf("the screencast stopped %v after the last frame request (lease %v)", time.Since(asked).Round(100*time.Millisecond), livebus.FrameLease)
}
