package websurfer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/som"
)

// Config configures a Surfer. Session is required; every other zero value
// is a documented default.
type Config struct {
	// Session is the isolated browser session to drive.
	Session *sandbox.Session
	// TokenBudget bounds an observation's text in o200k tokens; zero
	// means DefaultTokenBudget.
	TokenBudget int
	// JPEGQuality is the quality of the set-of-mark screenshot; zero
	// means 80.
	JPEGQuality int
	// Marks styles the set-of-mark drawing.
	Marks som.Options
	// Policy narrows the session's policy for the action gate
	// (visit_url, web_search, create_tab, clicks on links, the per-tool
	// rules) and the secrets input_text may use. Nil means the session's
	// policy as it is: the one the sandbox enforces on every request.
	Policy *policy.Policy
	// Approver answers actions the policy marks Ask; nil denies them.
	Approver policy.Approver
	// SearchURL is the web_search engine, with %s where the escaped query
	// goes; empty means DefaultSearchURL.
	SearchURL string
	// MaxDownloadBytes caps one download; zero means
	// DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
	// ActionTimeout bounds one action's wait for the page to settle;
	// zero means 10s.
	ActionTimeout time.Duration
	// Model answers summarize_page and answer_question; nil makes them
	// return an error result.
	Model Model
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// DefaultSearchURL is the web_search engine unless Config.SearchURL is set.
const DefaultSearchURL = "https://duckduckgo.com/html/?q=%s"

// Surfer drives one browser session: its tabs, what the model last saw of
// them, and what happened in between. Its methods are safe for concurrent
// use; they run one at a time.
type Surfer struct {
	cfg  Config
	log  *slog.Logger
	sess *sandbox.Session

	mu     sync.Mutex
	tabs   []*tab
	active int
	seq    int
	last   *Observation
	closed bool
	pol    *policy.Policy

	evmu    sync.Mutex
	pending []Event // from Playwright's goroutines
	popups  []playwright.Page
	known   map[playwright.Page]bool
	dlWG    sync.WaitGroup
}

// tab is one page of the session.
type tab struct {
	page   playwright.Page
	sess   *cdpSession
	nav    atomic.Int64 // main-frame navigations so far
	opener *tab
	state  tabState
	world  isolatedWorld

	fmu    sync.Mutex
	frames map[playwright.Frame]*oopif // out-of-process frames (nil value: in-process)

	lastMeta string // fingerprint of the metadata last reported
	title    string // last seen title
}

// oopif is an out-of-process frame and its own CDP session.
type oopif struct {
	frame   playwright.Frame
	sess    *cdpSession
	frameID string
	owner   int64 // backend node id of its iframe element in the parent's session, 0 if unknown
	err     error
}

// New opens a surfer on a session, with one blank tab.
func New(ctx context.Context, cfg Config) (*Surfer, error) {
	if cfg.Session == nil {
		return nil, errors.New("websurfer: Config.Session is required")
	}
	if cfg.TokenBudget <= 0 {
		cfg.TokenBudget = DefaultTokenBudget
	}
	if cfg.TokenBudget < 200 {
		return nil, fmt.Errorf("websurfer: a token budget of %d is too small to describe a page (minimum 200)", cfg.TokenBudget)
	}
	if cfg.JPEGQuality <= 0 {
		cfg.JPEGQuality = 80
	}
	if cfg.JPEGQuality > 100 {
		return nil, fmt.Errorf("websurfer: JPEG quality %d is above 100", cfg.JPEGQuality)
	}
	if cfg.MaxDownloadBytes <= 0 {
		cfg.MaxDownloadBytes = DefaultMaxDownloadBytes
	}
	if cfg.ActionTimeout <= 0 {
		cfg.ActionTimeout = 10 * time.Second
	}
	if cfg.SearchURL == "" {
		cfg.SearchURL = DefaultSearchURL
	}
	if !strings.Contains(cfg.SearchURL, "%s") {
		return nil, fmt.Errorf("websurfer: SearchURL %q has no %%s for the query", cfg.SearchURL)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Surfer{cfg: cfg, log: log, sess: cfg.Session, known: map[playwright.Page]bool{}}
	// The action gate decides with the session's own policy (the one the
	// sandbox enforces on every request); Config.Policy can only narrow it.
	s.pol = cfg.Session.Policy()
	switch {
	case s.pol == nil && cfg.Policy == nil:
		var err error
		if s.pol, err = policy.New(policy.Config{}); err != nil {
			return nil, fmt.Errorf("websurfer: the default policy: %w", err)
		}
	case s.pol == nil:
		s.pol = cfg.Policy
	case cfg.Policy != nil:
		s.pol = s.pol.Narrow(cfg.Policy)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg.Session.Context().OnPage(func(p playwright.Page) {
		s.evmu.Lock()
		if !s.known[p] {
			s.popups = append(s.popups, p)
		}
		s.evmu.Unlock()
	})
	page, err := cfg.Session.NewPage(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening a tab: %w", err)
	}
	t, err := s.newTab(page)
	if err != nil {
		page.Close()
		return nil, err
	}
	s.tabs = []*tab{t}
	return s, nil
}

// newTab wraps a page: its CDP session and the events surf follows.
func (s *Surfer) newTab(page playwright.Page) (*tab, error) {
	cs, err := s.sess.Context().NewCDPSession(page)
	if err != nil {
		return nil, fmt.Errorf("opening a devtools session for the tab: %w", err)
	}
	s.evmu.Lock()
	s.known[page] = true
	for i, p := range s.popups {
		if p == page {
			s.popups = append(s.popups[:i], s.popups[i+1:]...)
			break
		}
	}
	s.evmu.Unlock()
	t := &tab{page: page, sess: newCDPSession(cs), frames: map[playwright.Frame]*oopif{}}
	page.OnFrameNavigated(func(f playwright.Frame) {
		if f == page.MainFrame() {
			t.nav.Add(1)
		}
	})
	s.watch(t)
	// Event handlers run on playwright-go's dispatch goroutine: a blocking
	// Playwright call there (Detach waits for a reply) would deadlock it.
	page.OnFrameDetached(func(f playwright.Frame) {
		t.fmu.Lock()
		o := t.frames[f]
		delete(t.frames, f)
		t.fmu.Unlock()
		if o != nil && o.sess != nil {
			go o.sess.Detach()
		}
	})
	return t, nil
}

// Page is the active tab's Playwright page, for callers that need more
// than surf's actions. Changes made through it are not journaled.
func (s *Surfer) Page() playwright.Page {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tabs[s.active].page
}

// Session is the browser session the surfer drives.
func (s *Surfer) Session() *sandbox.Session { return s.sess }

// Close closes the surfer's tabs. The session stays open.
func (s *Surfer) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	s.dlWG.Wait()
	for _, t := range s.tabs {
		t.detachFrames()
		t.sess.Detach()
		if err := t.page.Close(); err != nil && !strings.Contains(err.Error(), "closed") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (t *tab) detachFrames() {
	t.fmu.Lock()
	defer t.fmu.Unlock()
	for f, o := range t.frames {
		if o != nil && o.sess != nil {
			o.sess.Detach()
		}
		delete(t.frames, f)
	}
}

// addEvent queues something the next observation reports.
func (s *Surfer) addEvent(e Event) { s.pushEvent(e) }

// Policy is the policy the surfer gates actions with.
func (s *Surfer) Policy() *policy.Policy { return s.pol }
