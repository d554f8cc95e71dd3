// Package login lets a person log in by hand in a sandboxed browser and
// saves the session's cookies and local storage to a state file, for
// later sessions to start logged in. The model never takes part: the
// password goes from the person to the site.
package login

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// ErrBrowserGone is returned when the browser went away (closed or
// crashed) before the state was saved; nothing was saved then.
var ErrBrowserGone = errors.New("the browser went away before the state was saved; nothing was saved")

// Config is one login.
type Config struct {
	// Sandbox is the browser's sandbox; its Policy decides which hosts
	// are visited, loaded and saved (see Policy). Headful shows the
	// window the person logs in through.
	Sandbox sandbox.Config
	// State is the file the login is saved to (and loaded from, when it
	// exists, so that logging into a second site keeps the first). It
	// must name a file.
	State sandbox.StateFile
	// Done is closed when the person is done logging in. Nil means the
	// login ends only when the last page closes (or ctx ends).
	Done <-chan struct{}
	// Opened, when set, is called once URL is open, with the page's title
	// and its address (redacted by the policy): the moment to tell the
	// person to log in.
	Opened func(title, url string)
}

// Policy is the policy of a login to u when no policy is given: the
// default one (any public host) plus u's own host, at any port, so that
// a login page on a private address works and so does a single sign-on
// provider on another public host.
func Policy(u *url.URL) (*policy.Policy, error) {
	// The host, not host:port: cookies belong to hosts, whatever the port.
	host, err := policy.ParseHostRule(u.Hostname())
	if err != nil {
		return nil, fmt.Errorf("the login URL's host: %w", err)
	}
	any, err := policy.ParseHostRule("*")
	if err != nil {
		return nil, err
	}
	return policy.New(policy.Config{Allow: []policy.HostRule{any, host}})
}

// Run opens the browser on rawURL, waits for the person (cfg.Done or the
// last page closing), and saves the state into cfg.State.Path. The
// session works on a copy of the file beside it, renamed over the file
// once saved: ctx ending, or a browser that goes away, leaves the file as
// it was.
func Run(ctx context.Context, cfg Config, rawURL string) (sandbox.StateSummary, error) {
	if cfg.State.Path == "" {
		return sandbox.StateSummary{}, errors.New("login: no state file to save to")
	}
	work, err := workCopy(cfg.State)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	defer os.Remove(work.Path)
	sb, err := sandbox.New(ctx, cfg.Sandbox)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	defer sb.Close()
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{State: work})
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	defer sess.Close()
	gone, closed := watch(sb, sess)
	page, err := sess.NewPage(ctx)
	if err != nil {
		return sandbox.StateSummary{}, err
	}
	pol := sb.Policy()
	if _, err := page.Goto(rawURL); err != nil {
		return sandbox.StateSummary{}, fmt.Errorf("opening %s: %w", pol.Redact(rawURL), err)
	}
	if cfg.Opened != nil {
		title, _ := page.Title()
		cfg.Opened(title, pol.Redact(page.URL()))
	}
	select {
	case <-cfg.Done:
	case <-closed:
	case <-gone:
		return sandbox.StateSummary{}, ErrBrowserGone
	case <-ctx.Done():
		return sandbox.StateSummary{}, ctx.Err()
	}
	return save(ctx, sess, work.Path, cfg.State.Path)
}

// watch reports the browser going away and the last page closing.
func watch(sb *sandbox.Sandbox, sess *sandbox.Session) (gone, closed <-chan struct{}) {
	g := make(chan struct{})
	if br := sb.Browser(); br != nil {
		br.OnDisconnected(func(playwright.Browser) { close(g) })
	}
	c := make(chan struct{}, 1)
	sess.Context().OnPage(func(p playwright.Page) {
		p.OnClose(func(playwright.Page) {
			if len(sess.Context().Pages()) == 0 {
				select {
				case c <- struct{}{}:
				default:
				}
			}
		})
	})
	return g, c
}

// save saves the session's state into work and renames it to path.
func save(ctx context.Context, sess *sandbox.Session, work, path string) (sandbox.StateSummary, error) {
	saveCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	sum, err := sess.SaveState(saveCtx)
	if err != nil {
		return sandbox.StateSummary{}, fmt.Errorf("saving the state: %w", err)
	}
	if err := sess.Close(); err != nil {
		return sandbox.StateSummary{}, err
	}
	if err := os.Rename(work, path); err != nil {
		return sandbox.StateSummary{}, fmt.Errorf("saving the state: %w", err)
	}
	sum.Path = path
	return sum, nil
}

// workCopy is the state file the login's session works on: a copy of
// the file (as it is, encrypted or not) beside it, or no file when there
// is none yet.
func workCopy(state sandbox.StateFile) (sandbox.StateFile, error) {
	dir, base := filepath.Split(state.Path)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, "."+base+".login-*")
	if err != nil {
		return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
	}
	defer f.Close()
	work := state
	work.Path = f.Name()
	old, err := os.Open(state.Path)
	if errors.Is(err, os.ErrNotExist) {
		os.Remove(f.Name()) // a missing file: the session starts empty
		return work, nil
	}
	if err == nil {
		defer old.Close()
		_, err = io.Copy(f, old)
	}
	if err != nil {
		os.Remove(f.Name())
		return sandbox.StateFile{}, fmt.Errorf("--state: %w", err)
	}
	return work, nil
}
