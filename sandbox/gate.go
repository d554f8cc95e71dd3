package sandbox

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// The request gate judges every request of a session before the browser
// sends it. It has two halves, because neither covers everything alone:
//
//   - a Playwright context route ("**"): Playwright installs its
//     interception on every new target (page, popup, OOPIF, worker) before
//     the target runs, so the route sees every first request, including a
//     popup's first navigation. But Playwright continues redirect hops by
//     itself without calling the route.
//   - surf's own Fetch interception (CDP) on each page and each
//     out-of-process iframe: it sees every request that starts after it is
//     installed, and every redirect hop of those, before the browser sends
//     it. Two Fetch clients coexist; the one enabled last (surf's) sees a
//     request first.
//
// surf's interception is installed right after Playwright reports a new
// page or frame, so a target's first requests can start before it. The
// route therefore waits for it, and knows from what surf's interception
// recorded whether a request was seen (and so will have its hops judged).
// A main-frame GET navigation that was not seen (a popup's first
// navigation) is re-issued: the route answers it with a tiny document that
// replaces itself with the same URL, which now starts under surf's
// interception. Anything else that was not seen (a POST into a new window,
// the first subresources of an out-of-process iframe) has its first
// request judged by the route, and its redirect hops only by the egress
// proxy; with the proxy disabled, such navigations are blocked.
//
// WebSockets are not Fetch requests: the context's RouteWebSocket (a
// script Playwright injects into every frame) judges them in pages, and
// the egress proxy judges them everywhere (workers included).

// gateInstallTimeout bounds how long a request waits for the gate to be
// installed on its page or frame before it is refused.
const gateInstallTimeout = 15 * time.Second

// maxSeen bounds how many unclaimed request records a target keeps.
const maxSeen = 4096

// requestGate is one session's request gate.
type requestGate struct {
	pol     *policy.Policy
	bctx    playwright.BrowserContext
	log     *slog.Logger
	denials *denialLog
	// proxied: the egress proxy judges what the gate cannot see.
	proxied bool
	// replay: the session replays a recording (see har.go); allowed
	// requests fall back to the replay's routes instead of going to the
	// network, and WebSockets are refused (a recording has none).
	replay bool

	mu      sync.Mutex
	pages   map[playwright.Page]*targetGate
	frames  map[playwright.Frame]*frameGate
	targets map[string]*targetGate // OOPIF targets by target id
	// blockPages are the URLs recently answered with the block page.
	blockPages map[string]time.Time
}

// targetGate is surf's Fetch interception on one CDP target.
type targetGate struct {
	ready chan struct{} // closed once installed (or failed)
	err   error         // set before ready is closed
	cdp   playwright.CDPSession

	mu       sync.Mutex
	seen     map[string]int // "METHOD url" of first requests seen, not yet claimed
	nseen    int
	reissued map[string]time.Time // main-frame URLs re-issued recently
}

// frameGate says which target gate covers a subframe: its own (an
// out-of-process iframe) or its page's.
type frameGate struct {
	done chan struct{}
	tg   *targetGate
}

func newTargetGate() *targetGate {
	return &targetGate{ready: make(chan struct{}), seen: map[string]int{}, reissued: map[string]time.Time{}}
}

// installGate sets the gate up on a new, empty browser context. An error
// means the session must not start.
func installGate(bctx playwright.BrowserContext, pol *policy.Policy, log *slog.Logger, denials *denialLog, proxied, replay bool) (*requestGate, error) {
	g := &requestGate{
		pol: pol, bctx: bctx, log: log, denials: denials, proxied: proxied, replay: replay,
		pages:      map[playwright.Page]*targetGate{},
		frames:     map[playwright.Frame]*frameGate{},
		targets:    map[string]*targetGate{},
		blockPages: map[string]time.Time{},
	}
	bctx.OnPage(g.addPage)
	if err := bctx.Route("**", g.route); err != nil {
		return nil, fmt.Errorf("installing the request gate: %w", cleanPlaywrightError(err))
	}
	if err := bctx.RouteWebSocket("**", g.websocket); err != nil {
		return nil, fmt.Errorf("installing the request gate for websockets: %w", cleanPlaywrightError(err))
	}
	return g, nil
}

// pageGate returns the gate of page p, starting its installation if
// needed.
func (g *requestGate) pageGate(p playwright.Page) *targetGate {
	g.mu.Lock()
	tg, ok := g.pages[p]
	if !ok {
		tg = newTargetGate()
		g.pages[p] = tg
	}
	g.mu.Unlock()
	if !ok {
		go g.attach(tg, p)
		p.OnFrameNavigated(func(f playwright.Frame) {
			if f.ParentFrame() != nil {
				go g.frameNavigated(f)
			}
			go g.committed(p, f)
		})
		p.OnClose(func(playwright.Page) {
			g.mu.Lock()
			delete(g.pages, p)
			for f := range g.frames {
				if f.Page() == p {
					delete(g.frames, f)
				}
			}
			g.mu.Unlock()
		})
	}
	return tg
}

// addPage runs on Playwright's dispatch goroutine: it must not block.
func (g *requestGate) addPage(p playwright.Page) { g.pageGate(p) }

// attach installs surf's Fetch interception on target (a page or frame).
func (g *requestGate) attach(tg *targetGate, target any) {
	defer close(tg.ready)
	cdp, err := g.bctx.NewCDPSession(target)
	if err != nil {
		tg.err = err
		return
	}
	tg.install(g, cdp)
}

func (tg *targetGate) install(g *requestGate, cdp playwright.CDPSession) {
	tg.cdp = cdp
	cdp.On("Fetch.requestPaused", func(ev map[string]any) { go g.paused(tg, ev) })
	_, err := cdp.Send("Fetch.enable", map[string]any{
		"patterns": []any{map[string]any{"urlPattern": "*", "requestStage": "Request"}},
	})
	if err != nil {
		tg.err = fmt.Errorf("enabling request interception: %w", err)
	}
}

// frameNavigated re-checks which target covers a subframe: a navigation
// can move it into or out of its own process.
func (g *requestGate) frameNavigated(f playwright.Frame) {
	fg := &frameGate{done: make(chan struct{})}
	g.mu.Lock()
	g.frames[f] = fg
	g.mu.Unlock()
	g.resolveFrame(fg, f)
}

func (g *requestGate) resolveFrame(fg *frameGate, f playwright.Frame) {
	defer close(fg.done)
	page := f.Page()
	if page == nil {
		return
	}
	pg := g.pageGate(page)
	cdp, err := g.bctx.NewCDPSession(f)
	if err != nil {
		// Part of its parent's target (or gone): the page's gate covers it.
		fg.tg = pg
		return
	}
	res, err := cdp.Send("Target.getTargetInfo", nil)
	id := ""
	if m, ok := res.(map[string]any); ok && err == nil {
		if ti, ok := m["targetInfo"].(map[string]any); ok {
			id, _ = ti["targetId"].(string)
		}
	}
	g.mu.Lock()
	if tg, ok := g.targets[id]; ok && id != "" {
		g.mu.Unlock()
		cdp.Detach()
		fg.tg = tg
		return
	}
	tg := newTargetGate()
	if id != "" {
		g.targets[id] = tg
	}
	g.mu.Unlock()
	tg.install(g, cdp)
	close(tg.ready)
	fg.tg = tg
}

// committed judges a document that has committed in frame f without a
// request the gate could see: data: documents (a frame's, or a top-level
// one that the page's owner navigated to; Chromium refuses those from
// pages), and blob: documents. A denied one is replaced at once with an
// empty document (a main frame with the block page). Such documents bring
// no bytes from the network; what they request is judged like anything
// else.
func (g *requestGate) committed(p playwright.Page, f playwright.Frame) {
	u := f.URL()
	scheme, _, ok := strings.Cut(u, ":")
	if !ok {
		return
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "about", "chrome-error":
		// http(s) was judged before it was sent; about:blank and
		// about:srcdoc are allowed; error pages are Chromium's own.
		return
	}
	d := g.pol.DecideURL(policy.Navigation, u, "")
	if d.Allowed() || g.isBlockPage(u) {
		return
	}
	dn := g.denials.add(Denial{Layer: LayerRequest, Kind: policy.Navigation, URL: u, Host: d.Host, Decision: d, Navigation: true})
	g.log.Debug("request gate denied a committed document", "url", dn.URL, "reason", dn.Decision.Reason)
	if _, err := f.Goto("about:blank"); err != nil {
		g.log.Debug("request gate: replacing a denied document", "err", err)
		return
	}
	if f.ParentFrame() == nil {
		p.SetContent(blockPage(dn))
	}
}

// markBlockPage remembers that url is being answered with the block page.
func (g *requestGate) markBlockPage(url string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	for u, t := range g.blockPages {
		if now.Sub(t) > 30*time.Second {
			delete(g.blockPages, u)
		}
	}
	g.blockPages[url] = now
}

func (g *requestGate) isBlockPage(url string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.blockPages[url]
	return ok
}

// gateFor returns the target gate that covers requests of frame, waiting
// for its installation. nil means unknown or failed.
func (g *requestGate) gateFor(frame playwright.Frame) *targetGate {
	if frame == nil {
		return nil
	}
	page := frame.Page()
	if page == nil {
		return nil
	}
	pg := g.pageGate(page)
	timer := time.NewTimer(gateInstallTimeout)
	defer timer.Stop()
	select {
	case <-pg.ready:
	case <-timer.C:
		return nil
	}
	if pg.err != nil {
		return nil
	}
	if frame.ParentFrame() == nil {
		return pg
	}
	g.mu.Lock()
	fg, ok := g.frames[frame]
	if !ok {
		fg = &frameGate{done: make(chan struct{})}
		g.frames[frame] = fg
		go g.resolveFrame(fg, frame)
	}
	g.mu.Unlock()
	select {
	case <-fg.done:
	case <-timer.C:
		return nil
	}
	if fg.tg == nil || fg.tg.err != nil {
		return nil
	}
	return fg.tg
}

// seenKey is the key of a request in targetGate.seen. A URL's fragment is
// never sent: surf's interception reports it apart (urlFragment) while
// Playwright's route has the URL without it, so the key leaves it out.
func seenKey(method, url string) string {
	if i := strings.IndexByte(url, '#'); i >= 0 {
		url = url[:i]
	}
	return method + " " + url
}

func (tg *targetGate) addSeen(method, url string) {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.nseen >= maxSeen {
		// Requests Playwright never routes (favicons, frameless requests)
		// are never claimed; start over rather than grow.
		clear(tg.seen)
		tg.nseen = 0
	}
	tg.seen[seenKey(method, url)]++
	tg.nseen++
}

func (tg *targetGate) claimSeen(method, url string) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	k := seenKey(method, url)
	n := tg.seen[k]
	if n == 0 {
		return false
	}
	if n == 1 {
		delete(tg.seen, k)
	} else {
		tg.seen[k] = n - 1
	}
	tg.nseen--
	return true
}

// reissue reports whether url may be re-issued now (once per 10 seconds
// per page, so that a navigation surf's interception somehow never sees
// cannot loop).
func (tg *targetGate) reissue(url string) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	now := time.Now()
	for u, t := range tg.reissued {
		if now.Sub(t) > 10*time.Second {
			delete(tg.reissued, u)
		}
	}
	if _, ok := tg.reissued[url]; ok {
		return false
	}
	tg.reissued[url] = now
	return true
}

// route is the Playwright route handler: every first request of every
// target.
func (g *requestGate) route(r playwright.Route) {
	req := r.Request()
	url := req.URL()
	nav := req.IsNavigationRequest()
	kind := policy.Request
	if nav {
		kind = policy.Navigation
	}
	d := g.pol.DecideURL(kind, url, "")
	if !d.Allowed() {
		g.refuse(r, d, LayerRequest, kind, nav, url)
		return
	}
	frame := req.Frame()
	tg := g.gateFor(frame)
	if frame != nil && tg == nil {
		d = policy.Decision{Verdict: policy.Deny, Rule: "request-gate", URL: d.URL, Host: d.Host,
			Reason: "denied: surf could not install its request gate on this page (rule request-gate)"}
		g.refuse(r, d, LayerRequest, kind, nav, url)
		return
	}
	seen := tg != nil && tg.claimSeen(req.Method(), url)
	if !seen && nav && frame != nil && frame.ParentFrame() == nil {
		// The navigation started before surf's interception was on this
		// page (a popup's first navigation): its redirect hops would go
		// unjudged by the gate.
		if req.Method() == "GET" && tg.reissue(url) {
			g.log.Debug("request gate: re-issuing a navigation that started before the gate", "url", g.pol.Redact(url))
			r.Fulfill(playwright.RouteFulfillOptions{
				Status:  playwright.Int(200),
				Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
				Body:    reissuePage(url),
			})
			return
		}
		if !g.proxied {
			d = policy.Decision{Verdict: policy.Deny, Rule: "request-gate", URL: d.URL, Host: d.Host,
				Reason: "denied: this navigation started before surf's request gate was on the page, so its redirects cannot be checked, and the egress proxy is off (rule request-gate)"}
			g.refuse(r, d, LayerRequest, kind, nav, url)
			return
		}
	}
	if !seen && tg != nil {
		g.log.Debug("request gate: request started before the gate; its redirects are left to the egress proxy", "url", g.pol.Redact(url))
	}
	if g.replay {
		// On to the replay's routes, registered before the gate's (see
		// installReplay): the recording answers, never the network.
		r.Fallback()
		return
	}
	r.Continue()
}

// refuse answers a denied routed request: a block page for a document
// navigation, a blocked-by-client error for anything else.
func (g *requestGate) refuse(r playwright.Route, d policy.Decision, layer string, kind policy.Kind, nav bool, url string) {
	dn := g.denials.add(Denial{Layer: layer, Kind: kind, URL: url, Host: d.Host, Decision: d, Navigation: nav})
	g.log.Debug("request gate denied", "layer", layer, "url", dn.URL, "reason", dn.Decision.Reason)
	if nav {
		g.markBlockPage(url)
		r.Fulfill(playwright.RouteFulfillOptions{
			Status:  playwright.Int(403),
			Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
			Body:    blockPage(dn),
		})
		return
	}
	r.Abort("blockedbyclient")
}

// paused handles surf's own Fetch interception: every request of the
// target after installation, and every redirect hop.
func (g *requestGate) paused(tg *targetGate, ev map[string]any) {
	id, _ := ev["requestId"].(string)
	req, _ := ev["request"].(map[string]any)
	url, _ := req["url"].(string)
	if frag, _ := req["urlFragment"].(string); frag != "" {
		url += frag // for the policy and the denial log; seenKey drops it
	}
	method, _ := req["method"].(string)
	rtype, _ := ev["resourceType"].(string)
	hop := ev["redirectedRequestId"] != nil
	nav := rtype == "Document"
	kind := policy.Request
	if nav {
		kind = policy.Navigation
	}
	d := g.pol.DecideURL(kind, url, "")
	if d.Allowed() {
		if !hop {
			tg.addSeen(method, url)
		}
		g.send(tg, "Fetch.continueRequest", map[string]any{"requestId": id})
		return
	}
	layer := LayerRequest
	if hop {
		layer = LayerRedirect
	}
	dn := g.denials.add(Denial{Layer: layer, Kind: kind, URL: url, Host: d.Host, Decision: d, Navigation: nav})
	g.log.Debug("request gate denied", "layer", layer, "url", dn.URL, "reason", dn.Decision.Reason)
	if nav {
		g.markBlockPage(url)
		g.send(tg, "Fetch.fulfillRequest", map[string]any{
			"requestId":    id,
			"responseCode": 403,
			"responseHeaders": []any{
				map[string]any{"name": "Content-Type", "value": "text/html; charset=utf-8"},
				map[string]any{"name": "Cache-Control", "value": "no-store"},
			},
			"body": base64.StdEncoding.EncodeToString([]byte(blockPage(dn))),
		})
		return
	}
	g.send(tg, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"})
}

func (g *requestGate) send(tg *targetGate, method string, params map[string]any) {
	if _, err := tg.cdp.Send(method, params); err != nil {
		// The target went away with the request; nothing was sent.
		g.log.Debug("request gate", "method", method, "err", cleanPlaywrightError(err))
	}
}

// websocket judges a page's WebSocket before it connects.
func (g *requestGate) websocket(ws playwright.WebSocketRoute) {
	url := ws.URL()
	d := g.pol.DecideURL(policy.Request, url, "")
	if d.Allowed() && g.replay {
		// Recordings hold no WebSockets; replay is offline.
		dn := g.denials.add(notRecorded(url, policy.Request, false, d))
		g.log.Debug("replay refused a websocket", "url", dn.URL)
		ws.Close(playwright.WebSocketRouteCloseOptions{Code: playwright.Int(1008), Reason: playwright.String("not in recording")})
		return
	}
	if !d.Allowed() {
		dn := g.denials.add(Denial{Layer: LayerRequest, Kind: policy.Request, URL: url, Host: d.Host, Decision: d})
		g.log.Debug("request gate denied", "layer", LayerRequest, "url", dn.URL, "reason", dn.Decision.Reason)
		ws.Close(playwright.WebSocketRouteCloseOptions{Code: playwright.Int(1008), Reason: playwright.String("blocked by surf")})
		return
	}
	if _, err := ws.ConnectToServer(); err != nil {
		g.log.Debug("request gate: websocket", "err", err)
	}
}

// waitPage waits until the gate is installed on p.
func (g *requestGate) waitPage(ctx context.Context, p playwright.Page) error {
	tg := g.pageGate(p)
	select {
	case <-tg.ready:
		if tg.err != nil {
			return fmt.Errorf("installing the request gate on the page: %w", tg.err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// blockPage is the document shown instead of a denied navigation: what
// was blocked and why, never the content.
func blockPage(d Denial) string {
	return `<!doctype html><html><head><meta charset="utf-8"><title>Blocked by surf</title><link rel="icon" href="data:,"></head>` +
		`<body><h1>Blocked by surf</h1><p>surf's policy did not allow this navigation.</p>` +
		`<p>URL: <code>` + html.EscapeString(d.URL) + `</code></p>` +
		`<p>Reason: ` + html.EscapeString(d.Decision.Reason) + `</p></body></html>`
}

// reissuePage replaces itself with url: the new navigation starts under
// surf's interception.
func reissuePage(url string) string {
	q, _ := json.Marshal(url) // escapes <, > and &: safe inside <script>
	return `<!doctype html><html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">` +
		`<script>location.replace(` + string(q) + `)</script></head><body></body></html>`
}
