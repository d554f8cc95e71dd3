package websurfer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/surfkit/surf/sandbox"
)

// LaunchConfig is what Launch starts: a sandboxed browser, one session in
// it and a surfer on that session.
type LaunchConfig struct {
	// Sandbox is the browser's configuration.
	Sandbox sandbox.Config
	// Session is the session's; a relaunch opens its new session with it
	// too.
	Session sandbox.SessionConfig
	// Surfer is the surfer's; Launch sets its Session. Its Logger also
	// gets Launch's own warnings.
	Surfer Config
}

// Browser is a sandbox, a session in it and a surfer on the session, as
// Launch opened them: what a program that drives one surfer holds. Close
// closes all three.
type Browser struct {
	cfg  LaunchConfig
	surf *Surfer

	mu   sync.Mutex
	sb   *sandbox.Sandbox
	sess *sandbox.Session
	olds sync.WaitGroup // sandboxes a relaunch replaced, closing
}

// Launch starts the sandbox, opens a session and starts a surfer on it. A
// browser that dies while it starts (killed or crashed before the session
// is ready) is no reason to fail: Launch tries once more.
func Launch(ctx context.Context, cfg LaunchConfig) (*Browser, error) {
	log := cfg.Surfer.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return retryLost(ctx, log, func() (*Browser, error) { return launch(ctx, cfg) })
}

// retryLost runs open, and runs it once more if the browser it launched
// was gone before the session was ready.
func retryLost[T any](ctx context.Context, log *slog.Logger, open func() (T, error)) (T, error) {
	v, err := open()
	if err == nil || ctx.Err() != nil || !sandbox.BrowserGone(err) {
		return v, err
	}
	log.Warn("the browser was lost while the session opened; trying again", "err", err)
	return open()
}

func launch(ctx context.Context, cfg LaunchConfig) (*Browser, error) {
	sb, err := sandbox.New(ctx, cfg.Sandbox)
	if err != nil {
		return nil, err
	}
	sess, err := sb.NewSession(ctx, cfg.Session)
	if err != nil {
		sb.Close()
		return nil, err
	}
	scfg := cfg.Surfer
	scfg.Session = sess
	surf, err := New(ctx, scfg)
	if err != nil {
		sess.Close()
		sb.Close()
		return nil, err
	}
	return &Browser{cfg: cfg, surf: surf, sb: sb, sess: sess}, nil
}

// Surfer is the browser's surfer; it stays the same across relaunches.
func (b *Browser) Surfer() *Surfer { return b.surf }

// Session is the surfer's current session.
func (b *Browser) Session() *sandbox.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess
}

// Sandbox is the current browser.
func (b *Browser) Sandbox() *sandbox.Sandbox {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb
}

// ErrRelaunchRecording is Relaunch's error when the session records a
// HAR: a new session would write a recording without the pages of the
// one that died.
var ErrRelaunchRecording = errors.New("the browser died while recording a HAR; the recording would be incomplete, so the run stops")

// Relaunch replaces a browser that crashed or disconnected: a new sandbox
// with the same configuration and a session in it, which it returns (and
// Session then gives). It is RunOptions.Relaunch for a run of the
// browser's surfer; the run tries again once if the new browser dies too
// before its session is ready. The old sandbox is closed in the
// background, and Close waits for it.
func (b *Browser) Relaunch(ctx context.Context) (*sandbox.Session, error) {
	if b.cfg.Session.RecordHAR != "" {
		return nil, ErrRelaunchRecording
	}
	sb, err := sandbox.New(ctx, b.cfg.Sandbox)
	if err != nil {
		return nil, err
	}
	sess, err := sb.NewSession(ctx, b.cfg.Session)
	if err != nil {
		sb.Close()
		return nil, err
	}
	b.mu.Lock()
	old := b.sb
	b.sb, b.sess = sb, sess
	b.mu.Unlock()
	b.olds.Add(1)
	go func() { // its browser is gone; clean up what is left
		defer b.olds.Done()
		old.Close()
	}()
	return sess, nil
}

// Close closes the surfer, the session and the sandbox, and waits for the
// sandboxes relaunches replaced. Its error is the session's: a recording
// or a state file that could not be written.
func (b *Browser) Close() error {
	b.surf.Close()
	b.mu.Lock()
	sb, sess := b.sb, b.sess
	b.mu.Unlock()
	err := sess.Close()
	sb.Close()
	b.olds.Wait()
	return err
}

// CheckSearchURL reports whether s can be Config.SearchURL: an http(s) URL
// with a host and exactly one %s, where the query goes.
func CheckSearchURL(s string) error {
	if strings.Count(s, "%s") != 1 {
		return fmt.Errorf("search URL %q does not have one %%s for the query", s)
	}
	u, err := url.Parse(strings.Replace(s, "%s", "q", 1))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("search URL %q is not an http(s) URL", s)
	}
	return nil
}
