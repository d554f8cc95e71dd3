package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/playwright-community/playwright-go"
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
}

// SessionInfo describes a session, including the browser it runs in.
type SessionInfo struct {
	Info
	ID                int      `json:"id"`
	Viewport          Viewport `json:"viewport"`
	DeviceScaleFactor float64  `json:"device_scale_factor"`
	DownloadsDir      string   `json:"downloads_dir"`
	UploadsDir        string   `json:"uploads_dir,omitempty"`
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

	sess := &Session{sb: s, log: log.With("session", id), closed: make(chan struct{})}
	var err error
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
	bctx, err := s.browser.NewContext(opts)
	if err != nil {
		os.RemoveAll(sess.tmp)
		return nil, fmt.Errorf("opening a browser context: %w", cleanPlaywrightError(err))
	}
	bctx.SetDefaultTimeout(float64(timeout.Milliseconds()))
	bctx.SetDefaultNavigationTimeout(float64(timeout.Milliseconds()))
	sess.bctx = bctx
	sess.info = SessionInfo{
		Info:              s.info,
		ID:                id,
		Viewport:          vp,
		DeviceScaleFactor: dsf,
		DownloadsDir:      downloads,
		UploadsDir:        uploads,
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

// Context is the session's Playwright browser context.
func (s *Session) Context() playwright.BrowserContext { return s.bctx }

// Info describes the session.
func (s *Session) Info() SessionInfo { return s.info }

// Sandbox is the sandbox the session belongs to.
func (s *Session) Sandbox() *Sandbox { return s.sb }

// Done is closed when the session is closed.
func (s *Session) Done() <-chan struct{} { return s.closed }

// Close closes the session's pages and context and removes its private
// directories. Downloads kept in a configured DownloadsDir stay. It is safe
// to call more than once.
func (s *Session) Close() error {
	s.closer.Do(func() {
		close(s.closed)
		if err := within(10*time.Second, func() error { return s.bctx.Close() }); err != nil {
			s.log.Debug("closing the browser context", "err", err)
		}
		if err := os.RemoveAll(s.tmp); err != nil {
			s.err = fmt.Errorf("removing the session's temp dir: %w", err)
		}
		s.sb.mu.Lock()
		delete(s.sb.sessions, s)
		s.sb.mu.Unlock()
	})
	return s.err
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
