package sandbox

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// Recording and replay (SessionConfig.RecordHAR, ReplayHAR): see the
// package documentation, "Recordings".

// Limits of a recording. An entry (request, response headers and the
// embedded body, as JSON) larger than harEntryLimit is left out, and so is
// every entry once the recording holds harTotalLimit bytes of entries; the
// HAR's log.comment says how many were left out, and replay reports them
// as not in the recording. (Variables for the tests.)
var (
	harEntryLimit = 16 << 20
	harTotalLimit = 256 << 20
)

// RuleReplay is the Decision.Rule of LayerReplay denials.
const RuleReplay = "replay"

// notRecorded is the denial of a request that a replaying session did not
// find in its recording. d is the policy's decision on the URL, for its
// normalized form and host.
func notRecorded(url string, kind policy.Kind, nav bool, d policy.Decision) Denial {
	shown := url
	if d.URL != "" {
		shown = d.URL
	}
	return Denial{Layer: LayerReplay, Kind: kind, URL: url, Host: d.Host, Navigation: nav,
		Decision: policy.Decision{Verdict: policy.Deny, Rule: RuleReplay, URL: d.URL, Host: d.Host,
			Reason: "not in recording: " + textcut.Bytes(shown, 200)}}
}

// harReplay answers a session's requests from a recording.
type harReplay struct {
	pol     *policy.Policy
	log     *slog.Logger
	denials *denialLog
	index   *harIndex
}

// installReplay answers every request of bctx from the recording idx. It
// must run before installGate: Playwright tries a context's routes last
// registered first, the request gate's route passes an allowed request on
// with Fallback (in a replaying session), and so a request goes
//
//	surf's CDP Fetch interception (policy; sees it first)
//	-> the request gate's route (policy)
//	-> the replay's route (policy, again for each redirect hop the
//	   recording holds; then answers from the recording, or refuses)
//
// Nothing in this chain continues a request to the network. The replay's
// route judges with the policy itself, so it holds with the request gate
// off too.
func installReplay(bctx playwright.BrowserContext, idx *harIndex, pol *policy.Policy, log *slog.Logger, denials *denialLog) error {
	h := &harReplay{pol: pol, log: log, denials: denials, index: idx}
	if err := bctx.Route("**", h.route); err != nil {
		return fmt.Errorf("installing the replay: %w", cleanPlaywrightError(err))
	}
	// Recordings hold no WebSockets. (The request gate's WebSocket route,
	// registered later, takes precedence and refuses them the same way.)
	if err := bctx.RouteWebSocket("**", h.websocket); err != nil {
		return fmt.Errorf("installing the replay for websockets: %w", cleanPlaywrightError(err))
	}
	return nil
}

// websocket refuses a WebSocket: replay is offline.
func (h *harReplay) websocket(ws playwright.WebSocketRoute) {
	url := ws.URL()
	d := h.pol.DecideURL(policy.Request, url, "")
	if !d.Allowed() {
		dn := h.denials.add(Denial{Layer: LayerRequest, Kind: policy.Request, URL: url, Host: d.Host, Decision: d})
		h.log.Debug("replay denied a websocket", "url", dn.URL, "reason", dn.Decision.Reason)
	} else {
		dn := h.denials.add(notRecorded(url, policy.Request, false, d))
		h.log.Debug("replay refused a websocket", "url", dn.URL)
	}
	ws.Close(playwright.WebSocketRouteCloseOptions{Code: playwright.Int(1008), Reason: playwright.String("not in recording")})
}

func requestKind(req playwright.Request) (policy.Kind, bool) {
	if req.IsNavigationRequest() {
		return policy.Navigation, true
	}
	return policy.Request, false
}

// route answers one request from the recording.
func (h *harReplay) route(r playwright.Route) {
	req := r.Request()
	url := req.URL()
	kind, nav := requestKind(req)
	d := h.pol.DecideURL(kind, url, "")
	if !d.Allowed() {
		h.refuse(r, d, LayerRequest, kind, nav, url)
		return
	}
	post, _ := req.PostDataBuffer()
	ans, err := h.index.lookup(req.Method(), url, req.Headers(), post)
	if err != nil {
		h.log.Debug("replay lookup", "url", h.pol.Redact(url), "err", err)
	}
	if ans == nil {
		h.missing(r, notRecorded(url, kind, nav, d))
		return
	}
	// The recording's redirects are followed here, not by the browser:
	// judge each hop as the request gate would have.
	for _, hop := range ans.hops {
		if d := h.pol.DecideURL(kind, hop, ""); !d.Allowed() {
			h.refuse(r, d, LayerRedirect, kind, nav, hop)
			return
		}
	}
	if nav && len(ans.hops) > 0 {
		// A document must end up at its final URL: re-issue the
		// navigation there (the recording answers it in turn).
		r.Fulfill(playwright.RouteFulfillOptions{
			Status:  playwright.Int(200),
			Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
			Body:    reissuePage(ans.hops[len(ans.hops)-1]),
		})
		return
	}
	status, headers, body, err := ans.entry.response()
	if err != nil {
		// The file was read at the session's start; an entry that does
		// not decode now is as good as absent.
		h.log.Debug("replay: a recorded response does not decode", "url", h.pol.Redact(url), "err", err)
		h.missing(r, notRecorded(url, kind, nav, d))
		return
	}
	r.Fulfill(playwright.RouteFulfillOptions{Status: playwright.Int(status), Headers: headers, Body: body})
}

// missing answers a request the recording does not hold, like the
// request gate answers a denied one: a document navigation gets a page
// that says so (an aborted navigation would commit Chromium's error page
// later, racing the next navigation), anything else fails as blocked by
// the client. Neither goes to the network.
func (h *harReplay) missing(r playwright.Route, d Denial) {
	dn := h.denials.add(d)
	h.log.Debug("replay: not in recording", "url", dn.URL)
	if dn.Navigation {
		r.Fulfill(playwright.RouteFulfillOptions{
			Status:  playwright.Int(404),
			Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
			Body:    notRecordedPage(dn),
		})
		return
	}
	r.Abort("blockedbyclient")
}

// notRecordedPage is the document shown instead of a navigation the
// recording does not hold.
func notRecordedPage(d Denial) string {
	return `<!doctype html><html><head><meta charset="utf-8"><title>Not in recording</title><link rel="icon" href="data:,"></head>` +
		`<body><h1>Not in recording</h1><p>surf is replaying a recording, and it holds no response for this page. Nothing was sent to the network.</p>` +
		`<p>URL: <code>` + html.EscapeString(d.URL) + `</code></p></body></html>`
}

// refuse answers a denied request like the request gate does: a block
// page for a navigation, blocked-by-client for anything else.
func (h *harReplay) refuse(r playwright.Route, d policy.Decision, layer string, kind policy.Kind, nav bool, url string) {
	dn := h.denials.add(Denial{Layer: layer, Kind: kind, URL: url, Host: d.Host, Decision: d, Navigation: nav})
	h.log.Debug("replay denied", "layer", layer, "url", dn.URL, "reason", dn.Decision.Reason)
	if nav {
		r.Fulfill(playwright.RouteFulfillOptions{
			Status:  playwright.Int(403),
			Headers: map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store"},
			Body:    blockPage(dn),
		})
		return
	}
	r.Abort("blockedbyclient")
}

// harIndex is a recording read for replay.
type harIndex struct {
	info HARInfo
	// byKey holds the replayable entries by method and URL without its
	// fragment ("GET http://a.test/x"), in file order.
	byKey map[string][]*harEntry
}

// harEntry is one replayable response of a recording.
type harEntry struct {
	url      string // without fragment
	headers  []harHeader
	post     []byte // request body, nil when the entry has none
	status   int
	location string          // absolute redirect target for 301, 302, 303, 307, 308
	raw      json.RawMessage // the entry, decoded again to answer
}

// harAnswer is what the recording holds for a request.
type harAnswer struct {
	entry *harEntry
	// hops are the URLs of the redirects followed to reach entry.
	hops []string
}

// maxHARHops bounds the redirect chains lookup follows.
const maxHARHops = 20

// lookup finds the recorded answer to a request, as Playwright's HAR
// router does (its harBackend): entries of the same method and URL (the
// fragment aside); for a POST with a body, those with the same body (a
// multipart body's boundary aside); of several, the one with the most
// request headers in common, the first of equals; recorded redirects are
// followed, 301 and 302 turning a POST into a GET and 303 anything but
// GET and HEAD. nil means the recording does not hold it.
func (x *harIndex) lookup(method, url string, headers map[string]string, post []byte) (*harAnswer, error) {
	ans := &harAnswer{}
	visited := map[*harEntry]bool{}
	for {
		var best *harEntry
		bestScore := -1
		for _, e := range x.byKey[method+" "+stripFragment(url)] {
			if method == "POST" && len(post) > 0 && e.post != nil && !samePost(post, headers, e) {
				continue
			}
			if score := matchingHeaders(e.headers, headers); score > bestScore {
				best, bestScore = e, score
			}
		}
		if best == nil {
			return nil, nil
		}
		if visited[best] || len(ans.hops) >= maxHARHops {
			return nil, fmt.Errorf("the recorded redirects of %s loop or run longer than %d hops", url, maxHARHops)
		}
		visited[best] = true
		if best.location == "" {
			ans.entry = best
			return ans, nil
		}
		url = best.location
		ans.hops = append(ans.hops, url)
		if (best.status == 301 || best.status == 302) && method == "POST" || best.status == 303 && method != "GET" && method != "HEAD" {
			method = "GET"
		}
	}
}

func stripFragment(url string) string {
	if i := strings.IndexByte(url, '#'); i >= 0 {
		return url[:i]
	}
	return url
}

func matchingHeaders(recorded []harHeader, headers map[string]string) int {
	n := 0
	for _, h := range recorded {
		if v, ok := headers[strings.ToLower(h.Name)]; ok && v == h.Value {
			n++
		}
	}
	return n
}

// samePost compares a request body with a recorded one; multipart bodies
// match with their boundaries removed (the browser picks a new one each
// time).
func samePost(post []byte, headers map[string]string, e *harEntry) bool {
	if bytes.Equal(post, e.post) {
		return true
	}
	b1 := multipartBoundary(headers["content-type"])
	var ct string
	for _, h := range e.headers {
		if strings.EqualFold(h.Name, "content-type") {
			ct = h.Value
			break
		}
	}
	b2 := multipartBoundary(ct)
	if b1 == "" || b2 == "" {
		return false
	}
	return bytes.Equal(bytes.ReplaceAll(post, []byte(b1), nil), bytes.ReplaceAll(e.post, []byte(b2), nil))
}

func multipartBoundary(contentType string) string {
	if !strings.Contains(contentType, "multipart/form-data") {
		return ""
	}
	_, b, ok := strings.Cut(contentType, "boundary=")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(b, " \t\r\n"); i >= 0 {
		b = b[:i]
	}
	return b
}

// harBody is a HAR content or postData object.
type harBody struct {
	Text     string `json:"text"`
	Encoding string `json:"encoding"`
	File     string `json:"_file"`
}

func (b harBody) bytes() ([]byte, error) {
	if b.Encoding == "base64" {
		return base64.StdEncoding.DecodeString(b.Text)
	}
	return []byte(b.Text), nil
}

// response decodes the entry's recorded response for Route.Fulfill.
// Content-Length, Content-Encoding and Transfer-Encoding are dropped (the
// recorded body is decoded and whole; Playwright sets the length);
// repeated headers are joined (Set-Cookie with newlines, which Playwright
// splits again).
func (e *harEntry) response() (int, map[string]string, []byte, error) {
	var full struct {
		Response struct {
			Status  int         `json:"status"`
			Headers []harHeader `json:"headers"`
			Content harBody     `json:"content"`
		} `json:"response"`
	}
	if err := json.Unmarshal(e.raw, &full); err != nil {
		return 0, nil, nil, err
	}
	body, err := full.Response.Content.bytes()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("the recorded body: %w", err)
	}
	headers := map[string]string{}
	for _, h := range full.Response.Headers {
		k := strings.ToLower(h.Name)
		switch k {
		case "content-length", "content-encoding", "transfer-encoding":
			continue
		}
		if prev, ok := headers[k]; ok {
			sep := ", "
			if k == "set-cookie" {
				sep = "\n"
			}
			headers[k] = prev + sep + h.Value
			continue
		}
		headers[k] = h.Value
	}
	switch full.Response.Status {
	case 101, 204, 205, 304:
		body = nil
	}
	return full.Response.Status, headers, body, nil
}

// HARInfo describes a recording.
type HARInfo struct {
	// Entries is the number of responses recorded.
	Entries int `json:"entries"`
	// Origins are the origins of the recorded requests, sorted.
	Origins []string `json:"origins"`
	// Comment is the HAR's log.comment: what surf left out of it, if
	// anything.
	Comment string `json:"comment,omitempty"`
}

// InspectHAR reads the HAR file at path, as SessionConfig.ReplayHAR
// would, and describes it. Files that replay would refuse are errors: not
// a HAR, a zip archive, or content in files beside the HAR (Playwright's
// "attach" mode) instead of embedded.
func InspectHAR(path string) (HARInfo, error) {
	x, err := indexHAR(path)
	if err != nil {
		return HARInfo{}, err
	}
	return x.info, nil
}

// harHead is the part of a HAR entry surf reads up front.
type harHead struct {
	Request struct {
		Method   string      `json:"method"`
		URL      string      `json:"url"`
		Headers  []harHeader `json:"headers"`
		PostData *harBody    `json:"postData"`
	} `json:"request"`
	Response struct {
		Status      int         `json:"status"`
		Headers     []harHeader `json:"headers"`
		FailureText string      `json:"_failureText"`
		Content     struct {
			Size int64  `json:"size"`
			File string `json:"_file"`
		} `json:"content"`
	} `json:"response"`
	Fulfilled bool `json:"_wasFulfilled"`
}

func (e *harHead) redirect() bool {
	switch e.Response.Status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

type harHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// indexHAR reads the recording at path for replay.
func indexHAR(path string) (*harIndex, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the recording: %w", err)
	}
	defer f.Close()
	var magic [4]byte
	if n, _ := io.ReadFull(f, magic[:]); n == 4 && string(magic[:]) == "PK\x03\x04" {
		return nil, fmt.Errorf("recording %s is a zip archive: surf replays HAR files with embedded content (as surf record writes them)", path)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("reading the recording: %w", err)
	}
	x, err := readHARIndex(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("recording %s: %w", path, err)
	}
	return x, nil
}

// readHARIndex reads a recording for replay. Entries that cannot be
// replayed (no response, a 304 with nothing to revalidate, a URL that
// does not parse) are counted but not indexed.
func readHARIndex(r io.Reader) (*harIndex, error) {
	x := &harIndex{byKey: map[string][]*harEntry{}}
	origins := map[string]bool{}
	n := 0
	err := walkHAR(r, func(name string, raw json.RawMessage) error {
		if name == "comment" {
			json.Unmarshal(raw, &x.info.Comment)
		}
		return nil
	}, func(raw json.RawMessage) error {
		n++
		var e harHead
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("entry %d: %w", n, err)
		}
		if e.Response.Content.File != "" || e.Request.PostData != nil && e.Request.PostData.File != "" {
			return fmt.Errorf("entry %d keeps its content in a file beside the HAR; surf replays only embedded content (record with surf record)", n)
		}
		x.info.Entries++
		u, err := policy.ParseURL(e.Request.URL, nil)
		if err != nil || e.Response.Status < 100 || e.Response.Status == 304 || e.Request.Method == "" {
			return nil
		}
		if o := u.Origin().String(); o != "null" {
			origins[o] = true
		}
		he := &harEntry{url: stripFragment(e.Request.URL), headers: e.Request.Headers, status: e.Response.Status, raw: raw}
		if e.Request.PostData != nil {
			if he.post, err = e.Request.PostData.bytes(); err != nil {
				return fmt.Errorf("entry %d: request body: %w", n, err)
			}
			if he.post == nil {
				he.post = []byte{}
			}
		}
		if e.redirect() {
			for _, h := range e.Response.Headers {
				if strings.EqualFold(h.Name, "location") {
					to, err := policy.ParseURL(h.Value, u)
					if err != nil {
						// Chromium might read it where surf cannot follow
						// it: leave the entry out.
						return nil
					}
					he.location = to.String()
					break
				}
			}
		}
		k := e.Request.Method + " " + he.url
		x.byKey[k] = append(x.byKey[k], he)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for o := range origins {
		x.info.Origins = append(x.info.Origins, o)
	}
	sort.Strings(x.info.Origins)
	return x, nil
}

// errNotHAR is a file that does not have a HAR's shape.
var errNotHAR = errors.New("not a HAR file (want {\"log\": {\"entries\": [...]}})")

// walkHAR streams a HAR: it calls field with each member of "log" but
// "entries", and entry with each entry, in file order, holding one entry
// in memory at a time.
func walkHAR(r io.Reader, field func(name string, raw json.RawMessage) error, entry func(raw json.RawMessage) error) error {
	dec := json.NewDecoder(r)
	delim := func(want json.Delim) error {
		t, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %v", errNotHAR, err)
		}
		if d, ok := t.(json.Delim); !ok || d != want {
			return errNotHAR
		}
		return nil
	}
	key := func() (string, error) {
		t, err := dec.Token()
		if err != nil {
			return "", fmt.Errorf("%w: %v", errNotHAR, err)
		}
		k, ok := t.(string)
		if !ok {
			return "", errNotHAR
		}
		return k, nil
	}
	if err := delim('{'); err != nil {
		return err
	}
	sawEntries := false
	for dec.More() {
		k, err := key()
		if err != nil {
			return err
		}
		if k != "log" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fmt.Errorf("%w: %v", errNotHAR, err)
			}
			continue
		}
		if err := delim('{'); err != nil {
			return err
		}
		for dec.More() {
			k, err := key()
			if err != nil {
				return err
			}
			if k != "entries" {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fmt.Errorf("%w: %v", errNotHAR, err)
				}
				if err := field(k, raw); err != nil {
					return err
				}
				continue
			}
			if err := delim('['); err != nil {
				return err
			}
			sawEntries = true
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return fmt.Errorf("%w: %v", errNotHAR, err)
				}
				if err := entry(raw); err != nil {
					return err
				}
			}
			if err := delim(']'); err != nil {
				return err
			}
		}
		if err := delim('}'); err != nil {
			return err
		}
	}
	if err := delim('}'); err != nil {
		return err
	}
	if !sawEntries {
		return errNotHAR
	}
	return nil
}

// recordStats counts what writeRecording kept and left out.
type recordStats struct {
	kept      int
	bytes     int64
	fulfilled int // answered inside the browser (block pages, re-issues)
	failed    int // no response (refused, aborted, network errors)
	tooBig    int // larger than harEntryLimit
	overTotal int // after harTotalLimit was reached
}

func (s recordStats) leftOut() int { return s.tooBig + s.overTotal }

// comment is the HAR's log.comment: what was left out for the limits.
func (s recordStats) comment() string {
	if s.leftOut() == 0 {
		return ""
	}
	var parts []string
	if s.tooBig > 0 {
		parts = append(parts, fmt.Sprintf("%d larger than %d MiB", s.tooBig, harEntryLimit>>20))
	}
	if s.overTotal > 0 {
		parts = append(parts, fmt.Sprintf("%d after the recording reached %d MiB", s.overTotal, harTotalLimit>>20))
	}
	return fmt.Sprintf("surf left out %d responses (%s); replay reports them as not in recording", s.leftOut(), strings.Join(parts, ", "))
}

// writeRecording turns Playwright's HAR at raw into the recording at dst:
// only responses that came from the network (not the request gate's
// block pages and re-issue documents, nor requests that got no response),
// without the session proxy's credentials, with the policy's secrets
// redacted, within the size limits. dst is replaced atomically.
func writeRecording(dst, raw string, pol *policy.Policy) (recordStats, error) {
	var st recordStats
	in, err := os.Open(raw)
	if err != nil {
		return st, fmt.Errorf("reading Playwright's HAR: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".surf-har-*")
	if err != nil {
		return st, fmt.Errorf("writing the recording: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	w := bufio.NewWriterSize(tmp, 1<<20)
	redact := pol.Redacts() // secrets, or text a person typed
	members := 0
	member := func(name string) {
		if members > 0 {
			w.WriteString(",\n")
		}
		members++
		fmt.Fprintf(w, "    %q: ", name)
	}
	w.WriteString("{\n  \"log\": {\n")
	var buf bytes.Buffer
	indent := func(v []byte, prefix string) error {
		buf.Reset()
		if err := json.Indent(&buf, v, prefix, "  "); err != nil {
			return err
		}
		_, err := w.Write(buf.Bytes())
		return err
	}
	// Two passes: the log's other members (small), then its entries, one
	// at a time.
	err = walkHAR(bufio.NewReaderSize(in, 1<<20), func(name string, v json.RawMessage) error {
		if name == "comment" {
			return nil
		}
		if redact { // page titles, for one
			var err error
			if v, err = redactJSON(v, pol); err != nil {
				return err
			}
		}
		member(name)
		return indent(v, "    ")
	}, func(json.RawMessage) error { return nil })
	if err == nil {
		_, err = in.Seek(0, io.SeekStart)
	}
	if err == nil {
		member("entries")
		w.WriteString("[")
		err = walkHAR(bufio.NewReaderSize(in, 1<<20), func(string, json.RawMessage) error { return nil }, func(v json.RawMessage) error {
			out, keep, err := cleanEntry(v, pol, redact, &st)
			if err != nil || !keep {
				return err
			}
			if len(out) > harEntryLimit {
				st.tooBig++
				return nil
			}
			if st.bytes+int64(len(out)) > int64(harTotalLimit) {
				st.overTotal++
				return nil
			}
			if st.kept > 0 {
				w.WriteString(",")
			}
			st.kept++
			st.bytes += int64(len(out))
			w.WriteString("\n      ")
			return indent(out, "      ")
		})
	}
	if err != nil {
		tmp.Close()
		return st, fmt.Errorf("reading Playwright's HAR: %w", err)
	}
	if st.kept > 0 {
		w.WriteString("\n    ")
	}
	w.WriteString("]")
	if c := st.comment(); c != "" {
		member("comment")
		b, _ := json.Marshal(c)
		w.Write(b)
	}
	w.WriteString("\n  }\n}\n")
	if err := w.Flush(); err != nil {
		tmp.Close()
		return st, fmt.Errorf("writing the recording: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return st, fmt.Errorf("writing the recording: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return st, fmt.Errorf("writing the recording: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return st, fmt.Errorf("writing the recording: %w", err)
	}
	return st, nil
}

// cleanEntry prepares one of Playwright's entries for the recording, or
// says to leave it out.
func cleanEntry(raw json.RawMessage, pol *policy.Policy, redact bool, st *recordStats) ([]byte, bool, error) {
	var e harHead
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, false, err
	}
	switch {
	case e.Fulfilled:
		st.fulfilled++
		return nil, false, nil
	case e.Response.Status <= 0, e.Response.FailureText != "", e.Response.Content.Size < 0 && !e.redirect():
		// No response, or a body cut short (the page moved on before it
		// arrived): replaying it would serve a wrong body.
		st.failed++
		return nil, false, nil
	}
	if u, err := policy.ParseURL(e.Request.URL, nil); err == nil && u.Hostname() == proxyCheckHost {
		return nil, false, nil // the remote browser's proxy check
	}
	out, err := scrubCredentials(raw)
	if err != nil {
		return nil, false, err
	}
	if redact {
		var err error
		if out, err = redactJSON(out, pol); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// redactedValue stands for a cookie value or a credential in recordings.
const redactedValue = "surf-redacted"

// scrubCredentials takes credentials out of a recorded entry: Proxy-*
// request headers (Chromium reports the session proxy's credentials among
// them) are removed; the values of cookies (Cookie and Set-Cookie headers,
// the cookies arrays) and of Authorization headers are replaced by
// redactedValue, keeping cookie names and attributes. A replayed
// Set-Cookie then sets the cookie with that value.
func scrubCredentials(raw []byte) ([]byte, error) {
	var e map[string]json.RawMessage
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, err
	}
	for _, side := range []string{"request", "response"} {
		var m map[string]json.RawMessage
		if len(e[side]) == 0 || json.Unmarshal(e[side], &m) != nil || m == nil {
			continue
		}
		var hs []harHeader
		if json.Unmarshal(m["headers"], &hs) == nil && len(hs) > 0 {
			kept := hs[:0]
			for _, h := range hs {
				switch n := strings.ToLower(h.Name); {
				case strings.HasPrefix(n, "proxy-") && side == "request":
					continue
				case n == "cookie":
					h.Value = redactCookieHeader(h.Value)
				case n == "set-cookie":
					h.Value = redactSetCookie(h.Value)
				case n == "authorization":
					h.Value = redactedValue
				}
				kept = append(kept, h)
			}
			b, err := marshalJSON(kept)
			if err != nil {
				return nil, err
			}
			m["headers"] = b
		}
		var cs []map[string]json.RawMessage
		if json.Unmarshal(m["cookies"], &cs) == nil && len(cs) > 0 {
			for _, c := range cs {
				if _, ok := c["value"]; ok {
					c["value"] = json.RawMessage(`"` + redactedValue + `"`)
				}
			}
			b, err := marshalJSON(cs)
			if err != nil {
				return nil, err
			}
			m["cookies"] = b
		}
		b, err := marshalJSON(m)
		if err != nil {
			return nil, err
		}
		e[side] = b
	}
	return marshalJSON(e)
}

// redactCookieHeader replaces the values of a Cookie header's pairs.
func redactCookieHeader(v string) string {
	parts := strings.Split(v, ";")
	for i, p := range parts {
		name, _, _ := strings.Cut(strings.TrimSpace(p), "=")
		parts[i] = name + "=" + redactedValue
	}
	return strings.Join(parts, "; ")
}

// redactSetCookie replaces the value of each Set-Cookie line (Playwright
// joins repeated ones with newlines), keeping its attributes.
func redactSetCookie(v string) string {
	lines := strings.Split(v, "\n")
	for i, l := range lines {
		pair, attrs, found := strings.Cut(l, ";")
		name, _, _ := strings.Cut(strings.TrimSpace(pair), "=")
		lines[i] = name + "=" + redactedValue
		if found {
			lines[i] += ";" + attrs
		}
	}
	return strings.Join(lines, "\n")
}

// redactJSON replaces the policy's secrets in every string of a JSON
// value.
func redactJSON(raw []byte, pol *policy.Policy) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			return pol.Redact(x)
		case []any:
			for i := range x {
				x[i] = walk(x[i])
			}
		case map[string]any:
			for k, e := range x {
				if t, ok := e.(string); ok && k == "text" && x["encoding"] == "base64" {
					x[k] = pol.RedactBase64(t) // a binary body (or one Playwright chose to encode)
					continue
				}
				x[k] = walk(e)
			}
		}
		return v
	}
	return marshalJSON(walk(v))
}

// marshalJSON is json.Marshal without HTML escaping (page bodies stay
// readable).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// recordCloseTimeout bounds closing a recording session's context, which
// includes Playwright writing its HAR.
const recordCloseTimeout = 2 * time.Minute

// harPaths checks a session's RecordHAR and ReplayHAR and makes them
// absolute; a replayed recording is read (and must be one surf can
// replay) before anything starts.
func harPaths(cfg SessionConfig) (record, replay string, index *harIndex, err error) {
	if cfg.RecordHAR != "" && cfg.ReplayHAR != "" {
		return "", "", nil, errors.New("a session either records (RecordHAR) or replays (ReplayHAR), not both")
	}
	if cfg.RecordHAR != "" {
		if record, err = filepath.Abs(cfg.RecordHAR); err != nil {
			return "", "", nil, fmt.Errorf("recording to %s: %w", cfg.RecordHAR, err)
		}
		if fi, err := os.Stat(filepath.Dir(record)); err != nil || !fi.IsDir() {
			return "", "", nil, fmt.Errorf("recording to %s: directory %s does not exist", cfg.RecordHAR, filepath.Dir(record))
		}
		if fi, err := os.Stat(record); err == nil && fi.IsDir() {
			return "", "", nil, fmt.Errorf("recording to %s: it is a directory", cfg.RecordHAR)
		}
	}
	if cfg.ReplayHAR != "" {
		if replay, err = filepath.Abs(cfg.ReplayHAR); err != nil {
			return "", "", nil, fmt.Errorf("replaying %s: %w", cfg.ReplayHAR, err)
		}
		if index, err = indexHAR(replay); err != nil {
			return "", "", nil, err
		}
	}
	return record, replay, index, nil
}

// rawHAR is where Playwright writes a recording session's HAR.
func (s *Session) rawHAR() string { return filepath.Join(s.tmp, "playwright.har") }

// finishRecording writes the session's recording from Playwright's HAR,
// once the context is closed (closeErr is how closing went).
func (s *Session) finishRecording(closeErr error) error {
	dst := s.info.RecordHAR
	if _, err := os.Stat(s.rawHAR()); err != nil && closeErr != nil {
		err := fmt.Errorf("recording %s: closing the browser context: %w", dst, closeErr)
		s.log.Warn("the recording was not written", "err", err)
		return err
	}
	st, err := writeRecording(dst, s.rawHAR(), s.pol)
	if err != nil {
		err = fmt.Errorf("recording %s: %w", dst, err)
		s.log.Warn("the recording was not written", "err", err)
		return err
	}
	if c := st.comment(); c != "" {
		s.log.Warn("the recording is incomplete", "file", dst, "comment", c)
	}
	s.log.Debug("recording written", "file", dst, "responses", st.kept, "bytes", st.bytes,
		"fulfilled", st.fulfilled, "failed", st.failed)
	return nil
}
