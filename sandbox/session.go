package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/internal/cdpmux"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// SessionConfig configures a session. The zero value is a 1280x720 en-US
// session in UTC with a private downloads directory and no uploads.
type SessionConfig struct {
	// Viewport is the page size in CSS pixels; zero means DefaultViewport.
	Viewport Viewport
	// DeviceScaleFactor is the device pixel ratio; zero means 1.
	DeviceScaleFactor float64
	// Locale is the browser locale; empty means en-US.
	Locale string
	// TimezoneID is an IANA time zone; empty means UTC.
	TimezoneID string
	// UserAgent overrides the browser's user agent; empty keeps it.
	UserAgent string
	// DownloadsDir keeps downloads after the session closes. Empty means a
	// private directory that is removed with the session.
	DownloadsDir string
	// UploadsDir is the only directory files may be uploaded from; empty
	// means uploads are refused.
	UploadsDir string
	// Timeout is Playwright's default timeout for actions and navigations;
	// zero means 15s.
	Timeout time.Duration
	// Logger receives debug logs; nil uses the sandbox's logger.
	Logger *slog.Logger

	// Policy narrows the sandbox's policy for this session: the session
	// may reach only what both allow, and action rules take the stricter
	// verdict. Its secrets replace the sandbox's when it has any. Nil
	// means the sandbox's policy.
	Policy *policy.Policy
	// OnDenial, when set, is called for every denial of the session's
	// enforcement layers, from their goroutines; it must not block. The
	// denials are also buffered for TakeDenials.
	OnDenial func(Denial)

	// RecordHAR, when set, is where Close writes a recording of the
	// session: Playwright's HAR of every response the session loaded from
	// the network, bodies embedded, for ReplayHAR. Its directory must
	// exist. See the package documentation, "Recordings".
	RecordHAR string
	// State, when its Path is set, is the session's saved identity: its
	// cookies and local storage are loaded at open and saved at Close
	// (see StateFile).
	State StateFile

	// ReplayHAR, when set, is a recording (as RecordHAR writes it) that
	// answers every request of the session: nothing goes to the network,
	// the policy still applies, and a request the recording does not
	// hold is refused and reported as a LayerReplay denial ("not in
	// recording: URL"). It excludes RecordHAR.
	ReplayHAR string
}

// SessionInfo describes a session, including the browser it runs in.
type SessionInfo struct {
	Info
	ID                int      `json:"id"`
	Viewport          Viewport `json:"viewport"`
	DeviceScaleFactor float64  `json:"device_scale_factor"`
	DownloadsDir      string   `json:"downloads_dir"`
	UploadsDir        string   `json:"uploads_dir,omitempty"`
	// Proxy is the address of the session's egress proxy ("" when off).
	Proxy string `json:"proxy,omitempty"`
	// RecordHAR and ReplayHAR are the absolute paths of the session's
	// recording, when it records or replays one.
	RecordHAR string `json:"record_har,omitempty"`
	ReplayHAR string `json:"replay_har,omitempty"`
}

// Session is an isolated browser context: its own cookies, storage, cache
// and downloads directory. Sessions of one sandbox run concurrently without
// seeing each other.
type Session struct {
	sb     *Sandbox
	bctx   playwright.BrowserContext
	info   SessionInfo
	tmp    string // removed on Close
	log    *slog.Logger
	closer sync.Once
	err    error
	closed chan struct{}

	pol     *policy.Policy
	denials *denialLog
	gate    *requestGate // nil when the request gate is off
	proxy   *egressProxy // nil when the egress proxy is off
	staging string       // upload staging dir, removed on Close

	// approvals are the hosts approved in this session; pol consults them.
	approvals *policy.Approvals
	// redactions are the strings typed by a person in this session; pol
	// redacts them.
	redactions *policy.Redactions

	stateMu     sync.Mutex   // guards state; held while saving
	state       StateFile    // the saved identity, if any
	stateLoaded StateSummary // what was loaded at open
}

// NewSession opens an isolated session.
func (s *Sandbox) NewSession(ctx context.Context, cfg SessionConfig) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, errors.New("sandbox is closed")
	}
	s.nextID++
	id := s.nextID
	s.mu.Unlock()

	vp := cfg.Viewport
	if vp.Width <= 0 || vp.Height <= 0 {
		vp = DefaultViewport
	}
	if vp.Width > 7680 || vp.Height > 4320 {
		return nil, fmt.Errorf("viewport %dx%d is larger than 7680x4320", vp.Width, vp.Height)
	}
	dsf := cfg.DeviceScaleFactor
	if dsf <= 0 {
		dsf = 1
	}
	if dsf > 4 {
		return nil, fmt.Errorf("device scale factor %g is larger than 4", dsf)
	}
	locale := cfg.Locale
	if locale == "" {
		locale = "en-US"
	}
	tz := cfg.TimezoneID
	if tz == "" {
		tz = "UTC"
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = s.log
	}
	record, replay, index, err := harPaths(cfg)
	if err != nil {
		return nil, err
	}

	pol := s.pol
	if cfg.Policy != nil {
		// Narrowing keeps one side's secrets: the session's when it has
		// any (secrets belong to the task), else the sandbox's.
		if len(cfg.Policy.SecretNames()) > 0 {
			pol = cfg.Policy.Narrow(s.pol)
		} else {
			pol = s.pol.Narrow(cfg.Policy)
		}
	}
	// Every layer (request gate, egress proxy, the action gate through
	// Policy) decides with the same approval set: an approved ask host is
	// open everywhere at once.
	approvals := policy.NewApprovals()
	// Text a person types into the session's pages (a takeover) is
	// redacted everywhere the policy redacts: denials, the HAR recording,
	// and what the websurfer shows the model and writes to the journal.
	redactions := policy.NewRedactions()
	pol = pol.WithApprovals(approvals).WithRedactions(redactions)
	sess := &Session{sb: s, log: log.With("session", id), closed: make(chan struct{}), pol: pol, approvals: approvals, redactions: redactions}
	sess.denials = &denialLog{pol: pol, hook: cfg.OnDenial}
	if err := cfg.State.check(); err != nil {
		return nil, err
	}
	sess.state = cfg.State
	if sess.state.Path != "" {
		if sess.state.Path, err = filepath.Abs(sess.state.Path); err != nil {
			return nil, err
		}
	}
	storage, err := sess.loadState()
	if err != nil {
		return nil, err
	}
	parent := s.tmp // empty for remote browsers: the system temp dir
	sess.tmp, err = os.MkdirTemp(parent, fmt.Sprintf("%ssession-%d-", tempPrefix(), id))
	if err != nil {
		return nil, fmt.Errorf("creating the session's temp dir: %w", err)
	}
	downloads := cfg.DownloadsDir
	if downloads == "" {
		downloads = filepath.Join(sess.tmp, "downloads")
	}
	if err := os.MkdirAll(downloads, 0o700); err != nil {
		os.RemoveAll(sess.tmp)
		return nil, fmt.Errorf("creating the downloads directory: %w", err)
	}
	if downloads, err = filepath.Abs(downloads); err != nil {
		os.RemoveAll(sess.tmp)
		return nil, err
	}
	uploads := cfg.UploadsDir
	if uploads != "" {
		if uploads, err = filepath.Abs(uploads); err != nil {
			os.RemoveAll(sess.tmp)
			return nil, err
		}
		if fi, err := os.Stat(uploads); err != nil || !fi.IsDir() {
			os.RemoveAll(sess.tmp)
			return nil, fmt.Errorf("uploads directory %s is not a directory", uploads)
		}
	}
	yes := true
	opts := playwright.BrowserNewContextOptions{
		Viewport:          &playwright.Size{Width: vp.Width, Height: vp.Height},
		Screen:            &playwright.Size{Width: vp.Width, Height: vp.Height},
		DeviceScaleFactor: &dsf,
		Locale:            &locale,
		TimezoneId:        &tz,
		AcceptDownloads:   &yes,
		ServiceWorkers:    playwright.ServiceWorkerPolicyBlock,
	}
	if cfg.UserAgent != "" {
		opts.UserAgent = &cfg.UserAgent
	}
	if storage != nil {
		opts.StorageState = storage
	}
	if record != "" {
		// Playwright writes its HAR when the context closes; Close turns
		// it into the recording.
		raw := sess.rawHAR()
		opts.RecordHarPath = &raw
		opts.RecordHarContent = playwright.HarContentPolicyEmbed
		opts.RecordHarMode = playwright.HarModeFull
	}
	if !s.cfg.DisableEgressProxy {
		sess.proxy, err = startProxy(proxyConfig{
			policy:     pol,
			resolver:   s.cfg.Resolver,
			listen:     s.cfg.ProxyListen,
			user:       "surf-" + randomToken(8),
			password:   randomToken(24),
			log:        sess.log.With("proxy", "session"),
			onDenial:   func(d Denial) { sess.denials.add(d) },
			checkToken: randomToken(16),
			offline:    replay != "",
		})
		if err != nil {
			os.RemoveAll(sess.tmp)
			return nil, fmt.Errorf("starting the session's egress proxy: %w", err)
		}
		// "<-loopback>" removes Chromium's implicit loopback bypass, so
		// loopback goes through the proxy too (Playwright adds it as
		// well, unless told not to by its environment).
		opts.Proxy = &playwright.Proxy{
			Server:   s.proxyURL(sess.proxy.Port()),
			Bypass:   playwright.String("<-loopback>"),
			Username: playwright.String(sess.proxy.cfg.user),
			Password: playwright.String(sess.proxy.cfg.password),
		}
	}
	fail := func(err error) (*Session, error) {
		if sess.bctx != nil {
			bounded.Call(10*time.Second, func() error { return sess.bctx.Close() })
		}
		if sess.proxy != nil {
			sess.proxy.Close()
		}
		os.RemoveAll(sess.tmp)
		return nil, err
	}
	bctx, err := s.browser.NewContext(opts)
	if err != nil {
		return fail(fmt.Errorf("opening a browser context: %w", cleanPlaywrightError(err)))
	}
	sess.bctx = bctx
	if sess.proxy != nil && s.info.Remote != "" {
		// A remote browser may not reach the proxy surf listens on: find
		// out now rather than with every page failing.
		if err := checkProxyReachable(bctx, sess.proxy.cfg.checkToken); err != nil {
			return fail(fmt.Errorf("the remote browser cannot reach surf's egress proxy at %s (set Config.ProxyListen and ProxyAdvertise to an address it can reach): %w",
				opts.Proxy.Server, err))
		}
	}
	if replay != "" {
		// Registered before the gate's route, so that the gate's runs
		// first (Playwright tries the last registered route first).
		if err := installReplay(bctx, index, pol, sess.log, sess.denials); err != nil {
			return fail(err)
		}
	}
	if !s.cfg.DisableRequestGate {
		// Before any page exists: the gate must see every page.
		sess.gate, err = installGate(bctx, pol, sess.log, sess.denials, sess.proxy != nil, replay != "")
		if err != nil {
			return fail(err)
		}
	}
	bctx.SetDefaultTimeout(float64(timeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(timeout.Milliseconds()))
	sess.info = SessionInfo{
		Info:              s.info,
		ID:                id,
		Viewport:          vp,
		DeviceScaleFactor: dsf,
		DownloadsDir:      downloads,
		UploadsDir:        uploads,
		RecordHAR:         record,
		ReplayHAR:         replay,
	}
	if sess.proxy != nil {
		sess.info.Proxy = sess.proxy.Addr()
	}
	bctx.OnClose(func(playwright.BrowserContext) {
		select {
		case <-sess.closed:
		default:
			sess.log.Debug("browser context closed")
		}
	})

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		sess.Close()
		return nil, errors.New("sandbox is closed")
	}
	s.sessions[sess] = struct{}{}
	s.mu.Unlock()
	return sess, nil
}

// checkProxyReachable loads the proxy's check page in a throwaway page of
// bctx (before the request gate is installed: the check host is not for
// the policy to judge).
func checkProxyReachable(bctx playwright.BrowserContext, token string) error {
	p, err := bctx.NewPage()
	if err != nil {
		return cleanPlaywrightError(err)
	}
	defer p.Close()
	resp, err := p.Goto("http://"+proxyCheckHost+"/"+token, playwright.PageGotoOptions{Timeout: playwright.Float(15000)})
	if err != nil {
		return cleanPlaywrightError(err)
	}
	if resp == nil {
		return errors.New("no response")
	}
	body, err := resp.Text()
	if err != nil || resp.Status() != 200 || strings.TrimSpace(body) != "surf proxy ok" {
		return fmt.Errorf("unexpected answer %d %.80q", resp.Status(), body)
	}
	return nil
}

// Context is the session's Playwright browser context. Pages opened from
// it directly are gated too; NewPage also waits for the gate to be in
// place before returning.
func (s *Session) Context() playwright.BrowserContext { return s.bctx }

// NewPage opens a page in the session and returns once the request gate
// is installed on it, so that its first navigation is judged like any
// other. The page holds a blank document of its own (see PageOptions).
func (s *Session) NewPage(ctx context.Context) (playwright.Page, error) {
	return s.OpenPage(ctx, PageOptions{})
}

// PageOptions configures OpenPage. The zero value is NewPage's.
type PageOptions struct {
	// KeepInitial leaves the page on the initial document every new page
	// starts with, saving a navigation for a caller whose first act is to
	// navigate it. That document paints at the window's size (1280x633
	// for a 1280x720 viewport) until the page holds a document of its
	// own; on a busy machine it sometimes paints at the viewport's. By
	// default the page is given a blank document of its own, so that a
	// screenshot of it has the viewport's size every time.
	KeepInitial bool
}

// OpenPage is NewPage with options.
func (s *Session) OpenPage(ctx context.Context, opts PageOptions) (playwright.Page, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.bctx.NewPage()
	if err != nil {
		return nil, fmt.Errorf("opening a page: %w", cleanPlaywrightError(err))
	}
	if s.gate != nil {
		if err := s.gate.waitPage(ctx, p); err != nil {
			p.Close()
			return nil, err
		}
	}
	if opts.KeepInitial {
		return p, nil
	}
	if _, err := p.Goto("about:blank"); err != nil {
		p.Close()
		return nil, fmt.Errorf("opening a page: %w", cleanPlaywrightError(err))
	}
	return p, nil
}

// Policy is the session's effective policy: the sandbox's, narrowed by
// SessionConfig.Policy. The action gate judges tool calls with it.
func (s *Session) Policy() *policy.Policy { return s.pol }

// Approve opens host, which the policy marks Ask (an ask entry), for the
// session: for ttl, or until the session closes when ttl is zero. The
// request gate, the egress proxy and Policy's decisions all let it
// through from then on; nothing else changes (other hosts of the same ask
// entry still ask, and denials stay denials). Call it only with a human's
// approval, such as a policy.Approver's yes.
func (s *Session) Approve(host string, ttl time.Duration) error {
	return s.approvals.Approve(host, ttl)
}

// Approvals is the session's set of approved hosts (see Approve).
func (s *Session) Approvals() *policy.Approvals { return s.approvals }

// Redactions is the session's run-time redaction set: text a person typed
// into its pages, which the session's policy (Policy) redacts wherever it
// redacts secrets, the HAR recording included. Add to it before the text
// can reach a page.
func (s *Session) Redactions() *policy.Redactions { return s.redactions }

// OnDenial calls f for every denial of the session from now on (after
// redaction, like TakeDenials' and SessionConfig.OnDenial's), until stop
// is called; TakeDenials still returns them. f runs on the goroutine that
// made the denial (the request gate's, the proxy's): it must return
// quickly and not call back into the session. Several callers may
// subscribe at once.
func (s *Session) OnDenial(f func(Denial)) (stop func()) {
	return s.denials.subscribe(f)
}

// TakeDenials returns the denials since the last call, oldest first, and
// forgets them. At most the last 256 are kept between calls.
func (s *Session) TakeDenials() []Denial {
	d, _ := s.denials.take()
	return d
}

// HasDenials reports whether there are denials for TakeDenials to return.
func (s *Session) HasDenials() bool { return s.denials.pending() }

// RecordDenial records a denial made outside the sandbox, such as the
// action gate's (Layer LayerAction): it is redacted, passed to OnDenial
// and returned by the next TakeDenials like the sandbox's own.
func (s *Session) RecordDenial(d Denial) Denial {
	if d.Layer == "" {
		d.Layer = LayerAction
	}
	return s.denials.add(d)
}

// StageUpload prepares a file for upload: path must be inside the
// session's UploadsDir (symbolic links resolved). The file is copied to a
// directory the browser can read (the OS sandbox hides the rest of the
// file system) and the copy's path is returned, for
// Locator.SetInputFiles. Staged copies are removed with the session.
func (s *Session) StageUpload(path string) (string, error) {
	if s.info.UploadsDir == "" {
		return "", errors.New("uploads are off for this session (no UploadsDir)")
	}
	root, err := filepath.EvalSymlinks(s.info.UploadsDir)
	if err != nil {
		return "", fmt.Errorf("uploads directory: %w", err)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.info.UploadsDir, path)
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", path, err)
	}
	if !isWithin(root, real) {
		return "", fmt.Errorf("upload %s is outside the uploads directory %s", path, s.info.UploadsDir)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("upload %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("upload %s is not a regular file", path)
	}
	base := s.sb.uploadsDir()
	if base == "" {
		base = s.tmp
	}
	dir, err := os.MkdirTemp(base, fmt.Sprintf("session-%d-", s.info.ID))
	if err != nil {
		return "", fmt.Errorf("staging upload: %w", err)
	}
	s.sb.mu.Lock()
	if s.staging == "" {
		s.staging = dir
	} else {
		os.Remove(dir)
		dir = s.staging
	}
	s.sb.mu.Unlock()
	sub, err := os.MkdirTemp(dir, "f-")
	if err != nil {
		return "", fmt.Errorf("staging upload: %w", err)
	}
	dst := filepath.Join(sub, filepath.Base(real))
	if err := copyFile(dst, real); err != nil {
		return "", fmt.Errorf("staging upload: %w", err)
	}
	return dst, nil
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o400)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Info describes the session.
func (s *Session) Info() SessionInfo { return s.info }

// Sandbox is the sandbox the session belongs to.
func (s *Session) Sandbox() *Sandbox { return s.sb }

// Done is closed when the session is closed.
func (s *Session) Done() <-chan struct{} { return s.closed }

// Close closes the session's pages and context and removes its private
// directories. Downloads kept in a configured DownloadsDir stay. A
// session with a state file saves it first, and a recording session
// (RecordHAR) writes its recording; an error says what could not be
// written. It is safe to call more than once.
func (s *Session) Close() error {
	s.closer.Do(func() {
		close(s.closed)
		stateErr := s.saveAtClose()
		if stateErr != nil {
			s.log.Warn("saving the state file", "err", stateErr)
		}
		wait := 10 * time.Second
		if s.info.RecordHAR != "" {
			wait = recordCloseTimeout // Playwright writes its HAR first
		}
		closeErr := bounded.Call(wait, func() error { return s.bctx.Close() })
		if closeErr != nil {
			s.log.Debug("closing the browser context", "err", closeErr)
		}
		if s.info.RecordHAR != "" {
			s.err = s.finishRecording(closeErr)
		}
		if s.proxy != nil {
			s.proxy.Close()
		}
		if err := os.RemoveAll(s.tmp); err != nil && s.err == nil {
			s.err = fmt.Errorf("removing the session's temp dir: %w", err)
		}
		s.sb.mu.Lock()
		staging := s.staging
		s.sb.mu.Unlock()
		if staging != "" {
			if err := os.RemoveAll(staging); err != nil && s.err == nil {
				s.err = fmt.Errorf("removing the session's staged uploads: %w", err)
			}
		}
		s.sb.mu.Lock()
		delete(s.sb.sessions, s)
		s.sb.mu.Unlock()
		s.err = errors.Join(stateErr, s.err)
	})
	return s.err
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// ErrNoDevTools is returned by Session.DevTools for a remote browser, whose
// DevTools connection surf does not hold.
var ErrNoDevTools = errors.New("sandbox: no direct DevTools channel (remote browser)")

// DevToolsSession is a DevTools session of surf's own. Call returns a
// command's result as raw JSON. Send writes a command and returns without
// its reply, so that commands sent one after another run in that order
// while their replies are awaited together.
type DevToolsSession interface {
	Call(ctx context.Context, method string, params any) ([]byte, error)
	Send(ctx context.Context, method string, params any) (DevToolsReply, error)
}

// DevToolsReply is the reply to a command sent with DevToolsSession.Send.
// Wait returns the command's result as raw JSON; a context that ends
// first abandons it. The relay's replies also have WaitCBOR (see
// cdpmux.Reply), for a caller that reads the browser's CBOR itself.
type DevToolsReply interface {
	Wait(ctx context.Context) ([]byte, error)
}

// devToolsSession is a DevToolsSession on the sandbox's relay.
type devToolsSession struct{ *cdpmux.Session }

func (d devToolsSession) Send(ctx context.Context, method string, params any) (DevToolsReply, error) {
	r, err := d.Session.Send(ctx, method, params)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// DevTools opens a DevTools session of surf's own on the target cs is
// attached to: one of this session's pages or frames. It runs on the local
// browser's DevTools pipe, which the sandbox holds (see package cdpmux), so
// its replies skip the Playwright driver's relay: for a DOM snapshot or a
// screenshot that relay costs more than the command. It returns
// ErrNoDevTools for a remote browser.
func (s *Session) DevTools(ctx context.Context, cs playwright.CDPSession) (DevToolsSession, error) {
	if s.sb.relay == nil {
		return nil, ErrNoDevTools
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r, err := cs.Send("Target.getTargetInfo", nil)
	if err != nil {
		return nil, fmt.Errorf("sandbox: finding the target: %w", err)
	}
	m, _ := r.(map[string]any)
	info, _ := m["targetInfo"].(map[string]any)
	id, _ := info["targetId"].(string)
	if id == "" {
		return nil, errors.New("sandbox: finding the target: no target id")
	}
	d, err := s.sb.relay.Attach(ctx, id)
	if err != nil {
		return nil, err
	}
	return devToolsSession{d}, nil
}
