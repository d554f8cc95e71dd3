package websurfer

import (
	"errors"
	"fmt"

	"github.com/surfkit/surf/policy"
)

// Why an action was refused, for callers that branch on it: each cause has
// a sentinel for errors.Is and a type for errors.As with its data. An
// action returns them wrapped in a tool error (tools.IsToolError), and
// each renders as the text the model reads.

var (
	// ErrStale is matched by errors.Is for an id or element from an
	// observation that no longer describes the page (*StaleError).
	ErrStale = errors.New("stale element id")
	// ErrNoElement is matched for an id the latest observation does not
	// list (*NoElementError).
	ErrNoElement = errors.New("no such element")
	// ErrCovered is matched for an element something else covers at the
	// point the action would use (*CoveredError).
	ErrCovered = errors.New("element covered")
	// ErrOffscreen is matched for an element outside the viewport or
	// scrolled out of view inside its container (*OffscreenError).
	ErrOffscreen = errors.New("element off screen")
	// ErrNotEditable is matched for a field that is disabled or read-only
	// (*NotEditableError).
	ErrNotEditable = errors.New("element takes no input")
	// ErrDenied is policy.ErrDenied: a navigation, an action or a secret
	// the policy refused (*policy.DeniedError, *policy.SecretError).
	ErrDenied = policy.ErrDenied
)

// StaleError says why an id cannot be used.
type StaleError struct {
	ID     int
	Seq    int // the observation the id came from, 0 if unknown
	Latest int // the latest observation
	Why    string
}

func (e *StaleError) Error() string {
	if e.Seq != 0 {
		return fmt.Sprintf("element %d is from observation %d, but %s; use the ids of observation %d", e.ID, e.Seq, e.Why, e.Latest)
	}
	return fmt.Sprintf("element %d: %s", e.ID, e.Why)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// NoElementError is an id the latest observation does not list.
type NoElementError struct {
	ID    int
	Seq   int // the latest observation, 0 before the first
	Count int // how many elements it lists (ids 1 to Count)
}

func (e *NoElementError) Error() string {
	switch {
	case e.Seq == 0:
		return fmt.Sprintf("there is no element %d: nothing has been observed yet", e.ID)
	case e.Count == 0:
		return fmt.Sprintf("there is no element %d: the latest observation lists no elements", e.ID)
	}
	return fmt.Sprintf("there is no element %d in the latest observation (ids 1-%d)", e.ID, e.Count)
}

// Is makes errors.Is(err, ErrNoElement) true.
func (e *NoElementError) Is(target error) bool { return target == ErrNoElement }

// CoveredError is an element another one covers where the action would
// point at it.
type CoveredError struct {
	ID         int
	Role, Name string
	// By describes the cover, such as `dialog "Cookie consent"`; ByID is
	// the id of the cover (or of the first element listed inside it), 0
	// if none is listed.
	By   string
	ByID int
	// Unseen is a cover surf has not observed yet (By is empty).
	Unseen bool
}

func (e *CoveredError) Error() string {
	if e.Unseen {
		return fmt.Sprintf("element %d %s %s is covered by something surf has not seen yet; observe again", e.ID, e.Role, q(e.Name, 60))
	}
	msg := fmt.Sprintf("element %d %s %s is covered by %s", e.ID, e.Role, q(e.Name, 60), e.By)
	if e.ByID != 0 {
		msg += fmt.Sprintf(", id %d", e.ByID)
	}
	return msg + "; deal with that first (for example close or accept it)"
}

// Is makes errors.Is(err, ErrCovered) true.
func (e *CoveredError) Is(target error) bool { return target == ErrCovered }

// OffscreenError is an element the action cannot reach without scrolling.
type OffscreenError struct {
	ID         int
	Role, Name string
	// Where is where the element is: Above, Below, Left or Right of the
	// viewport, or Clipped inside a scroll container.
	Where Location
	// Container is the id of the element to scroll to show a Clipped
	// element, 0 if it is not listed.
	Container int
	// Scroll is the tool that brings the element into view, "" if
	// unknown: page_down for an element below the viewport,
	// scroll_element_right for one clipped to the right of its container.
	Scroll string
	// wheel marks the refusal of scroll_element_*, which needs the
	// element itself on screen.
	wheel bool
}

func (e *OffscreenError) Error() string {
	name := q(e.Name, 60)
	switch {
	case e.wheel:
		return fmt.Sprintf("element %d %s %s is not on screen (%s); scroll the page to it first", e.ID, e.Role, name, e.Where)
	case e.Where == Clipped && e.Container != 0:
		hint := ""
		if e.Scroll != "" {
			hint = " with " + e.Scroll
		}
		return fmt.Sprintf("element %d %s %s is scrolled out of view inside element %d; scroll that element first%s", e.ID, e.Role, name, e.Container, hint)
	case e.Where == Clipped:
		return fmt.Sprintf("element %d %s %s is scrolled out of view inside its container", e.ID, e.Role, name)
	}
	side := map[Location]string{Above: "above", Below: "below", Left: "left of", Right: "right of"}[e.Where]
	return fmt.Sprintf("element %d %s %s is %s the viewport; scroll to it first (%s)", e.ID, e.Role, name, side, e.Scroll)
}

// Is makes errors.Is(err, ErrOffscreen) true.
func (e *OffscreenError) Is(target error) bool { return target == ErrOffscreen }

// offscreenError is the refusal of an action that needs el on screen: where
// it is, and what scrolls it into view.
func offscreenError(el *Element) *OffscreenError {
	e := &OffscreenError{ID: el.ID, Role: el.Role, Name: el.Name, Where: el.Where}
	switch el.Where {
	case Above, Below, Left, Right:
		e.Scroll = pageScrollTool(el.Where)
	case Clipped:
		e.Container = el.Container
		e.Scroll = elementScrollTool(el.ClippedSide)
	}
	return e
}

// NotEditableError is a field that takes no input.
type NotEditableError struct {
	ID         int
	Role, Name string
	// Disabled and Readonly say which, as observed; neither when the page
	// refused the input itself (it changed the field since).
	Disabled, Readonly bool
}

func (e *NotEditableError) Error() string {
	what := "disabled or read-only"
	switch {
	case e.Disabled:
		what = "disabled"
	case e.Readonly:
		what = "read-only"
	}
	return fmt.Sprintf("element %d %s %s is %s; it takes no input", e.ID, e.Role, q(e.Name, 60), what)
}

// Is makes errors.Is(err, ErrNotEditable) true.
func (e *NotEditableError) Is(target error) bool { return target == ErrNotEditable }

// notEditable is the refusal to type into el as observed, or nil.
func notEditable(el *Element) *NotEditableError {
	if !el.Disabled && !el.Readonly {
		return nil
	}
	return &NotEditableError{ID: el.ID, Role: el.Role, Name: el.Name, Disabled: el.Disabled, Readonly: el.Readonly}
}
