package websurfer

import (
	"context"
	"fmt"
	"time"

	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/sandbox"
)

// relaunchAttempts is how many times a run tries to open a new browser
// session after losing one: the new browser can die too while its session
// opens (the cause that killed the first may still be at work), and one
// retry covers that.
const relaunchAttempts = 2

// relaunch replaces the surfer's session with a new one from
// RunOptions.Relaunch, trying again once when the new browser is gone
// before the session is ready.
func (r *run) relaunch(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= relaunchAttempts; attempt++ {
		var sess *sandbox.Session
		sess, err = r.o.Relaunch(ctx)
		if err == nil {
			err = r.s.ReplaceSession(ctx, sess)
			if err != nil {
				err = fmt.Errorf("opening a tab in the new browser: %w", err)
			}
		}
		if err == nil {
			r.s.cfg.Metrics.BrowserRestarted()
		}
		if err == nil || ctx.Err() != nil || !browserGone(err) {
			return err
		}
		r.log.Warn("the new browser was lost while its session opened", "attempt", attempt, "err", err)
	}
	return err
}

// browserConnected reports whether the session's browser is still
// connected (a page of it may have crashed).
func (s *Surfer) browserConnected() bool {
	b := s.sess.Sandbox().Browser()
	return b == nil || b.IsConnected()
}

// renewCrashed replaces each tab whose page crashed (its renderer died,
// out of memory for example) with a fresh tab in the same browser context,
// so cookies and storage are kept and the next action works. The new tab
// is blank, keeps the crashed tab's place, history and opener, and gets
// the request gate like every page. Each replacement is reported as a
// "crash" event. The caller holds s.mu.
func (s *Surfer) renewCrashed(ctx context.Context) error {
	for i, t := range s.tabs {
		st := &t.state
		st.mu.Lock()
		crashed, hung := st.crashed, st.hung
		st.mu.Unlock()
		if !crashed && !hung {
			continue
		}
		s.cfg.Metrics.TabCrashed()
		url := t.page.URL()
		page, err := s.sess.NewPage(ctx)
		if err != nil {
			return fmt.Errorf("replacing crashed tab %d: %w", i, err)
		}
		nt, err := s.newTab(ctx, page)
		if err != nil {
			page.Close()
			return fmt.Errorf("replacing crashed tab %d: %w", i, err)
		}
		st.mu.Lock()
		hist := st.hist
		hist.urls = append([]string(nil), hist.urls...)
		hist.walking = false
		st.mu.Unlock()
		nt.state.mu.Lock()
		nt.state.hist = hist
		nt.state.mu.Unlock()
		nt.opener = t.opener
		for _, o := range s.tabs {
			if o.opener == t {
				o.opener = nt
			}
		}
		s.tabs[i] = nt
		if s.last != nil && s.last.tab == t {
			s.last = nil
		}
		t.detachFrames()
		go func() { // a crashed page may answer slowly, or never
			t.sess.Detach()
			_ = t.page.Close()
		}()
		if i == s.active {
			s.front()
		}
		if hung {
			s.pushEvent(Event{Kind: "hung", URL: url, Message: ErrNotResponding.Error() + hungDetail(i, url)})
			s.log.Info("replaced a tab that was not responding", "tab", i, "url", url)
			continue
		}
		s.pushEvent(Event{Kind: "crash", URL: url, Message: fmt.Sprintf(
			"the page in tab %d (%s) crashed; it was replaced by a blank tab in the same session (cookies kept): visit a page to go on", i, q(url, 200))})
		s.log.Info("replaced a crashed tab", "tab", i, "url", url)
	}
	return nil
}

// renewTab replaces the crashed tabs after an error the crash caused, and
// records it like a relaunch.
func (r *run) renewTab(ctx context.Context, st *Step) error {
	r.s.mu.Lock()
	err := r.s.renewCrashed(ctx)
	r.s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("replacing a crashed tab: %w", err)
	}
	msg := "the page crashed and its tab was replaced by a blank one in the same session"
	st.Recovered = msg
	r.notes = append(r.notes, msg+".")
	r.j.Write(journal.Entry{Event: journal.KindRecovered, Step: st.N, Message: msg})
	return nil
}

// pageCrashed reports whether a tab's page crashed (see renewCrashed).
func (s *Surfer) pageCrashed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tabs {
		t.state.mu.Lock()
		c := t.state.crashed
		t.state.mu.Unlock()
		if c {
			return true
		}
	}
	return false
}

// cleanupWait bounds each Playwright call surf makes to let go of a tab
// (detaching its sessions, closing it, finishing its downloads). The
// driver does not always answer once the tab's page crashed or its
// browser died, and such a call would otherwise never return.
const cleanupWait = 5 * time.Second
