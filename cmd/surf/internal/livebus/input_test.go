package livebus_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/websurfer"
)

// pageSurfer is a session's page: a 200x100 viewport whose screencast
// sends one frame, and the input events it is sent.
type pageSurfer struct{ events chan websurfer.InputEvent }

var _ live.Surfer = (*pageSurfer)(nil)

func (p *pageSurfer) Screencast(ctx context.Context, o websurfer.ScreencastOptions, frame func(websurfer.Frame)) error {
	frame(websurfer.Frame{JPEG: []byte{0xff, 0xd8}, ViewportWidth: 200, ViewportHeight: 100})
	<-ctx.Done()
	return nil
}
func (p *pageSurfer) Input(ctx context.Context, e websurfer.InputEvent) error {
	p.events <- e
	return nil
}
func (p *pageSurfer) Where() (string, string) { return "http://a.test/", "A" }

// TestInputOverTheBus: a viewer that took a session over sends the
// person's input with its takeover's key and the worker performs it on
// the session's page; input without the key, with another, before the
// takeover or after the hand-back, for an unknown session, or malformed,
// is refused with the right error and reaches nothing. The key is in the
// takeover's reply only, never in the announcements.
func TestInputOverTheBus(t *testing.T) {
	ctx, b := setup(t)
	hub := live.New(live.Config{})
	defer hub.Close()
	page := &pageSurfer{events: make(chan websurfer.InputEvent, 10)}
	s, err := hub.Open(live.SessionOptions{Owner: "worker w task t1", Task: "t1", Surfer: page})
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
	waitFor(t, ctx, "the session on the list", func() bool { return len(f.Sessions()) == 1 })
	// a frame: the page's viewport is known
	if rep, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpFrame, Session: s.ID()}); err != nil || len(rep.Frame) == 0 {
		t.Fatalf("a frame: %+v %v", rep, err)
	}
	click := &live.ViewInput{Kind: "click", X: 0.25, Y: 0.5}
	input := func(session, key string, in *live.ViewInput) error {
		_, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpInput, Session: session, Key: key, Input: in})
		return err
	}
	if err := input(s.ID(), "k", click); !errors.Is(err, livebus.ErrConflict) || !strings.Contains(err.Error(), "nobody has taken over") {
		t.Errorf("input before a takeover: %v", err)
	}
	rep, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpTakeOver, Session: s.ID(), By: "ana"})
	if err != nil || len(rep.Key) < 32 {
		t.Fatalf("the takeover: %+v %v; want a key", rep, err)
	}
	key := rep.Key
	waitFor(t, ctx, "the takeover on the list", func() bool {
		l := f.Sessions()
		return len(l) == 1 && l[0].State == live.TakenOver
	})
	if data, _ := json.Marshal(f.Sessions()); strings.Contains(string(data), key) {
		t.Fatal("the takeover's key is announced")
	}
	for _, c := range []struct {
		name, session, key string
		in                 *live.ViewInput
		want               error // nil: neither not found nor conflict
	}{
		{"no key (the worker's own live view's)", s.ID(), "", click, livebus.ErrConflict},
		{"another key", s.ID(), strings.Repeat("0", 32), click, livebus.ErrConflict},
		{"an unknown session", "nope", key, click, livebus.ErrNotFound},
		{"no event", s.ID(), key, nil, nil},
		{"an unknown kind", s.ID(), key, &live.ViewInput{Kind: "explode"}, nil},
		{"a position off the picture", s.ID(), key, &live.ViewInput{Kind: "click", X: -1, Y: 0.5}, nil},
		{"a huge text", s.ID(), key, &live.ViewInput{Kind: "type", Text: strings.Repeat("x", 100<<10)}, nil},
	} {
		err := input(c.session, c.key, c.in)
		switch {
		case err == nil:
			t.Errorf("%s: accepted", c.name)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.want == nil && (errors.Is(err, livebus.ErrNotFound) || errors.Is(err, livebus.ErrConflict)):
			t.Errorf("%s: %v, want a bad request", c.name, err)
		}
	}
	select {
	case e := <-page.events:
		t.Fatalf("a refused input reached the page: %+v", e)
	default:
	}
	// the good ones, in order
	if err := input(s.ID(), key, click); err != nil {
		t.Fatal(err)
	}
	if err := input(s.ID(), key, &live.ViewInput{Kind: "type", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	if e := <-page.events; e.Kind != "click" || e.X != 50 || e.Y != 50 {
		t.Fatalf("the click reached the page as %+v; want (50, 50) of its 200x100 viewport", e)
	}
	if e := <-page.events; e.Kind != "type" || e.Text != "hello" {
		t.Fatalf("the typing reached the page as %+v", e)
	}
	if !s.TakenOver() {
		t.Fatal("input handed the session back")
	}
	if _, err := f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpHandBack, Session: s.ID()}); err != nil {
		t.Fatal(err)
	}
	if err := input(s.ID(), key, click); !errors.Is(err, livebus.ErrConflict) {
		t.Errorf("input with the key after the hand-back: %v", err)
	}
	// a second takeover gets a new key; the old one is refused
	rep, err = f.Do(ctx, br.ID(), livebus.Request{Op: livebus.OpTakeOver, Session: s.ID(), By: "bo"})
	if err != nil || rep.Key == "" || rep.Key == key {
		t.Fatalf("a second takeover: %+v %v; want a new key", rep, err)
	}
	if err := input(s.ID(), key, click); !errors.Is(err, livebus.ErrConflict) {
		t.Errorf("input with the first takeover's key: %v", err)
	}
	// taken over by the worker's own live view: nothing over the bus
	// reaches it, not even without a key
	if err := s.HandBack(""); err != nil {
		t.Fatal(err)
	}
	if err := s.TakeOver("the worker's user"); err != nil {
		t.Fatal(err)
	}
	if err := input(s.ID(), "", click); !errors.Is(err, livebus.ErrConflict) {
		t.Errorf("input over the bus into the worker's own live view's takeover: %v", err)
	}
	select {
	case e := <-page.events:
		t.Fatalf("a refused input reached the page: %+v", e)
	default:
	}
}
