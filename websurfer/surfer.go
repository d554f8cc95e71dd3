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

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/som"
	"github.com/surfkit/surf/telemetry"
	"github.com/surfkit/surf/third_party/playwright-go"
	"go.opentelemetry.io/otel/trace"
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
	// Image is the image each observation carries; zero means
	// ImageMarks. ImageNone takes no screenshot at all.
	Image ImageKind
	// Policy narrows the session's policy for the action gate
	// (visit_url, web_search, create_tab, clicks on links, the per-tool
	// rules) and the secrets input_text may use. Nil means the session's
	// policy as it is: the one the sandbox enforces on every request.
	Policy *policy.Policy
	// Approver answers actions the policy marks Ask; nil denies them. A
	// navigation to a host of an ask entry that it approves opens that
	// host (only it) in the session, at every enforcement layer, for
	// ApprovalTTL (see sandbox.Session.Approve).
	Approver policy.Approver
	// ApprovalTTL is how long an approved host stays open; zero means
	// for the rest of the session.
	ApprovalTTL time.Duration
	// SearchURL is the web_search engine: an http(s) URL with one %s
	// where the escaped query goes (CheckSearchURL); empty means
	// DefaultSearchURL.
	SearchURL string
	// MaxDownloadBytes caps one download; zero means
	// DefaultMaxDownloadBytes.
	MaxDownloadBytes int64
	// ActionTimeout bounds one action's wait for the page to settle;
	// zero means 10s.
	ActionTimeout time.Duration
	// HangTimeout is how long a page may leave surf's calls unanswered
	// (its script never yields to the browser: a busy loop, endless
	// alerts) before surf closes it and replaces its tab, and the call
	// gets a tool error saying the page is not responding; zero means
	// DefaultHangTimeout. A call whose context ends waits on such a page
	// only a moment longer, whatever HangTimeout says.
	HangTimeout time.Duration
	// DialogTimeout is how long a confirm or prompt dialog waits for
	// answer_dialog before surf dismisses it; zero means
	// DefaultDialogTimeout.
	DialogTimeout time.Duration
	// Model answers summarize_page and answer_question (and drives Run
	// unless RunOptions says otherwise); nil makes those tools return an
	// error result.
	Model Model
	// ModelName is sent with each model request; empty leaves it to the
	// client (surf's llm client fills in its configured model).
	ModelName string
	// AskTokens bounds one summarize_page / answer_question request; a
	// page larger than that is summarized in chunks (map, then reduce).
	// Zero means DefaultAskTokens.
	AskTokens int
	// Human answers request_help: a person who takes over the browser
	// (a live view, an MCP elicitation). With nil, request_help is not
	// offered to the model, and a call to it says no human is available.
	Human Human
	// HelpTimeout bounds one request_help wait for Human; zero means
	// DefaultHelpTimeout. Running out is a tool result, not an error.
	HelpTimeout time.Duration
	// SkipBlank saves the first tab's blank page (a navigation) for a
	// caller whose first act is to navigate it, such as a run with a
	// StartURL: the tab keeps the initial document its page opened with,
	// and is given a blank document of its own only if it is observed
	// before it navigates (see sandbox.PageOptions.KeepInitial).
	SkipBlank bool
	// TracerProvider makes the spans of runs, steps, model calls and
	// actions; nil means otel's global provider (a no-op unless the
	// program set one). Spans carry tool names, outcomes and token
	// counts, never URLs, typed text or the model's words.
	TracerProvider trace.TracerProvider
	// Metrics counts actions, model requests, denials, tab crashes and
	// browser restarts; nil records nothing.
	Metrics *telemetry.Metrics
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// ImageKind is the image an observation carries.
type ImageKind int

const (
	// ImageMarks is the screenshot with a numbered box drawn on each
	// element the observation lists on screen (set-of-mark).
	ImageMarks ImageKind = iota
	// ImagePlain is the screenshot as the page paints it.
	ImagePlain
	// ImageNone is no image: observations are text only, and no
	// screenshot is taken for them.
	ImageNone
)

// DefaultSearchURL is the web_search engine unless Config.SearchURL is set.
const DefaultSearchURL = "https://duckduckgo.com/html/?q=%s"

// Surfer drives one browser session: its tabs, what the model last saw of
// them, and what happened in between. Its methods are safe for concurrent
// use; they run one at a time.
type Surfer struct {
	cfg  Config
	log  *slog.Logger
	sess *sandbox.Session

	mu     workMutex // held while the surfer works (pump.go)
	tabs   []*tab
	active int
	seq    int
	last   *Observation
	closed bool
	// acts counts the actions begun, for unchanged.go.
	acts int
	pol  *policy.Policy
	// recordCapture, set by tests only, receives each observation's
	// capture, accessibility nodes and render input (see -record).
	recordCapture func(*perception.Capture, map[*cdpSession]map[cdp.BackendNodeID]*accessibility.Node, perception.RenderInput)
	// stopCount ends countDenials' subscription to the session's
	// denials.
	stopCount func()
	// decided are the gate decisions since TakeDecisions.
	decided []Decided
	usage   usageTally

	evmu    sync.Mutex
	pending []Event // from Playwright's goroutines
	popups  []playwright.Page
	opening int // windows pages announced opening, not yet seen as popups
	// announced counts downloads the renderer announced that Playwright
	// has not handed over yet; saving, those being saved.
	announced, saving int
	known             map[playwright.Page]bool
	dlWG              sync.WaitGroup
	dls               downloads // what the renderers said of downloads (download.go)

	// secretFields are the fields surf typed a secret into (see
	// secretmask.go).
	smu          sync.Mutex
	secretFields map[secretField]bool

	dlg dialogState // a confirm or prompt waiting for answer_dialog

	// The live view (live.go): what the surfer does, the tab it shows,
	// the screencast; gone is set when Close begins.
	act  activity
	cast caster
	gone atomic.Bool
	// quit is closed when Close begins: a call still waiting on a page
	// that does not answer is ended (see hang.go).
	quit     chan struct{}
	quitOnce sync.Once
	// inputs counts the events Input dispatched; red is the session's
	// redaction set, which Input adds typed text to.
	inputs atomic.Int64
	red    atomic.Pointer[policy.Redactions]
	// pump draws the frames of tabs whose frames are on demand while the
	// surfer works or is watched (pump.go).
	pump *framePump
}

// tab is one page of the session.
type tab struct {
	page   playwright.Page
	sess   *cdpSession
	nav    atomic.Int64 // main-frame navigations so far
	loaded atomic.Int64 // the value of nav when the load event last fired
	loadAt atomic.Int64 // when it fired (Unix nanoseconds)
	// rnav and rloaded are nav and loaded as the renderer reports them
	// (see watchRenderer), ahead of Playwright's events.
	rnav, rloaded atomic.Int64
	rparsed       atomic.Int64 // rnav when DOMContentLoaded last fired
	// navAsked is when the page last asked for a navigation of its main
	// frame in this tab (Unix nanoseconds; 0 when none is pending): set
	// by the renderer's Page.frameRequestedNavigation, cleared when the
	// navigation commits or turns into a download (see pendingNav).
	navAsked atomic.Int64
	opener   *tab
	state    tabState
	world    isolatedWorld
	watchAt  watchWorld // where its watch was last read (observations only)
	axSeen   seenNodes  // the accessibility nodes its last observation read (observations only)
	boxSeen  seenNodes  // the iframe elements its last observation placed (observations only)

	fmu    sync.Mutex
	frames map[playwright.Frame]*oopif // out-of-process frames (nil value: in-process)

	lastMeta string // fingerprint of the metadata last reported
	title    string // last seen title

	held atomic.Bool // a dialog blocks the page's script (dialogs.go)
	// initial is set while the tab still holds the initial document its
	// page was opened with (sandbox.PageOptions.KeepInitial): it is
	// given a blank document of its own before it is observed.
	initial atomic.Bool

	seenTitle atomic.Value // string: the title last read (live.go)
}

// oopif is an out-of-process frame and its own CDP session.
type oopif struct {
	frame   playwright.Frame
	sess    *cdpSession
	frameID string
	owner   int64 // backend node id of its iframe element in the parent's session, 0 if unknown
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
	if cfg.Image < ImageMarks || cfg.Image > ImageNone {
		return nil, fmt.Errorf("websurfer: unknown image kind %d", cfg.Image)
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
	if cfg.HangTimeout <= 0 {
		cfg.HangTimeout = DefaultHangTimeout
	}
	if cfg.DialogTimeout <= 0 {
		cfg.DialogTimeout = DefaultDialogTimeout
	}
	if cfg.HelpTimeout <= 0 {
		cfg.HelpTimeout = DefaultHelpTimeout
	}
	if cfg.SearchURL == "" {
		cfg.SearchURL = DefaultSearchURL
	}
	if cfg.AskTokens <= 0 {
		cfg.AskTokens = DefaultAskTokens
	}
	if cfg.AskTokens < 1000 {
		return nil, fmt.Errorf("websurfer: AskTokens %d is too small (minimum 1000)", cfg.AskTokens)
	}
	if err := CheckSearchURL(cfg.SearchURL); err != nil {
		return nil, fmt.Errorf("websurfer: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Surfer{cfg: cfg, log: log, sess: cfg.Session, known: map[playwright.Page]bool{}, quit: make(chan struct{}), pump: newFramePump()}
	s.mu.pump = s.pump
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.attach(ctx, cfg.Session); err != nil {
		return nil, err
	}
	return s, nil
}

// attach makes sess the surfer's session: its policy (narrowed by
// Config.Policy), its popups, and one blank tab.
func (s *Surfer) attach(ctx context.Context, sess *sandbox.Session) error {
	// The action gate decides with the session's own policy (the one the
	// sandbox enforces on every request); Config.Policy can only narrow it.
	pol := sess.Policy()
	switch {
	case pol == nil && s.cfg.Policy == nil:
		var err error
		if pol, err = policy.New(policy.Config{}); err != nil {
			return fmt.Errorf("websurfer: the default policy: %w", err)
		}
	case pol == nil:
		pol = s.cfg.Policy
	case s.cfg.Policy != nil:
		pol = pol.Narrow(s.cfg.Policy)
	}
	s.sess, s.cfg.Session, s.pol = sess, sess, pol
	s.red.Store(sess.Redactions())
	s.countDenials(sess)
	sess.Context().OnPage(func(p playwright.Page) {
		s.evmu.Lock()
		if !s.known[p] {
			s.popups = append(s.popups, p)
			s.opening = max(s.opening-1, 0)
		}
		s.evmu.Unlock()
	})
	// With SkipBlank the first tab keeps its initial document: the
	// caller navigates it before anything looks at it (see
	// observeInitial).
	page, err := sess.OpenPage(ctx, sandbox.PageOptions{KeepInitial: s.cfg.SkipBlank})
	if err != nil {
		return fmt.Errorf("opening a tab: %w", err)
	}
	t, err := s.newTab(ctx, page)
	if err != nil {
		page.Close()
		return err
	}
	t.initial.Store(s.cfg.SkipBlank)
	s.tabs, s.active, s.last = []*tab{t}, 0, nil
	s.publish()
	return nil
}

// ReplaceSession moves the surfer to a new browser session, after its
// browser crashed or disconnected: the old tabs are dropped (their browser
// is gone) and one blank tab opens in the new session. The caller reopens
// the page it wants.
func (s *Surfer) ReplaceSession(ctx context.Context, sess *sandbox.Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for _, t := range s.tabs {
		t.detachFrames()
		go t.sess.Detach() // may block on a dead connection
	}
	s.evmu.Lock()
	s.popups, s.opening, s.announced = nil, 0, 0
	s.evmu.Unlock()
	// Hosts approved in the lost session stay approved: it is the same
	// conversation with the same human.
	if old := s.sess; old != nil && old != sess {
		sess.Approvals().CopyFrom(old.Approvals())
		// So does what the person typed: it stays redacted.
		sess.Redactions().CopyFrom(old.Redactions())
	}
	return s.attach(ctx, sess)
}

// alive reports whether the browser is connected and the active page
// open and not crashed.
func (s *Surfer) alive() bool {
	if b := s.sess.Sandbox().Browser(); b != nil && !b.IsConnected() {
		return false
	}
	return !s.crashed()
}

// crashed reports whether the active tab's page crashed or closed.
func (s *Surfer) crashed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tabs) == 0 {
		return true
	}
	st := &s.tabs[s.active].state
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.crashed || st.closed
}

// withDirect gives c surf's own session on the same target, over the local
// browser's DevTools pipe, for the observation's commands. Without one
// (a remote browser) they go through Playwright.
func (s *Surfer) withDirect(ctx context.Context, c *cdpSession) *cdpSession {
	d, err := s.sess.DevTools(ctx, c.s)
	switch {
	case err == nil:
		c.direct = d
	case !errors.Is(err, sandbox.ErrNoDevTools):
		s.log.Warn("no direct devtools session; observing through playwright", "err", err)
	}
	return c
}

// newTab wraps a page: its CDP session and the events surf follows.
func (s *Surfer) newTab(ctx context.Context, page playwright.Page) (*tab, error) {
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
	t := &tab{page: page, sess: s.withDirect(ctx, newCDPSession(cs)), frames: map[playwright.Frame]*oopif{}}
	if g := s.sess.Sandbox().FrameGate(); g != nil {
		t.sess.frames = &frameSource{gate: g, sess: t.sess}
		go pumpTab(s.pump, t, s.quit, s.log)
	}
	page.OnFrameNavigated(func(f playwright.Frame) {
		if f == page.MainFrame() {
			t.nav.Add(1)
			t.initial.Store(false)
		}
	})
	page.OnLoad(func(playwright.Page) {
		t.loadAt.Store(time.Now().UnixNano())
		t.loaded.Store(t.nav.Load())
	})
	s.watch(t)
	if err := s.watchRenderer(ctx, t); err != nil {
		// Not a guard: waiting falls back to Playwright's events.
		s.log.Debug("following the tab's renderer", "err", err)
	}
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
// than surf's actions. Changes made through it are not journaled. In a
// browser whose frames are on demand the page draws no frame while the
// surfer is idle: see HoldFrames.
func (s *Surfer) Page() playwright.Page {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tabs[s.active].page
}

// Session is the browser session the surfer drives.
func (s *Surfer) Session() *sandbox.Session { return s.sess }

// Close closes the surfer's tabs. The session stays open.
func (s *Surfer) Close() error {
	s.gone.Store(true)
	s.quitOnce.Do(func() { close(s.quit) })
	s.stopCast()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.stopCount != nil {
		s.stopCount()
	}
	s.dismissDialog(nil, "surf closed") // a page blocked in a dialog would not close
	var errs []error
	// Downloads and pages of a browser that died or a page that crashed
	// may never answer: each wait is bounded (see cleanupWait).
	_ = bounded.Call(cleanupWait, func() error { s.dlWG.Wait(); return nil })
	for _, t := range s.tabs {
		t.detachFrames()
		t.sess.Detach()
		if err := bounded.Call(cleanupWait, func() error { return t.page.Close() }); err != nil && !strings.Contains(err.Error(), "closed") {
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

// Policy is the policy the surfer gates actions with.
func (s *Surfer) Policy() *policy.Policy { return s.pol }
