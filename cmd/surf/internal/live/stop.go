package live

import (
	"errors"
	"sync"
)

// ErrNotStoppable is the error of a Stop while nothing that can be
// stopped runs in the session.
var ErrNotStoppable = errors.New("nothing runs in this session that can be stopped")

// OnStop registers how the run in the session is stopped (its context's
// cancel function, say; by says who stopped it) while it runs: Stop calls
// it. remove unregisters it when the run ends. A session holds one at a
// time; the latest wins.
func (s *Session) OnStop(stop func(by string)) (remove func()) {
	s.mu.Lock()
	s.stopGen++
	gen := s.stopGen
	s.stop = stop
	s.mu.Unlock()
	s.changed()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.stopGen == gen {
				s.stop = nil
			}
			s.mu.Unlock()
			s.changed()
		})
	}
}

// Stop ends the run in the session cleanly, for a person (by): the run's
// context ends, and the run ends as cancelled with its journal closed. A
// person at the wheel keeps it: the takeover ends with the run.
func (s *Session) Stop(by string) error {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop == nil {
		return ErrNotStoppable
	}
	s.notice("stopped", by+" stopped the run")
	stop(by)
	s.changed()
	return nil
}
