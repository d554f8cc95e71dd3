// Package live is the hub of surf's live sessions: every surfer that a
// person may watch, approve for and take over while it works (an MCP
// client's session, the CLI's own run, a board worker's task) is
// registered here with who opened it, and the hub keeps what the web UI
// (package liveui) shows of it: its state (working, waiting for the model,
// waiting for approval, taken over, needs help, idle), where its page is,
// the timeline of its steps, its pending approvals and its takeover. It
// is also the session's side of the live-view mechanics: an approver that
// races the UI against another one, the run's pause between steps and the
// agent's request for help, and the screencast, started only while
// someone watches.
package live

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/sandbox"
)

// State is what a live session is doing, as the UI shows it.
type State string

// The states, from the most to the least pressing.
const (
	TakenOver       State = "taken over"
	WaitingApproval State = "waiting for approval"
	NeedsHelp       State = "needs help"
	WaitingModel    State = "waiting for the model"
	Working         State = "working"
	Idle            State = "idle"
)

// Limits of what the hub keeps per session.
const (
	// MaxSteps is how many steps of a session's timeline are kept.
	MaxSteps = 200
	// MaxImages is how many steps keep their screenshot.
	MaxImages = 50
	// MaxNotices is how many notices (denials, takeovers) are kept.
	MaxNotices = 50
	// subBuffer is the events a watcher may lag behind before it is
	// dropped (it reconnects and gets a fresh snapshot).
	subBuffer = 256
)

// ErrClosed is the error of an action on a session that has ended.
var ErrClosed = errors.New("the session has ended")

// ErrNotFound is the error of an unknown session, approval or step.
var ErrNotFound = errors.New("not found")

// Hub is the set of live sessions. Its zero value is not usable; make one
// with New. It is safe for concurrent use.
type Hub struct {
	log *slog.Logger

	mu       sync.Mutex
	sessions map[string]*Session
	subs     map[chan struct{}]struct{} // list watchers, poked on changes
}

// Config configures a Hub. The zero value is valid.
type Config struct {
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// New makes an empty hub.
func New(cfg Config) *Hub {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{log: log, sessions: map[string]*Session{}, subs: map[chan struct{}]struct{}{}}
}

// SessionOptions describe a session being registered.
type SessionOptions struct {
	// Owner says who opened the session: "mcp client NAME", "surf run",
	// "worker W task ID".
	Owner string
	// Task is the board task the session runs, for a board worker's
	// session; empty otherwise.
	Task string
	// Surfer is the session's browser; nil until Attach gives it (the
	// surfer's own configuration needs the session's Approver and Help,
	// so it is often made after the session).
	Surfer Surfer
	// Redact hides secrets in what the UI shows (step results, URLs):
	// the session policy's Redact. Nil shows text as it is.
	Redact func(string) string
	// Screencast are the screencast's options while someone watches; the
	// zero value means DefaultScreencast.
	Screencast ScreencastOptions
	// Denials, when set, subscribes to the session's denied requests
	// (SandboxDenials): the UI shows them. It returns the unsubscribe
	// function.
	Denials func(func(Denial)) (stop func())
}

// Attach gives the session its surfer (replacing one that was closed,
// e.g. after a relaunch) and, when denials is set, subscribes to its
// denied requests.
func (s *Session) Attach(surf Surfer, denials func(func(Denial)) (stop func())) {
	var stop func()
	if denials != nil {
		stop = denials(s.denied)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if stop != nil {
			stop()
		}
		return
	}
	old := s.stopDenials
	s.surf, s.stopDenials = surf, stop
	restart := s.castStop != nil
	s.mu.Unlock()
	if old != nil {
		old()
	}
	if restart {
		// the running screencast watches the old surfer: start anew
		s.restartCast()
	}
	s.changed()
}

// SandboxDenials subscribes to a sandbox session's denials, for
// SessionOptions.Denials and Attach.
func SandboxDenials(sess *sandbox.Session) func(func(Denial)) func() {
	return func(f func(Denial)) func() {
		return sess.OnDenial(func(d sandbox.Denial) {
			f(Denial{URL: d.URL, Host: d.Host, Reason: d.Decision.Reason, Navigation: d.Navigation})
		})
	}
}

// SetRedact replaces the function that hides secrets in what the UI
// shows: the sandbox session's policy, which also redacts what a person
// typed during a takeover.
func (s *Session) SetRedact(f func(string) string) {
	if f == nil {
		return
	}
	s.mu.Lock()
	s.redact = f
	s.mu.Unlock()
}

// red redacts with the session's current function.
func (s *Session) red(text string) string {
	s.mu.Lock()
	f := s.redact
	s.mu.Unlock()
	return f(text)
}

// surfer is the attached surfer, nil if none.
func (s *Session) surfer() Surfer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.surf
}

// ErrNoBrowser is the error of a live view of a session whose browser is
// not open.
var ErrNoBrowser = errors.New("the session has no browser open now")

// Denial is a request the policy blocked, as the UI shows it.
type Denial struct {
	URL    string
	Host   string
	Reason string
	// Navigation is a page's navigation (not a subresource).
	Navigation bool
}

// Open registers a session and returns it. Close it when the session
// ends.
func (h *Hub) Open(o SessionOptions) (*Session, error) {
	if h == nil {
		return nil, errors.New("live: no hub")
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	if o.Screencast == (ScreencastOptions{}) {
		o.Screencast = DefaultScreencast
	}
	if strings.TrimSpace(o.Owner) == "" {
		o.Owner = "unknown"
	}
	s := &Session{
		hub: h, id: newID(), owner: o.Owner, task: o.Task, surf: o.Surfer, redact: o.Redact, castOpts: o.Screencast,
		opened: time.Now(), approvals: map[int]*approval{}, images: map[int]image{},
		subs: map[chan Event]struct{}{}, frameCh: make(chan struct{}),
	}
	s.log = h.log.With("live", s.id)
	if o.Surfer != nil {
		s.Attach(o.Surfer, o.Denials)
	}
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	h.changed()
	return s, nil
}

// Get returns the session with this id.
func (h *Hub) Get(id string) (*Session, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.sessions[id]
	return s, ok
}

// Summary is one line of the session list.
type Summary struct {
	ID    string `json:"id"`
	Owner string `json:"owner"`
	// Task is the board task the session runs, if it is a worker's.
	Task    string    `json:"task,omitempty"`
	URL     string    `json:"url"`
	Title   string    `json:"title"`
	State   State     `json:"state"`
	Doing   string    `json:"doing,omitempty"` // the latest progress message
	Steps   int       `json:"steps"`
	Opened  time.Time `json:"opened"`
	Pending int       `json:"pending"` // approvals waiting
	// Viewers is how many live views are open.
	Viewers int `json:"viewers"`
	// TakenBy is who has taken over, when State is TakenOver.
	TakenBy string `json:"taken_by,omitempty"`
	// Help is the agent's reason, when it asked for a person.
	Help string `json:"help,omitempty"`
	// Stoppable says a run in the session can be stopped (Stop).
	Stoppable bool `json:"stoppable,omitempty"`
	// Answer is the last run's end, when one has ended.
	Answer *Answer `json:"answer,omitempty"`
}

// Answer is how a run in the session ended: its final answer (or
// structured result), or why it ended without one.
type Answer struct {
	Step      int       `json:"step"`
	EndReason string    `json:"end_reason"`
	Text      string    `json:"text,omitempty"`
	Data      string    `json:"data,omitempty"` // the structured result, as JSON
	At        time.Time `json:"at"`
}

// List returns the live sessions, oldest first.
func (h *Hub) List() []Summary {
	h.mu.Lock()
	all := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	out := make([]Summary, 0, len(all))
	for _, s := range all {
		out = append(out, s.Summary())
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Opened.Equal(out[j].Opened) {
			return out[i].Opened.Before(out[j].Opened)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Watch returns a channel poked (without blocking: it holds at most one
// poke) whenever the session list or a session's summary changes, and
// the function that stops watching.
func (h *Hub) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

// Close ends every session still registered.
func (h *Hub) Close() {
	h.mu.Lock()
	all := make([]*Session, 0, len(h.sessions))
	for _, s := range h.sessions {
		all = append(all, s)
	}
	h.mu.Unlock()
	for _, s := range all {
		s.Close()
	}
}

// changed pokes the list watchers.
func (h *Hub) changed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *Hub) remove(s *Session) {
	h.mu.Lock()
	delete(h.sessions, s.id)
	h.mu.Unlock()
	h.changed()
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Event is what a session's watchers are told: Type names it ("state",
// "step", "approval", "approved", "notice", "end"), Data is its JSON
// value.
type Event struct {
	Type string
	Data any
}

// Session is one live session. Its methods are safe for concurrent use.
type Session struct {
	hub         *Hub
	id          string
	owner       string
	task        string
	surf        Surfer
	redact      func(string) string
	castOpts    ScreencastOptions
	opened      time.Time
	log         *slog.Logger
	stopDenials func()

	mu        sync.Mutex
	closed    bool
	running   int    // runs and actions in progress
	doing     string // the latest progress message
	steps     []StepInfo
	nsteps    int
	images    map[int]image // by step number
	last      image         // the last observation's set-of-mark image
	approvals map[int]*approval
	nextAppr  int
	take      *takeover // the person at the wheel, nil if none
	note      string    // the hand-back note not yet given to the agent
	helpWhy   string    // the agent's request for help, "" if none
	helpSince time.Time
	notices   []Notice
	subs      map[chan Event]struct{}
	where     [2]string    // url, title when last asked
	stop      func(string) // stops the run in the session, nil if none
	stopGen   int
	answer    *Answer // the last run's end, nil before one ends

	// the screencast (cast.go)
	viewers  int
	castStop func()        // stops the running screencast
	castDone chan struct{} // closed when it has stopped
	frame    Frame         // the latest frame
	frameSeq int
	frameCh  chan struct{} // closed and replaced on each frame
	casts    int           // screencasts started, for tests
}

// ID is the session's id in the hub (and in the UI's URLs).
func (s *Session) ID() string { return s.id }

// Owner is who opened the session.
func (s *Session) Owner() string { return s.owner }

// Close ends the session: a pending approval is denied, a takeover ended,
// the screencast stopped, and it leaves the hub's list.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	for _, a := range s.approvals {
		a.answer(false, "the session ended")
	}
	if s.take != nil {
		close(s.take.back)
		s.take = nil
	}
	stop, done := s.castStop, s.castDone
	s.castStop = nil
	close(s.frameCh) // frame waiters see the end
	s.frameCh = make(chan struct{})
	s.mu.Unlock()
	if s.stopDenials != nil {
		s.stopDenials()
	}
	if stop != nil {
		stop()
		<-done
	}
	s.publish(Event{Type: "end", Data: map[string]string{"id": s.id}})
	s.mu.Lock()
	for ch := range s.subs {
		close(ch)
		delete(s.subs, ch)
	}
	s.mu.Unlock()
	s.hub.remove(s)
}

// Begin marks a run or an action as under way (the session is working
// until the returned end is called).
func (s *Session) Begin() (end func()) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	s.changed()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.running--
			if s.running == 0 {
				s.doing = ""
			}
			s.mu.Unlock()
			s.changed()
		})
	}
}

// Progress records what the session is doing now: a websurfer progress
// message ("step 3: asking the model"). Pass it to websurfer.WithProgress.
func (s *Session) Progress(msg string) {
	msg = s.red(msg)
	s.mu.Lock()
	s.doing = msg
	s.mu.Unlock()
	s.changed()
}

// state derives the session's state. The caller holds s.mu.
func (s *Session) state() State {
	switch {
	case s.take != nil:
		return TakenOver
	case len(s.approvals) > 0:
		return WaitingApproval
	case s.helpWhy != "":
		return NeedsHelp
	case s.running == 0:
		return Idle
	case strings.Contains(s.doing, "asking the model"):
		return WaitingModel
	}
	return Working
}

// State is what the session is doing now.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state()
}

// Summary is the session's line in the list.
func (s *Session) Summary() Summary {
	var u, t string
	if surf := s.surfer(); surf != nil {
		u, t = surf.Where()
		u, t = s.red(u), s.red(t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.where = [2]string{u, t}
	sum := Summary{ID: s.id, Owner: s.owner, Task: s.task, URL: u, Title: t, State: s.state(), Doing: s.doing,
		Steps: s.nsteps, Opened: s.opened, Pending: len(s.approvals), Viewers: s.viewers, Help: s.helpWhy,
		Stoppable: s.stop != nil, Answer: s.answer}
	if s.take != nil {
		sum.TakenBy = s.take.by
	}
	return sum
}

// Subscribe returns a channel of the session's events and the function
// that stops them. A watcher that falls subBuffer events behind has its
// channel closed: it should subscribe again and read a fresh Snapshot.
func (s *Session) Subscribe() (<-chan Event, func()) {
	ch := make(chan Event, subBuffer)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		close(ch)
		return ch, func() {}
	}
	s.subs[ch] = struct{}{}
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
		s.mu.Unlock()
	}
}

// Snapshot is everything a new watcher needs.
type Snapshot struct {
	Summary   Summary       `json:"summary"`
	Steps     []StepInfo    `json:"steps"`
	Approvals []ApprovalReq `json:"approvals"`
	Notices   []Notice      `json:"notices"`
}

// Snapshot returns the session as it is now.
func (s *Session) Snapshot() Snapshot {
	sum := s.Summary()
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{Summary: sum, Steps: slices.Clone(s.steps), Notices: slices.Clone(s.notices)}
	for _, a := range s.approvals {
		snap.Approvals = append(snap.Approvals, a.req)
	}
	sort.Slice(snap.Approvals, func(i, j int) bool { return snap.Approvals[i].ID < snap.Approvals[j].ID })
	return snap
}

// publish sends an event to the session's watchers, dropping those that
// lag.
func (s *Session) publish(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- e:
		default:
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// changed tells the watchers of the session and of the list that its
// summary changed.
func (s *Session) changed() {
	s.publish(Event{Type: "state", Data: s.Summary()})
	s.hub.changed()
}

// Notice is something the UI should show once, in order: a denial during
// a takeover, a takeover and its hand-back.
type Notice struct {
	At   time.Time `json:"at"`
	Kind string    `json:"kind"` // "denied", "takeover", "handback", "help"
	Text string    `json:"text"`
}

func (s *Session) notice(kind, text string) { s.noticeAsIs(kind, s.red(text)) }

// noticeAsIs adds a notice whose text is redacted already.
func (s *Session) noticeAsIs(kind, text string) {
	n := Notice{At: time.Now(), Kind: kind, Text: text}
	s.mu.Lock()
	s.notices = append(s.notices, n)
	if len(s.notices) > MaxNotices {
		s.notices = slices.Delete(s.notices, 0, len(s.notices)-MaxNotices)
	}
	s.mu.Unlock()
	s.publish(Event{Type: "notice", Data: n})
}

// denied is the session's denial callback: a blocked request is shown.
func (s *Session) denied(d Denial) {
	s.mu.Lock()
	by := ""
	if s.take != nil {
		by = s.take.by
	}
	s.mu.Unlock()
	if !d.Navigation && by == "" {
		return // the agent's blocked subresources are in its observations
	}
	what := d.URL
	if what == "" {
		what = d.Host
	}
	text := "blocked by the policy: " + what
	if d.Reason != "" {
		text += " (" + d.Reason + ")"
	}
	if by != "" {
		text = "your navigation was " + text
	}
	s.notice("denied", text)
}
