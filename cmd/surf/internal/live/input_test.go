package live

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/websurfer"
)

// eventSurfer records the input events it is sent.
type eventSurfer struct {
	*fakeSurfer
	events chan websurfer.InputEvent
}

var _ Surfer = (*eventSurfer)(nil)

func (f *eventSurfer) Input(ctx context.Context, e websurfer.InputEvent) error {
	f.events <- e
	return nil
}

// TestInputOnlyWithTheTakeoversKey: a session taken over with a key
// (a board page's, over NATS) takes input only with that key, not from
// the worker's own live view nor with another key; one taken over by the
// worker's own live view takes none with a key; a bad event sends
// nothing; and a good one is scaled to the viewport.
func TestInputOnlyWithTheTakeoversKey(t *testing.T) {
	h := New(Config{})
	t.Cleanup(h.Close)
	f := &eventSurfer{fakeSurfer: newFake(), events: make(chan websurfer.InputEvent, 10)}
	s, err := h.Open(SessionOptions{Owner: "test", Surfer: f})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	click := ViewInput{Kind: "click", X: 0.5, Y: 0.5}

	if err := s.InputAt(ctx, "k1", click); !errors.Is(err, ErrNotTakenOver) {
		t.Fatalf("input before a takeover: %v", err)
	}
	if err := s.TakeOverAs("the board's user", "k1"); err != nil {
		t.Fatal(err)
	}
	if err := s.InputAt(ctx, "k1", click); err == nil || !strings.Contains(err.Error(), "no frame") {
		t.Fatalf("input before any frame: %v", err)
	}
	leave, err := s.View()
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	if _, _, err := s.NextFrame(ctx, 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		key  string
		in   ViewInput
		want error
	}{
		{"the worker's own live view", "", click, ErrNotYours},
		{"another key", "k2", click, ErrNotYours},
		{"a key's prefix", "k", click, ErrNotYours},
		{"an unknown kind", "k1", ViewInput{Kind: "explode"}, ErrBadInput},
		{"a position off the picture", "k1", ViewInput{Kind: "click", X: 1.5, Y: 0.5}, ErrBadInput},
		{"too much text", "k1", ViewInput{Kind: "type", Text: strings.Repeat("x", websurfer.MaxInputText+1)}, ErrBadInput},
		{"text that is not UTF-8", "k1", ViewInput{Kind: "type", Text: "\xff"}, ErrBadInput},
	} {
		if err := s.InputAt(ctx, c.key, c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.want == ErrNotYours {
			if err := s.InputAs(ctx, c.key, InputEvent{Kind: "click"}); !errors.Is(err, ErrNotYours) {
				t.Errorf("%s, InputAs: %v", c.name, err)
			}
		}
	}
	select {
	case e := <-f.events:
		t.Fatalf("a refused input reached the page: %+v", e)
	default:
	}
	if err := s.InputAt(ctx, "k1", click); err != nil {
		t.Fatal(err)
	}
	if e := <-f.events; e.Kind != "click" || e.X != 50 || e.Y != 25 {
		t.Fatalf("the click reached the page as %+v; want (50, 25) of the 100x50 viewport", e)
	}
	if err := s.HandBack(""); err != nil {
		t.Fatal(err)
	}
	if err := s.InputAt(ctx, "k1", click); !errors.Is(err, ErrNotTakenOver) {
		t.Fatalf("input with the key after the hand-back: %v", err)
	}

	// taken over by the worker's own live view: no key is its
	if err := s.TakeOver("me"); err != nil {
		t.Fatal(err)
	}
	if err := s.InputAt(ctx, "k1", click); !errors.Is(err, ErrNotYours) {
		t.Fatalf("input with a key into the live view's takeover: %v", err)
	}
	if err := s.Input(ctx, InputEvent{Kind: "click", X: 1, Y: 1}); err != nil {
		t.Fatal(err)
	}
	<-f.events
}
