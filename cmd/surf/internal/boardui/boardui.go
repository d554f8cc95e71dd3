// Package boardui is the board's web page: one view of every task on a
// task board and every live session of every worker on it. It lists the
// tasks by state with their dependencies and, per task, its steps,
// answer or structured result, files and report (served from the board's
// file store); it lists the workers' live sessions, which it follows
// over the board's NATS (package livebus), and answers their approvals,
// takes them over, sends the person's clicks and keys on a taken-over
// session's live picture, and hands them back, by NATS request/reply: no
// worker opens a port. The page keeps up by server-sent events.
//
// Its security is the live view's (package webguard): every asset
// embedded, a strict Content-Security-Policy on every response, state
// changed only by same-origin POST. Authentication (loopback, token,
// cookie) is the caller's: mcpserver.Guard.
package boardui

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/livebus"
	"github.com/surfkit/surf/cmd/surf/internal/webguard"
)

//go:embed assets
var assets embed.FS

// maxBody bounds a POST's body.
const maxBody = 16 << 10

// keepAlive is how often an idle event stream sends a comment.
const keepAlive = 15 * time.Second

// reportCSP is the policy of a task's HTML report, served as it was
// stored: a sandbox (no script, an opaque origin), its own inline
// styles and inline images only.
const reportCSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; frame-ancestors 'none'"

// Config configures a Handler. Board is required.
type Config struct {
	Board *board.Board
	// Bus follows the workers' live sessions; nil shows tasks only.
	Bus *livebus.Follower
	// Who names the person at the page in the agent's takeover note and
	// the journal; empty means "the user".
	Who string
	// Links are other pages of the same server the page's header links
	// to, such as surf serve's own live view.
	Links []Link
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
}

// Link is a link in the page's header: its text and its address (a path
// of the same server; nothing else is accepted).
type Link struct {
	Text, Path string
}

// Handler serves the page. Close it to stop following the board and end
// its open streams.
type Handler struct {
	b      *board.Board
	bus    *livebus.Follower
	who    string
	links  []byte // the header's links, as HTML
	log    *slog.Logger
	mux    *http.ServeMux
	cancel context.CancelFunc
	done   chan struct{} // closed by Close
	once   sync.Once
	wg     sync.WaitGroup

	mu    sync.Mutex
	tasks map[string]board.Record
	err   string
	pokes map[chan struct{}]struct{}
}

// New starts following the board (until Close) and makes the page's
// handler.
func New(ctx context.Context, cfg Config) (*Handler, error) {
	if cfg.Board == nil {
		return nil, errors.New("boardui: Config.Board is required")
	}
	h := &Handler{b: cfg.Board, bus: cfg.Bus, who: cfg.Who, log: cfg.Logger, done: make(chan struct{}),
		tasks: map[string]board.Record{}, pokes: map[chan struct{}]struct{}{}}
	if h.who == "" {
		h.who = "the user"
	}
	var err error
	if h.links, err = linksHTML(cfg.Links); err != nil {
		return nil, err
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	ctx, h.cancel = context.WithCancel(context.WithoutCancel(ctx))
	h.wg.Add(1)
	go h.follow(ctx)
	if h.bus != nil {
		pokes, stop := h.bus.Watch()
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			defer stop()
			for {
				select {
				case <-pokes:
					h.changed()
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	static, _ := fs.Sub(assets, "assets")
	m := http.NewServeMux()
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", h.index)
	m.HandleFunc("GET /api/board", h.state)
	m.HandleFunc("GET /events", h.events)
	m.HandleFunc("GET /files/{name...}", h.file)
	m.HandleFunc("GET /s/{bridge}/{id}/snapshot", h.snapshot)
	m.HandleFunc("GET /s/{bridge}/{id}/live.mjpg", h.live)
	m.HandleFunc("POST /s/{bridge}/{id}/approve", h.post(h.approve))
	m.HandleFunc("POST /s/{bridge}/{id}/takeover", h.post(h.takeover))
	m.HandleFunc("POST /s/{bridge}/{id}/handback", h.post(h.handback))
	m.HandleFunc("POST /s/{bridge}/{id}/stop", h.post(h.stop))
	m.HandleFunc("POST /s/{bridge}/{id}/input", h.post(h.input))
	h.mux = m
	return h, nil
}

// Close stops following the board and ends the open streams.
func (h *Handler) Close() {
	h.once.Do(func() {
		close(h.done)
		h.cancel()
		h.wg.Wait()
	})
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webguard.SetHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

// follow keeps the board's records, watching again after an error.
func (h *Handler) follow(ctx context.Context) {
	defer h.wg.Done()
	for ctx.Err() == nil {
		for ev, err := range h.b.Watch(ctx) {
			if err != nil {
				h.mu.Lock()
				h.err = err.Error()
				h.mu.Unlock()
				h.log.Warn("boardui: watching the board", "err", err)
				break
			}
			h.mu.Lock()
			h.tasks[ev.Record.Task.ID] = ev.Record
			h.err = ""
			h.mu.Unlock()
			h.changed()
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (h *Handler) changed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.pokes {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (h *Handler) watch() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.pokes[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.pokes, ch)
		h.mu.Unlock()
	}
}

// View is what the page shows: the tasks, oldest first, and the
// workers' live sessions.
type View struct {
	Tasks    []board.Record   `json:"tasks"`
	Sessions []livebus.Remote `json:"sessions"`
	// Live says whether the page follows the workers' sessions.
	Live bool `json:"live"`
	// Error is the board watch's last error, until it recovers.
	Error string `json:"error,omitempty"`
}

// States is how many of the board's tasks are in each state now (for
// the page server's metrics).
func (h *Handler) States() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := map[string]int{}
	for _, st := range board.States() {
		n[string(st)] = 0
	}
	for _, r := range h.tasks {
		n[string(r.State)]++
	}
	return n
}

func (h *Handler) view() View {
	h.mu.Lock()
	v := View{Tasks: make([]board.Record, 0, len(h.tasks)), Error: h.err}
	for _, r := range h.tasks {
		v.Tasks = append(v.Tasks, r)
	}
	h.mu.Unlock()
	slices.SortFunc(v.Tasks, func(a, b board.Record) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Task.ID, b.Task.ID)
	})
	if h.bus != nil {
		v.Live = true
		v.Sessions = h.bus.Sessions()
	}
	if v.Sessions == nil {
		v.Sessions = []livebus.Remote{}
	}
	return v
}

func (h *Handler) index(w http.ResponseWriter, r *http.Request) {
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, "missing page", http.StatusInternalServerError)
		return
	}
	if len(h.links) > 0 {
		b = bytes.Replace(b, []byte("</header>"), append(h.links, "</header>"...), 1)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b)
}

// linksHTML is the header's links as HTML: each a path of this server
// (one that starts with a single '/'), its text escaped.
func linksHTML(links []Link) ([]byte, error) {
	if len(links) == 0 {
		return nil, nil
	}
	var b bytes.Buffer
	b.WriteString(`<nav class="links">`)
	for _, l := range links {
		u, err := url.Parse(l.Path)
		if err != nil || !strings.HasPrefix(l.Path, "/") || strings.HasPrefix(l.Path, "//") || u.Scheme != "" || u.Host != "" || strings.TrimSpace(l.Text) == "" {
			return nil, fmt.Errorf("boardui: link %q to %q: want a text and a path of this server", l.Text, l.Path)
		}
		fmt.Fprintf(&b, `<a href="%s">%s</a>`, html.EscapeString(u.String()), html.EscapeString(l.Text))
	}
	b.WriteString(`</nav>`)
	return b.Bytes(), nil
}

func writeJSON(w http.ResponseWriter, status int, v any) { webguard.WriteJSON(w, status, v) }

func (h *Handler) state(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.view())
}

// events streams the view: at once, then on each change (a burst
// coalesced).
func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	poke, stop := h.watch()
	defer stop()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	var last []byte
	for {
		data, err := json.Marshal(h.view())
		if err != nil {
			return
		}
		if string(data) != string(last) {
			if _, err := fmt.Fprintf(w, "event: board\ndata: %s\n\n", data); err != nil {
				return
			}
			fl.Flush()
			last = data
		}
		select {
		case <-poke:
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

// file serves a file of the board's store that a task's result names
// (no other): a report as HTML in a sandbox, an image as an image,
// anything else as text.
func (h *Handler) file(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if !h.named(name) {
		http.Error(w, "no task's result names the file "+fmt.Sprintf("%q", name), http.StatusNotFound)
		return
	}
	rc, err := h.b.File(r.Context(), name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	defer rc.Close()
	switch ext := strings.ToLower(path.Ext(name)); ext {
	case ".html", ".htm":
		w.Header().Set("Content-Security-Policy", reportCSP)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	case ".png":
		w.Header().Set("Content-Type", "image/png")
	case ".jpg", ".jpeg":
		w.Header().Set("Content-Type", "image/jpeg")
	default:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	io.Copy(w, rc)
}

// named reports whether a task's result names the file.
func (h *Handler) named(name string) bool {
	if name == "" {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, rec := range h.tasks {
		if res := rec.Result; res != nil && (res.Journal == name || res.Report == name || slices.Contains(res.Images, name)) {
			return true
		}
	}
	return false
}

// answer reports an action's outcome as JSON: {"ok":true} or an error
// with a status.
func answer(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	case errors.Is(err, livebus.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case errors.Is(err, livebus.ErrConflict):
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	case errors.Is(err, context.DeadlineExceeded):
		writeJSON(w, http.StatusGatewayTimeout, map[string]string{"error": err.Error()})
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	}
}

// ask sends a request to the session's worker.
func (h *Handler) ask(r *http.Request, rq livebus.Request) (livebus.Reply, error) {
	if h.bus == nil {
		return livebus.Reply{}, fmt.Errorf("this page does not follow the workers' sessions: %w", livebus.ErrNotFound)
	}
	rq.Session, rq.By = r.PathValue("id"), h.who
	ctx, cancel := context.WithTimeout(r.Context(), 15*time.Second)
	defer cancel()
	return h.bus.Do(ctx, r.PathValue("bridge"), rq)
}

func (h *Handler) snapshot(w http.ResponseWriter, r *http.Request) {
	rep, err := h.ask(r, livebus.Request{Op: livebus.OpSnapshot})
	if err != nil {
		answer(w, err)
		return
	}
	writeJSON(w, http.StatusOK, rep.Snapshot)
}

// post wraps a state-changing handler: same origin only, a JSON body of
// at most maxBody bytes.
func (h *Handler) post(f func(http.ResponseWriter, *http.Request, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := webguard.SameOrigin(r); err != nil {
			h.log.Warn("boardui: refused a cross-origin request", "path", r.URL.Path, "why", err.Error(), "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: "+err.Error()+" may not change anything here", http.StatusForbidden)
			return
		}
		ct := r.Header.Get("Content-Type")
		if ct != "" && !strings.HasPrefix(ct, "application/json") {
			http.Error(w, "the body must be JSON (Content-Type: application/json)", http.StatusUnsupportedMediaType)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, fmt.Sprintf("the body is over %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		f(w, r, body)
	}
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		ID      int  `json:"id"`
		Approve bool `json:"approve"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		answer(w, fmt.Errorf("the body: %w", err))
		return
	}
	_, err := h.ask(r, livebus.Request{Op: livebus.OpApprove, Approval: in.ID, Approve: in.Approve})
	answer(w, err)
}

// takeover takes the session over and gives this page the takeover's
// key ({"ok":true,"key":"..."}): the worker accepts the person's input
// (POST input) only with it, until the hand-back.
func (h *Handler) takeover(w http.ResponseWriter, r *http.Request, _ []byte) {
	rep, err := h.ask(r, livebus.Request{Op: livebus.OpTakeOver})
	if err != nil {
		answer(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "key": rep.Key})
}

// inputReq is a person's event on a session's live picture, with the
// key its takeover gave this page.
type inputReq struct {
	live.ViewInput
	TakeoverKey string `json:"takeover_key"`
}

// input sends a person's click, wheel or key on the live picture to the
// session's worker, which performs it as its own live view does: only
// while taken over, only with the key of the takeover. Neither the
// event's text nor the error is logged: either may hold what the person
// typed.
func (h *Handler) input(w http.ResponseWriter, r *http.Request, body []byte) {
	var in inputReq
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		answer(w, fmt.Errorf("the body: %w", err))
		return
	}
	if err := in.Check(); err != nil {
		answer(w, err)
		return
	}
	if in.TakeoverKey == "" {
		answer(w, fmt.Errorf("no takeover_key: take the session over from this page first: %w", livebus.ErrConflict))
		return
	}
	_, err := h.ask(r, livebus.Request{Op: livebus.OpInput, Input: &in.ViewInput, Key: in.TakeoverKey})
	if err != nil {
		h.log.Debug("boardui: input refused", "kind", in.Kind)
	}
	answer(w, err)
}

func (h *Handler) handback(w http.ResponseWriter, r *http.Request, body []byte) {
	var in struct {
		Message string `json:"message"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			answer(w, fmt.Errorf("the body: %w", err))
			return
		}
	}
	_, err := h.ask(r, livebus.Request{Op: livebus.OpHandBack, Message: in.Message})
	answer(w, err)
}

// stop ends the session's run (its task is cancelled on the board).
func (h *Handler) stop(w http.ResponseWriter, r *http.Request, _ []byte) {
	_, err := h.ask(r, livebus.Request{Op: livebus.OpStop})
	answer(w, err)
}

// The live view's stream sends its last frame again when no new one
// came within mjpegRepeat (Chromium shows a part once the next starts),
// then waits up to the bridge's longest for the next.
const mjpegRepeat = 250 * time.Millisecond

// live streams a session's screencast as MJPEG, asking its worker for
// each next frame over NATS: the worker's screencast runs while this
// stream asks, and stops a lease after it ends.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	stream, ok := webguard.NewMJPEG(w)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	if h.bus == nil || !h.bus.Known(r.PathValue("bridge")) {
		http.Error(w, "no such worker on the board (it may have ended)", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	rq := livebus.Request{Op: livebus.OpFrame, Session: r.PathValue("id")}
	started := false
	var last []byte
	for {
		rq.Wait = 0 // the bridge's longest
		if last != nil {
			rq.Wait = mjpegRepeat
		}
		rep, err := h.bus.Do(ctx, r.PathValue("bridge"), rq)
		if err != nil {
			if !started {
				answer(w, err)
			}
			return
		}
		frame := rep.Frame
		if len(frame) == 0 {
			if last == nil {
				continue
			}
			frame = last
		}
		if !started {
			if stream.Start() != nil {
				return
			}
			started = true
		}
		if stream.Frame(frame) != nil {
			return
		}
		if len(rep.Frame) == 0 {
			last = nil // repeated once: wait the longest for a new one
		} else {
			last, rq.Seq = rep.Frame, rep.Seq
		}
	}
}
