package live

import (
	"context"
	"time"

	"github.com/surfkit/surf/websurfer"
)

// Surfer is what the hub needs of a session's browser: *websurfer.Surfer.
type Surfer interface {
	// Screencast streams the active tab's frames until ctx ends.
	Screencast(ctx context.Context, o websurfer.ScreencastOptions, frame func(websurfer.Frame)) error
	// Input dispatches a person's input event to the active tab.
	Input(ctx context.Context, e websurfer.InputEvent) error
	// Where is the active tab's URL and title, cheaply.
	Where() (url, title string)
}

var _ Surfer = (*websurfer.Surfer)(nil)

// The live-view types are the surfer's.
type (
	ScreencastOptions = websurfer.ScreencastOptions
	Frame             = websurfer.Frame
	InputEvent        = websurfer.InputEvent
)

// DefaultScreencast are the screencast's options when a session sets
// none: frames at most 1280x800 (a 1280-wide viewport's text is read at
// its own size, not shrunk to a blur), JPEG quality 50, every frame (a
// page that paints once would show nothing if its one frame were
// skipped).
// liveui's BenchmarkLiveViewStepTime measures what a viewer adds to a
// run's steps with them.
var DefaultScreencast = ScreencastOptions{Quality: 50, MaxWidth: 1280, MaxHeight: 800}

// castRetry is how long a screencast that ended with an error waits
// before it starts again, while someone still watches.
const castRetry = 500 * time.Millisecond

// View registers a viewer of the live view: the first one starts the
// screencast, and the returned leave, called by each viewer when it goes,
// stops it after the last one. Nobody watching means no screencast.
func (s *Session) View() (leave func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	s.viewers++
	if s.viewers == 1 {
		s.startCast()
	}
	go s.changed()
	done := false
	return func() {
		s.mu.Lock()
		if done {
			s.mu.Unlock()
			return
		}
		done = true
		s.viewers--
		var stop func()
		var wait chan struct{}
		if s.viewers == 0 && s.castStop != nil {
			stop, wait = s.castStop, s.castDone
			s.castStop = nil
		}
		s.mu.Unlock()
		if stop != nil {
			stop()
			<-wait
		}
		s.changed()
	}, nil
}

// startCast starts the screencast. The caller holds s.mu.
func (s *Session) startCast() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.castStop, s.castDone = cancel, done
	s.casts++
	go s.followWhere(ctx)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			surf := s.surfer()
			err := ErrNoBrowser
			if surf != nil {
				err = surf.Screencast(ctx, s.castOpts, s.onFrame)
			}
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				s.log.Debug("screencast ended; starting again", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(castRetry):
			}
		}
	}()
}

// wherePoll is how often a watched session's page is looked up for the
// header.
const wherePoll = time.Second

// followWhere keeps the header on the page while someone watches: the
// page's URL and title are looked up every wherePoll, and a change is
// published (a person navigating during a takeover changes the page
// with no step of the agent's to say so).
func (s *Session) followWhere(ctx context.Context) {
	t := time.NewTicker(wherePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		surf := s.surfer()
		if surf == nil {
			continue
		}
		u, title := surf.Where()
		u, title = s.red(u), s.red(title)
		s.mu.Lock()
		moved := s.where != [2]string{u, title}
		s.mu.Unlock()
		if moved {
			s.changed()
		}
	}
}

// restartCast stops the running screencast and starts a new one, on the
// surfer attached now.
func (s *Session) restartCast() {
	s.mu.Lock()
	stop, done := s.castStop, s.castDone
	s.castStop = nil
	s.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
	s.mu.Lock()
	if s.viewers > 0 && s.castStop == nil && !s.closed {
		s.startCast()
	}
	s.mu.Unlock()
}

// onFrame keeps the latest frame and wakes the viewers.
func (s *Session) onFrame(f Frame) {
	s.mu.Lock()
	s.frame = f
	s.frameSeq++
	close(s.frameCh)
	s.frameCh = make(chan struct{})
	s.mu.Unlock()
}

// NextFrame returns the first frame after seq (0 for the latest one, if
// any), waiting for it until ctx ends, and its sequence number.
func (s *Session) NextFrame(ctx context.Context, seq int) (Frame, int, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return Frame{}, 0, ErrClosed
		}
		if s.frameSeq > seq {
			f, n := s.frame, s.frameSeq
			s.mu.Unlock()
			return f, n, nil
		}
		ch := s.frameCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Frame{}, 0, ctx.Err()
		}
	}
}

// Casts reports how many screencasts the session has started, and
// whether one is running now.
func (s *Session) Casts() (started int, running bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.casts, s.castStop != nil
}

// Viewport is the size, in CSS pixels, of the page the live view shows:
// the latest frame's, for scaling a click on the image to the page.
func (s *Session) Viewport() (w, h float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.frame.ViewportWidth, s.frame.ViewportHeight
}
