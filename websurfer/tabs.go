package websurfer

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// DefaultMaxDownloadBytes caps one download unless Config.MaxDownloadBytes
// says otherwise.
const DefaultMaxDownloadBytes = 100 << 20

// history is a tab's own list of visited URLs. surf keeps it because the
// browser's history breaks after popups and redirects; back and forward
// walk this list.
type history struct {
	urls []string
	pos  int
	// walking is set while back/forward navigate, so the navigation does
	// not push.
	walking bool
}

func (h *history) push(u string) {
	if h.walking || u == "" || u == "about:blank" {
		return
	}
	if len(h.urls) > 0 && h.urls[h.pos] == u {
		return
	}
	h.urls = append(h.urls[:min(h.pos+1, len(h.urls))], u)
	if len(h.urls) > 200 {
		h.urls = h.urls[len(h.urls)-200:]
	}
	h.pos = len(h.urls) - 1
}

// tabState is the part of a tab that Playwright's event goroutine writes.
type tabState struct {
	mu       sync.Mutex
	hist     history
	inflight map[playwright.Request]time.Time // when each began
	// rendered are the requests in flight as the renderer reports them
	// on surf's own devtools session (by request id): in the same stream
	// as its load event, so a fetch a script starts before load is
	// always known by the time the load is, which Playwright's request
	// events (delayed by interception) do not promise.
	rendered map[string]time.Time
	lastNet  time.Time
	crashed  bool
	closed   bool
	// hung is set when the page stopped responding and was closed
	// (hang.go); the tab is replaced like a crashed one.
	hung bool
}

// watch installs the tab's event handlers: navigations (history),
// network activity (for waiting), dialogs, downloads and crashes.
func (s *Surfer) watch(t *tab) {
	st := &t.state
	st.inflight = map[playwright.Request]time.Time{}
	p := t.page
	p.OnFrameNavigated(func(f playwright.Frame) {
		if f != p.MainFrame() {
			return
		}
		st.mu.Lock()
		st.hist.push(f.URL())
		// A new document: what the old one had in flight no longer
		// matters (and some of it, such as favicon fetches, is never
		// reported finished).
		if len(st.inflight) > 0 {
			clear(st.inflight)
		}
		st.mu.Unlock()
	})
	p.OnRequest(func(r playwright.Request) {
		now := time.Now()
		st.mu.Lock()
		st.inflight[r] = now
		st.lastNet = now
		st.mu.Unlock()
	})
	done := func(r playwright.Request) {
		st.mu.Lock()
		delete(st.inflight, r)
		st.lastNet = time.Now()
		st.mu.Unlock()
	}
	p.OnRequestFinished(done)
	p.OnRequestFailed(done)
	p.OnDialog(func(d playwright.Dialog) { s.onDialog(t, d) })
	p.OnDownload(s.startSaving)
	p.OnCrash(func(playwright.Page) {
		st.mu.Lock()
		st.crashed = true
		st.mu.Unlock()
		// The next action or observation replaces the tab and reports
		// the crash (renewCrashed).
	})
	p.OnClose(func(playwright.Page) {
		st.mu.Lock()
		st.closed = true
		st.mu.Unlock()
	})
}

// pushEvent queues an event from Playwright's goroutines.
func (s *Surfer) pushEvent(e Event) {
	s.evmu.Lock()
	s.pending = append(s.pending, e)
	if len(s.pending) > 50 {
		s.pending = s.pending[len(s.pending)-50:]
	}
	s.evmu.Unlock()
}

// takeEvents drains the queued events.
func (s *Surfer) takeEvents() []Event {
	s.evmu.Lock()
	defer s.evmu.Unlock()
	out := s.pending
	s.pending = nil
	return out
}

// netIdle reports whether the tab has had no request start or end, and no
// load event, for quiet and has none in flight (long requests aside, see
// longRequest).
func (t *tab) netIdle(quiet time.Duration) bool {
	st := &t.state
	st.mu.Lock()
	defer st.mu.Unlock()
	if time.Since(st.lastNet) < quiet || time.Since(time.Unix(0, t.loadAt.Load())) < quiet {
		return false
	}
	return idleSet(st.inflight) && idleSet(st.rendered)
}

// idleSet reports whether requests holds no request younger than
// longRequest, forgetting those too old to be still coming.
func idleSet[K comparable](requests map[K]time.Time) bool {
	idle := true
	for r, began := range requests {
		age := time.Since(began)
		if age < longRequest {
			idle = false
		}
		if age > 10*longRequest {
			delete(requests, r) // never reported finished
		}
	}
	return idle
}

// watchRenderer follows the tab's network and load events on surf's own
// devtools session (see tabState.rendered) and the windows its page opens
// (see Surfer.opening). It fails when the session cannot enable the
// domains; waiting then relies on Playwright's events alone.
func (s *Surfer) watchRenderer(ctx context.Context, t *tab) error {
	st := &t.state
	st.mu.Lock()
	st.rendered = map[string]time.Time{}
	st.mu.Unlock()
	cs := t.sess.s
	id := func(ev map[string]any) string { s, _ := ev["requestId"].(string); return s }
	var mainFrame atomic.Value // string: the main frame's id, the same for the tab's life
	mainFrame.Store("")
	cs.On("Network.requestWillBeSent", func(ev map[string]any) {
		if ev["type"] == "Document" && ev["frameId"] != mainFrame.Load() {
			// A frame's navigation may end in another process, which
			// reports it there (Playwright's events cover those).
			return
		}
		now := time.Now()
		st.mu.Lock()
		if _, ok := st.rendered[id(ev)]; !ok { // a redirect keeps its id
			st.rendered[id(ev)] = now
		}
		st.lastNet = now
		st.mu.Unlock()
	})

	finished := func(ev map[string]any) {
		st.mu.Lock()
		if _, ok := st.rendered[id(ev)]; ok {
			delete(st.rendered, id(ev))
			st.lastNet = time.Now()
		}
		st.mu.Unlock()
	}
	cs.On("Network.loadingFinished", finished)
	cs.On("Network.loadingFailed", finished)
	cs.On("Page.domContentEventFired", func(map[string]any) { t.rparsed.Store(t.rnav.Load()) })
	cs.On("Page.loadEventFired", func(map[string]any) {
		t.loadAt.Store(time.Now().UnixNano())
		t.rloaded.Store(t.rnav.Load())
	})
	// A link click asks for a navigation in the renderer at once; the
	// request itself, and the download it may turn into, come later (on a
	// busy machine, after settle's first wait would have given up).
	cs.On("Page.frameRequestedNavigation", func(ev map[string]any) {
		if ev["frameId"] == mainFrame.Load() && ev["disposition"] == "currentTab" {
			t.navAsked.Store(time.Now().UnixNano())
		}
	})
	cs.On("Network.responseReceived", func(ev map[string]any) {
		// A document answered with no content leaves the page as it is.
		if ev["type"] == "Document" && ev["frameId"] == mainFrame.Load() {
			if r, _ := ev["response"].(map[string]any); r != nil && (r["status"] == 204.0 || r["status"] == 205.0) {
				t.navAsked.Store(0)
			}
		}
	})
	cs.On("Page.navigatedWithinDocument", func(ev map[string]any) {
		if ev["frameId"] == mainFrame.Load() {
			t.navAsked.Store(0) // a same-document navigation (#anchor) ends it
		}
	})
	cs.On("Page.frameNavigated", func(ev map[string]any) {
		if f, _ := ev["frame"].(map[string]any); f != nil && f["parentId"] == nil {
			t.navAsked.Store(0)
			t.rnav.Add(1)
			st.mu.Lock()
			st.lastNet = time.Now() // a commit is activity: quiet counts from it
			clear(st.rendered)      // the old document's requests no longer matter
			st.mu.Unlock()
		}
	})
	cs.On("Page.downloadWillBegin", func(ev map[string]any) {
		t.navAsked.Store(0) // the navigation asked for is a download
		s.onRendererDownload("Page.downloadWillBegin", ev)
		s.evmu.Lock()
		s.announced++
		s.evmu.Unlock()
	})
	cs.On("Page.downloadProgress", func(ev map[string]any) { s.onRendererDownload("Page.downloadProgress", ev) })
	cs.On("Page.windowOpen", func(map[string]any) {
		s.evmu.Lock()
		s.opening++
		s.evmu.Unlock()
	})
	if err := t.sess.Call(ctx, "Page.enable", nil, nil); err != nil {
		return err
	}
	var tree page.GetFrameTreeResult
	if err := t.sess.Call(ctx, page.CommandGetFrameTree, nil, &tree); err != nil {
		return err
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return errors.New("the tab has no main frame")
	}
	mainFrame.Store(string(tree.FrameTree.Frame.ID))
	// Only the events: no response bodies kept for this session, no
	// request bodies in them.
	return t.sess.Call(ctx, "Network.enable", map[string]any{"maxTotalBufferSize": 0, "maxResourceBufferSize": 0, "maxPostDataSize": 0}, nil)
}

// longRequest is how long a request may be in flight before waiting for
// quiet ignores it: long polls, streams and requests the browser never
// reports finished would otherwise hold every wait to its cap.
const longRequest = 2 * time.Second
