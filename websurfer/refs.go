package websurfer

import (
	"errors"
	"fmt"
)

// ErrStale is matched by errors.Is for an id or element from an
// observation that no longer describes the page.
var ErrStale = errors.New("stale element id")

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

// resolve finds an id of the latest observation. Ids are numbered per
// observation: once the page navigated, or another tab became active, the
// old numbers mean nothing and are refused.
func (s *Surfer) resolve(id int) (*elementRef, error) {
	o := s.last
	if o == nil {
		return nil, fmt.Errorf("there is no element %d: nothing has been observed yet", id)
	}
	r, ok := o.refs[id]
	if !ok {
		n := len(o.refs)
		if n == 0 {
			return nil, fmt.Errorf("there is no element %d: the latest observation lists no elements", id)
		}
		return nil, fmt.Errorf("there is no element %d in the latest observation (ids 1-%d)", id, n)
	}
	if o.tab != s.tabs[s.active] {
		return nil, &StaleError{ID: id, Seq: o.Seq, Latest: o.Seq, Why: "another tab is active now"}
	}
	if int(o.tab.nav.Load()) != o.nav {
		return nil, &StaleError{ID: id, Seq: o.Seq, Latest: o.Seq, Why: "the page has navigated since (observe again)"}
	}
	return r, nil
}

// Resolve returns the element with id in the latest observation, or an
// error saying why the id cannot be used: unknown, or from a page that has
// changed since. An Element taken from an older observation (el.Obs) is
// refused too.
func (s *Surfer) Resolve(id int) (*Element, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.resolve(id)
	if err != nil {
		return nil, err
	}
	return r.el, nil
}

// check refuses an Element from another observation than the latest.
func (s *Surfer) check(el Element) (*elementRef, error) {
	if s.last != nil && el.Obs != 0 && el.Obs != s.last.Seq {
		return nil, &StaleError{ID: el.ID, Seq: el.Obs, Latest: s.last.Seq, Why: "the page has been observed again since"}
	}
	return s.resolve(el.ID)
}

// Last returns the latest observation, nil before the first.
func (s *Surfer) Last() *Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
