package live

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/surfkit/surf/perception"
)

// takeover is a person at the wheel.
type takeover struct {
	by    string
	key   string // TakeOverAs's key: the only input accepted
	since time.Time
	back  chan struct{} // closed at hand-back
}

// ErrNotTakenOver is the error of an input or a hand-back while nobody
// has taken over.
var ErrNotTakenOver = errors.New("nobody has taken over this session")

// ErrTakenOver is the error of a second takeover.
var ErrTakenOver = errors.New("the session is already taken over")

// ErrNotYours is the error of an input from a place other than the one
// that took the session over (TakeOverAs).
var ErrNotYours = errors.New("the session is taken over from another page: only that page's clicks and keys reach it (hand back, then take over here)")

// TakeOver gives the wheel to a person (by says who, for the agent's
// note): the agent pauses before its next step (Between) until HandBack.
// Input is accepted from the same place as TakeOver's (the process's own
// live view), not from a TakeOverAs key.
func (s *Session) TakeOver(by string) error { return s.TakeOverAs(by, "") }

// TakeOverAs is TakeOver from one place that holds key (a board page
// over NATS): until the hand-back, the session accepts input only with
// the same key (InputAs), and no longer from the process's own live view
// (Input). An empty key is TakeOver's.
func (s *Session) TakeOverAs(by, key string) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.take != nil:
		s.mu.Unlock()
		return ErrTakenOver
	}
	s.take = &takeover{by: by, key: key, since: time.Now(), back: make(chan struct{})}
	s.mu.Unlock()
	s.notice("takeover", by+" took over; the agent pauses after its current step")
	s.changed()
	return nil
}

// HandBack ends the takeover: the agent resumes, told in its next
// observation that the user took over, for how long and where the page is
// now, and, when the person left one, their message ("I logged in; the
// code was 1234"), quoted as their words.
func (s *Session) HandBack(message string) error {
	message = strings.TrimSpace(message)
	if n := utf8.RuneCountInString(message); n > MaxHandBackMessage {
		return fmt.Errorf("the message is %d characters; at most %d", n, MaxHandBackMessage)
	}
	s.mu.Lock()
	t := s.take
	if t == nil {
		s.mu.Unlock()
		return ErrNotTakenOver
	}
	s.take = nil
	s.mu.Unlock()
	var u, title string
	if surf := s.surfer(); surf != nil {
		u, title = surf.Where()
	}
	note := handBackNote(time.Since(t.since), u, title, message)
	s.mu.Lock()
	s.note = note
	s.mu.Unlock()
	close(t.back)
	s.notice("handback", "handed back to the agent: "+note)
	s.changed()
	return nil
}

// handBackNote is what the agent is told after a takeover. The URL and
// title are the page's words, not surf's: quoted and cut as in an
// observation (a title may read like a note from surf). They are
// redacted by the run like every observation note.
//
// The person's message is theirs: quoted like page text (it cannot close
// its quotes to speak as surf), and marked as the person's words.
func handBackNote(d time.Duration, u, title, message string) string {
	d = d.Round(time.Second)
	if d < time.Second {
		d = time.Second
	}
	where := "url " + perception.Quote(u, 200)
	if title != "" {
		where += " title " + perception.Quote(title, 120)
	}
	note := fmt.Sprintf("The user took over the browser for %s and handed it back; the page is now %s. What they did is not in your history: look at the page again before going on.", d, where)
	if message != "" {
		note += " The user's message to you, in their words: " + perception.Quote(message, MaxHandBackMessage)
	}
	return note
}

// MaxHandBackMessage bounds a person's message at hand-back, in
// characters.
const MaxHandBackMessage = 2000

// TakenOver reports whether a person has the wheel.
func (s *Session) TakenOver() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.take != nil
}

// Between is the run's pause between steps (websurfer RunOptions.Between):
// while the session is taken over it waits for the hand-back, and it
// returns the hand-back note for the agent's next observation (also when
// the takeover began and ended during the last step).
func (s *Session) Between(ctx context.Context) (string, error) {
	s.mu.Lock()
	t := s.take
	s.mu.Unlock()
	if t != nil {
		select {
		case <-t.back:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	note := s.note
	s.note = ""
	return note, nil
}

// Help answers the agent's request for a person (websurfer's Human): the
// UI shows the reason, and it waits for someone to take over and hand
// back, until ctx ends (the surfer bounds it by its help timeout). It
// returns the hand-back note.
//
// The reason is the agent's own words, its secrets already redacted
// (websurfer.Surfer.RequestHelp): it is not redacted again for what a
// person typed, which would take the agent's words that a person also
// typed out of its request.
func (s *Session) Help(ctx context.Context, reason string) (string, error) {
	why := strings.TrimSpace(reason)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", ErrClosed
	}
	s.helpWhy, s.helpSince = why, time.Now()
	if s.helpWhy == "" {
		s.helpWhy = "(no reason given)"
	}
	s.mu.Unlock()
	s.noticeAsIs("help", "the agent asks for help: "+why)
	s.changed()
	defer func() {
		s.mu.Lock()
		s.helpWhy = ""
		s.mu.Unlock()
		s.changed()
	}()
	// Wait for a takeover, then for its hand-back. Watching before
	// looking: a change in between still pokes.
	poke, stop := s.hub.Watch()
	defer stop()
	for {
		s.mu.Lock()
		t, note := s.take, s.note
		if t == nil && note != "" {
			s.note = ""
			s.mu.Unlock()
			return note, nil
		}
		s.mu.Unlock()
		var back <-chan struct{}
		if t != nil {
			back = t.back
		}
		select {
		case <-back:
		case <-poke:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}

// Input sends a person's input to the page. It is refused unless the
// session is taken over by TakeOver (not TakeOverAs).
func (s *Session) Input(ctx context.Context, e InputEvent) error { return s.InputAs(ctx, "", e) }

// InputAs sends a person's input to the page from the place that holds
// key. It is refused (ErrNotTakenOver, ErrNotYours) unless the session is
// taken over with that key.
func (s *Session) InputAs(ctx context.Context, key string, e InputEvent) error {
	if err := s.holds(key); err != nil {
		return err
	}
	s.mu.Lock()
	surf := s.surf
	s.mu.Unlock()
	if surf == nil {
		return ErrNoBrowser
	}
	return surf.Input(ctx, e)
}

// holds reports whether the session is taken over with key: nil,
// ErrNotTakenOver or ErrNotYours.
func (s *Session) holds(key string) error {
	s.mu.Lock()
	t := s.take
	s.mu.Unlock()
	if t == nil {
		return ErrNotTakenOver
	}
	if subtle.ConstantTimeCompare([]byte(t.key), []byte(key)) != 1 {
		return ErrNotYours
	}
	return nil
}
