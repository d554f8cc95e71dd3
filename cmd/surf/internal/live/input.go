package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/surfkit/surf/websurfer"
)

// ViewInput is a person's input event on a live view's picture, as a
// page sends it (the live view's and the board page's): X and Y are
// fractions of the picture's width and height (0 to 1), which InputAt
// scales to the page's viewport.
type ViewInput struct {
	Kind      string  `json:"kind"`
	X         float64 `json:"x"`
	Y         float64 `json:"y"`
	Button    string  `json:"button,omitempty"`
	Clicks    int     `json:"clicks,omitempty"`
	DeltaX    float64 `json:"dx,omitempty"`
	DeltaY    float64 `json:"dy,omitempty"`
	Key       string  `json:"key,omitempty"`
	Code      string  `json:"code,omitempty"`
	Text      string  `json:"text,omitempty"`
	Modifiers int     `json:"modifiers,omitempty"`
}

// ErrBadInput is wrapped by the errors of a malformed ViewInput.
var ErrBadInput = errors.New("a bad input event")

// Check validates what can be checked without the page: a known kind,
// a position within the picture for the pointer kinds, and text within
// websurfer.MaxInputText. The page's surfer checks the rest (buttons,
// deltas, modifiers) before it dispatches anything.
func (in ViewInput) Check() error {
	switch in.Kind {
	case "mouse_move", "mouse_down", "mouse_up", "click", "wheel":
		if math.IsNaN(in.X) || math.IsNaN(in.Y) || in.X < 0 || in.X > 1 || in.Y < 0 || in.Y > 1 {
			return fmt.Errorf("%w: x and y are fractions of the live view, from 0 to 1", ErrBadInput)
		}
	case "key_down", "key_up", "type":
	default:
		k := in.Kind
		if len(k) > 40 {
			k = k[:40] + "…"
		}
		return fmt.Errorf("%w: unknown kind %q (want mouse_move, mouse_down, mouse_up, click, wheel, key_down, key_up or type)", ErrBadInput, k)
	}
	if len(in.Text) > websurfer.MaxInputText {
		return fmt.Errorf("%w: text of %d bytes is over %d", ErrBadInput, len(in.Text), websurfer.MaxInputText)
	}
	if !utf8.ValidString(in.Text) || !utf8.ValidString(in.Key) || !utf8.ValidString(in.Code) {
		return fmt.Errorf("%w: text is not valid UTF-8", ErrBadInput)
	}
	return nil
}

// pointer reports whether an input kind has a position.
func (in ViewInput) pointer() bool {
	switch in.Kind {
	case "mouse_move", "mouse_down", "mouse_up", "click", "wheel":
		return true
	}
	return false
}

// InputAt checks a person's event on the live view, scales its position
// to the page's viewport and sends it to the page from the place that
// holds key (InputAs; "" is the process's own live view). A bad event is
// an error and sends nothing. Neither the event's text nor an error
// holding it is logged by the session: it may be a password.
func (s *Session) InputAt(ctx context.Context, key string, in ViewInput) error {
	if err := in.Check(); err != nil {
		return err
	}
	if err := s.holds(key); err != nil {
		return err
	}
	e := InputEvent{Kind: in.Kind, Button: in.Button, Clicks: in.Clicks, DeltaX: in.DeltaX, DeltaY: in.DeltaY,
		Key: in.Key, Code: in.Code, Text: in.Text, Modifiers: in.Modifiers}
	if in.pointer() {
		vw, vh := s.Viewport()
		if vw <= 0 || vh <= 0 {
			return errors.New("no frame of the page yet: wait for the live view")
		}
		// the last pixel is at w-1
		e.X, e.Y = math.Min(in.X*vw, vw-1), math.Min(in.Y*vh, vh-1)
	}
	return s.InputAs(ctx, key, e)
}
