package websurfer

// resolve finds an id of the latest observation. Ids are numbered per
// observation: once the page navigated, or another tab became active, the
// old numbers mean nothing and are refused.
func (s *Surfer) resolve(id int) (*elementRef, error) {
	o := s.last
	if o == nil {
		return nil, &NoElementError{ID: id}
	}
	r, ok := o.refs[id]
	if !ok {
		return nil, &NoElementError{ID: id, Seq: o.Seq, Count: len(o.refs)}
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
