// Package livebus carries live sessions (package live) over NATS, so that
// one page (package boardui) shows and steers the sessions of every
// worker on a board without a port open on any worker.
//
// A worker process publishes its hub with Publish: the list of its live
// sessions on surf.live.<bridge>.sessions whenever it changes (and every
// Interval, so a viewer notices a worker that died), and it answers
// requests on surf.live.<bridge>.req: a session's snapshot, an approval's
// answer, a takeover, the person's input during it (with the takeover's
// key, which only the viewer that took over holds), a hand-back, a
// frame of the live view while someone watches. A viewer follows every
// bridge with Follow and sends requests with Do. <bridge> is a random id
// per process (a worker's name may hold dots, which NATS subjects do not
// allow); the announcement names the worker.
package livebus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
)

// Prefix starts every subject of the bus.
const Prefix = "surf.live"

// helloSubject is where a new viewer asks every bridge to announce
// itself at once.
const helloSubject = Prefix + ".hello"

// DefaultInterval is how often a bridge announces itself when nothing
// changes.
const DefaultInterval = 5 * time.Second

// Announcement is a bridge's list of live sessions.
type Announcement struct {
	Bridge   string         `json:"bridge"`
	Worker   string         `json:"worker"`
	Sessions []live.Summary `json:"sessions"`
	// Interval is how often the bridge announces itself: a viewer
	// forgets a bridge not heard from for three of them.
	Interval time.Duration `json:"interval"`
	// Gone says the bridge is closing.
	Gone bool `json:"gone,omitempty"`
}

// Ops of a Request.
const (
	OpSnapshot = "snapshot"
	OpApprove  = "approve"
	OpTakeOver = "takeover"
	OpHandBack = "handback"
	// OpStop ends the session's run cleanly (live.Session.Stop): a board
	// task's is cancelled on the board.
	OpStop = "stop"
	// OpFrame asks for the live view's next frame after Seq: the
	// session's screencast runs while such requests keep coming (a
	// lease of FrameLease each), and stops when they stop.
	OpFrame = "frame"
	// OpInput sends a person's click, wheel or key on the live picture
	// to the session's page (live.Session.InputAt, as the worker's own
	// live view does), from the viewer that took it over: Key must be
	// the one its OpTakeOver's reply gave.
	OpInput = "input"
)

// maxInputWait bounds an input's dispatch to the page.
const maxInputWait = 10 * time.Second

// FrameLease is how long a frame request keeps a session's screencast
// running after it.
const FrameLease = 10 * time.Second

// maxFrameWait bounds a frame request's wait for a new frame.
const maxFrameWait = 5 * time.Second

// maxInFlight bounds the requests a bridge serves at once.
const maxInFlight = 32

// Request is what a viewer asks of a bridge.
type Request struct {
	Op      string `json:"op"`
	Session string `json:"session"`
	// Approval and Approve answer an approval (OpApprove).
	Approval int  `json:"approval,omitempty"`
	Approve  bool `json:"approve,omitempty"`
	// By names the person, for the agent's note and the journal.
	By string `json:"by,omitempty"`
	// Message is the person's word to the agent at a hand-back
	// (OpHandBack), quoted to it as theirs.
	Message string `json:"message,omitempty"`
	// Seq and Wait ask for a frame after Seq, waiting at most Wait
	// (OpFrame; at most 5s).
	Seq  int           `json:"seq,omitempty"`
	Wait time.Duration `json:"wait,omitempty"`
	// Input is the event and Key the takeover's key (OpInput).
	Input *live.ViewInput `json:"input,omitempty"`
	Key   string          `json:"key,omitempty"`
}

// Reply is a bridge's answer. Code classifies an error: "not_found",
// "conflict" or "bad_request".
type Reply struct {
	OK       bool           `json:"ok"`
	Error    string         `json:"error,omitempty"`
	Code     string         `json:"code,omitempty"`
	Snapshot *live.Snapshot `json:"snapshot,omitempty"`
	// Frame is a JPEG of the live view and Seq its number (OpFrame); no
	// Frame means none came within the wait.
	Frame []byte `json:"frame,omitempty"`
	Seq   int    `json:"seq,omitempty"`
	// Key is a takeover's key (OpTakeOver): the session accepts input
	// (OpInput) only with it until the hand-back. It is the viewer's
	// alone: never announced, logged or shown to the agent.
	Key string `json:"key,omitempty"`
}

// Errors of Do, from a Reply's Code.
var (
	ErrNotFound = errors.New("not found")
	ErrConflict = errors.New("conflict")
)

// Config configures a Publish.
type Config struct {
	// Conn is the NATS connection (the board's); required.
	Conn *nats.Conn
	// Hub is the worker's hub; required.
	Hub *live.Hub
	// Worker names the process in the viewers' lists.
	Worker string
	// Interval is how often the bridge announces itself when nothing
	// changes; zero means DefaultInterval.
	Interval time.Duration
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Bridge is a hub published on the bus. Close it to stop.
type Bridge struct {
	cfg    Config
	id     string
	log    *slog.Logger
	subs   []*nats.Subscription
	ctx    context.Context
	cancel context.CancelFunc
	slots  chan struct{} // requests in flight

	mu     sync.Mutex
	leases map[string]*lease // by session: screencasts kept running
	done   chan struct{}
	once   sync.Once
}

// Publish publishes a hub's sessions and answers requests for them until
// ctx ends or Close.
func Publish(ctx context.Context, cfg Config) (*Bridge, error) {
	if cfg.Conn == nil || cfg.Hub == nil {
		return nil, errors.New("livebus: Config.Conn and Config.Hub are required")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if strings.TrimSpace(cfg.Worker) == "" {
		cfg.Worker = "unnamed"
	}
	b := &Bridge{cfg: cfg, id: newID(), log: cfg.Logger, done: make(chan struct{}),
		slots: make(chan struct{}, maxInFlight), leases: map[string]*lease{}}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	ctx, b.cancel = context.WithCancel(ctx)
	b.ctx = ctx
	poke := make(chan struct{}, 1)
	hello, err := cfg.Conn.Subscribe(helloSubject, func(*nats.Msg) {
		select {
		case poke <- struct{}{}:
		default:
		}
	})
	if err != nil {
		b.cancel()
		return nil, fmt.Errorf("livebus: %w", err)
	}
	req, err := cfg.Conn.Subscribe(b.subject("req"), b.serve)
	if err != nil {
		hello.Unsubscribe()
		b.cancel()
		return nil, fmt.Errorf("livebus: %w", err)
	}
	b.subs = []*nats.Subscription{hello, req}
	go b.announce(ctx, poke)
	return b, nil
}

// ID is the bridge's id in the bus's subjects.
func (b *Bridge) ID() string { return b.id }

func (b *Bridge) subject(what string) string { return Prefix + "." + b.id + "." + what }

// announce publishes the session list on each change (coalesced) and
// every Interval, and a last "gone" announcement at the end.
func (b *Bridge) announce(ctx context.Context, hello <-chan struct{}) {
	defer close(b.done)
	changes, stop := b.cfg.Hub.Watch()
	defer stop()
	tick := time.NewTicker(b.cfg.Interval)
	defer tick.Stop()
	for {
		b.send(false)
		select {
		case <-ctx.Done():
			b.send(true)
			b.cfg.Conn.Flush()
			return
		case <-changes:
			// coalesce a burst of changes
			select {
			case <-time.After(50 * time.Millisecond):
			case <-ctx.Done():
			}
		case <-hello:
		case <-tick.C:
		}
	}
}

func (b *Bridge) send(gone bool) {
	a := Announcement{Bridge: b.id, Worker: b.cfg.Worker, Interval: b.cfg.Interval, Gone: gone}
	if !gone {
		a.Sessions = b.cfg.Hub.List()
	}
	data, err := json.Marshal(a)
	if err != nil {
		return
	}
	if err := b.cfg.Conn.Publish(b.subject("sessions"), data); err != nil {
		b.log.Debug("livebus: announcing", "err", err)
	}
}

// serve answers a request on a goroutine of its own (a frame request
// waits), at most maxInFlight at once.
func (b *Bridge) serve(m *nats.Msg) {
	select {
	case b.slots <- struct{}{}:
	default:
		data, _ := json.Marshal(Reply{Error: "the worker is busy with other requests", Code: "conflict"})
		m.Respond(data)
		return
	}
	go func() {
		defer func() { <-b.slots }()
		b.handle(m)
	}()
}

// handle answers one request.
func (b *Bridge) handle(m *nats.Msg) {
	var rq Request
	rep := Reply{}
	if err := json.Unmarshal(m.Data, &rq); err != nil {
		rep = Reply{Error: "a bad request: " + err.Error(), Code: "bad_request"}
	} else {
		rep = b.do(rq)
	}
	data, _ := json.Marshal(rep)
	if err := m.Respond(data); err != nil {
		b.log.Debug("livebus: replying", "err", err)
	}
}

func (b *Bridge) do(rq Request) Reply {
	s, ok := b.cfg.Hub.Get(rq.Session)
	if !ok {
		return Reply{Error: "no live session " + fmt.Sprintf("%q", rq.Session) + " (it may have ended)", Code: "not_found"}
	}
	by := strings.TrimSpace(rq.By)
	if by == "" {
		by = "the user"
	}
	var err error
	switch rq.Op {
	case OpSnapshot:
		snap := s.Snapshot()
		return Reply{OK: true, Snapshot: &snap}
	case OpApprove:
		err = s.Answer(rq.Approval, rq.Approve, by)
	case OpTakeOver:
		key := newKey()
		if err = s.TakeOverAs(by, key); err == nil {
			b.log.Info("livebus: request", "op", rq.Op, "session", rq.Session, "by", by)
			return Reply{OK: true, Key: key}
		}
	case OpInput:
		return b.input(s, rq)
	case OpHandBack:
		err = s.HandBack(rq.Message)
	case OpStop:
		err = s.Stop(by)
	case OpFrame:
		return b.frame(s, rq)
	default:
		return Reply{Error: fmt.Sprintf("unknown op %q", rq.Op), Code: "bad_request"}
	}
	if err == nil {
		b.log.Info("livebus: request", "op", rq.Op, "session", rq.Session, "by", by)
		return Reply{OK: true}
	}
	code := "bad_request"
	switch {
	case errors.Is(err, live.ErrNotFound), errors.Is(err, live.ErrClosed):
		code = "not_found"
	case errors.Is(err, live.ErrAnswered), errors.Is(err, live.ErrTakenOver), errors.Is(err, live.ErrNotTakenOver),
		errors.Is(err, live.ErrNotYours), errors.Is(err, live.ErrNotStoppable), errors.Is(err, live.ErrNoBrowser):
		code = "conflict"
	}
	return Reply{Error: err.Error(), Code: code}
}

// input sends a person's event to the session's page, as the worker's
// own live view does (live.Session.InputAt), if the request holds the
// key of the session's takeover. Neither the event's text nor the error
// is logged: either may hold what the person typed.
func (b *Bridge) input(s *live.Session, rq Request) Reply {
	var err error
	switch {
	case rq.Input == nil:
		err = fmt.Errorf("%w: no input event", live.ErrBadInput)
	case rq.Key == "":
		// an empty key is the worker's own live view's
		err = live.ErrNotYours
	default:
		ctx, cancel := context.WithTimeout(b.ctx, maxInputWait)
		defer cancel()
		err = s.InputAt(ctx, rq.Key, *rq.Input)
	}
	if err == nil {
		return Reply{OK: true}
	}
	b.log.Debug("livebus: input refused", "session", rq.Session)
	code := "bad_request"
	switch {
	case errors.Is(err, live.ErrClosed):
		code = "not_found"
	case errors.Is(err, live.ErrNotTakenOver), errors.Is(err, live.ErrNotYours), errors.Is(err, live.ErrNoBrowser):
		code = "conflict"
	}
	return Reply{Error: err.Error(), Code: code}
}

// lease keeps a session's screencast running while frames are asked
// for.
type lease struct {
	leave func()
	timer *time.Timer
}

// frame renews the session's screencast lease and returns its next
// frame.
func (b *Bridge) frame(s *live.Session, rq Request) Reply {
	b.mu.Lock()
	if b.ctx.Err() != nil {
		b.mu.Unlock()
		return Reply{Error: "the worker is closing", Code: "not_found"}
	}
	l, ok := b.leases[s.ID()]
	if ok {
		l.timer.Reset(FrameLease)
	} else {
		leave, err := s.View()
		if err != nil {
			b.mu.Unlock()
			return Reply{Error: err.Error(), Code: "not_found"}
		}
		l = &lease{leave: leave}
		id := s.ID()
		l.timer = time.AfterFunc(FrameLease, func() {
			b.mu.Lock()
			if b.leases[id] == l {
				delete(b.leases, id)
			}
			b.mu.Unlock()
			l.leave()
		})
		b.leases[id] = l
	}
	b.mu.Unlock()
	wait := min(max(rq.Wait, 0), maxFrameWait)
	if wait == 0 {
		wait = maxFrameWait
	}
	ctx, cancel := context.WithTimeout(b.ctx, wait)
	defer cancel()
	f, n, err := s.NextFrame(ctx, rq.Seq)
	switch {
	case err == nil:
		return Reply{OK: true, Frame: f.JPEG, Seq: n}
	case errors.Is(err, context.DeadlineExceeded):
		return Reply{OK: true, Seq: rq.Seq}
	}
	return Reply{Error: err.Error(), Code: "not_found"}
}

// Watching reports how many sessions have their screencast kept
// running by frame requests.
func (b *Bridge) Watching() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.leases)
}

// Close stops publishing: viewers are told the bridge is gone, and the
// screencasts kept for them stop.
func (b *Bridge) Close() {
	b.once.Do(func() {
		for _, s := range b.subs {
			s.Unsubscribe()
		}
		b.mu.Lock()
		b.cancel()
		leases := b.leases
		b.leases = map[string]*lease{}
		b.mu.Unlock()
		for _, l := range leases {
			if l.timer.Stop() {
				l.leave()
			}
		}
		<-b.done
	})
}

// Remote is a live session of some worker on the bus.
type Remote struct {
	Bridge string `json:"bridge"`
	Worker string `json:"worker"`
	live.Summary
}

// Follower follows every bridge on the bus. Close it to stop.
type Follower struct {
	nc  *nats.Conn
	sub *nats.Subscription

	mu      sync.Mutex
	bridges map[string]*heard
	pokes   map[chan struct{}]struct{}
	stop    chan struct{}
	once    sync.Once
}

type heard struct {
	a    Announcement
	last time.Time
}

// Follow starts following the bus, and asks every bridge to announce
// itself at once.
func Follow(nc *nats.Conn) (*Follower, error) {
	if nc == nil {
		return nil, errors.New("livebus: no NATS connection")
	}
	f := &Follower{nc: nc, bridges: map[string]*heard{}, pokes: map[chan struct{}]struct{}{}, stop: make(chan struct{})}
	sub, err := nc.Subscribe(Prefix+".*.sessions", f.heard)
	if err != nil {
		return nil, fmt.Errorf("livebus: %w", err)
	}
	f.sub = sub
	if err := nc.Publish(helloSubject, nil); err != nil {
		sub.Unsubscribe()
		return nil, fmt.Errorf("livebus: %w", err)
	}
	go f.expire()
	return f, nil
}

func (f *Follower) heard(m *nats.Msg) {
	var a Announcement
	if json.Unmarshal(m.Data, &a) != nil || a.Bridge == "" || m.Subject != Prefix+"."+a.Bridge+".sessions" {
		return
	}
	f.mu.Lock()
	if a.Gone {
		delete(f.bridges, a.Bridge)
	} else {
		f.bridges[a.Bridge] = &heard{a: a, last: time.Now()}
	}
	f.mu.Unlock()
	f.changed()
}

// expire forgets the bridges not heard from for three of their
// intervals (a worker that died without saying so).
func (f *Follower) expire() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-tick.C:
		}
		gone := false
		f.mu.Lock()
		for id, h := range f.bridges {
			if time.Since(h.last) > 3*max(h.a.Interval, time.Second) {
				delete(f.bridges, id)
				gone = true
			}
		}
		f.mu.Unlock()
		if gone {
			f.changed()
		}
	}
}

func (f *Follower) changed() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.pokes {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Watch returns a channel poked (holding at most one poke) when the list
// of sessions changes, and the function that stops it.
func (f *Follower) Watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	f.pokes[ch] = struct{}{}
	f.mu.Unlock()
	return ch, func() {
		f.mu.Lock()
		delete(f.pokes, ch)
		f.mu.Unlock()
	}
}

// Sessions returns every worker's live sessions, by worker then oldest
// first.
func (f *Follower) Sessions() []Remote {
	f.mu.Lock()
	var out []Remote
	for _, h := range f.bridges {
		for _, s := range h.a.Sessions {
			out = append(out, Remote{Bridge: h.a.Bridge, Worker: h.a.Worker, Summary: s})
		}
	}
	f.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Worker != b.Worker {
			return a.Worker < b.Worker
		}
		if !a.Opened.Equal(b.Opened) {
			return a.Opened.Before(b.Opened)
		}
		return a.ID < b.ID
	})
	return out
}

// Known reports whether a bridge is on the list.
func (f *Follower) Known(bridge string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.bridges[bridge]
	return ok
}

// Do sends a request to a bridge and returns its reply; an error reply
// is an error wrapping ErrNotFound or ErrConflict when it is one of
// those.
func (f *Follower) Do(ctx context.Context, bridge string, rq Request) (Reply, error) {
	if !f.Known(bridge) {
		return Reply{}, fmt.Errorf("no worker %q on the board's live bus (it may have ended): %w", bridge, ErrNotFound)
	}
	data, err := json.Marshal(rq)
	if err != nil {
		return Reply{}, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	m, err := f.nc.RequestWithContext(ctx, Prefix+"."+bridge+".req", data)
	if err != nil {
		return Reply{}, fmt.Errorf("asking worker %s: %w", bridge, err)
	}
	var rep Reply
	if err := json.Unmarshal(m.Data, &rep); err != nil {
		return Reply{}, fmt.Errorf("worker %s's reply: %w", bridge, err)
	}
	if !rep.OK {
		switch rep.Code {
		case "not_found":
			return rep, fmt.Errorf("%s: %w", rep.Error, ErrNotFound)
		case "conflict":
			return rep, fmt.Errorf("%s: %w", rep.Error, ErrConflict)
		}
		return rep, errors.New(rep.Error)
	}
	return rep, nil
}

// Close stops following.
func (f *Follower) Close() {
	f.once.Do(func() {
		f.sub.Unsubscribe()
		close(f.stop)
	})
}

// newKey makes a takeover's key: 128 random bits.
func newKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func newID() string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// StopCancelsTask makes Stop on a board task's live session (from its
// worker's live view or the board's page) cancel the task on the board:
// the board records it cancelled, its worker's heartbeat ends the run,
// and its dependents follow the board's rules. It returns the function
// that unregisters it, for the run's end.
func StopCancelsTask(ctx context.Context, ls *live.Session, c *board.Claim) (remove func()) {
	return ls.OnStop(func(by string) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		c.Cancel(cctx, "stopped by "+by+" in the live view")
	})
}
