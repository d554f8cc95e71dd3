// Package liveui is the live view's web UI: an http.Handler that lists
// the live sessions of a hub (package live) and, per session, shows the
// browser as it is now (the screencast, streamed only while the page is
// open), the step timeline, the pending approvals with Approve and Deny
// buttons, and Take over / Hand back, with the person's clicks, wheel and
// keys on the live view sent to the page. Every asset is embedded; state
// changes only by same-origin POST; every response carries a strict
// Content-Security-Policy. Authentication (loopback, token, cookie) is
// the caller's: mcpserver.Guard.
package liveui

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/webguard"
)

//go:embed assets
var assets embed.FS

// CSP is the Content-Security-Policy of every response: nothing but this
// server's own scripts, styles, images and connections; no inline script;
// no framing.
const CSP = webguard.CSP

// maxBody bounds a POST's body.
const maxBody = 16 << 10

// keepAlive is how often an idle event stream sends a comment.
const keepAlive = 15 * time.Second

// Config configures a Handler. Hub is required.
type Config struct {
	Hub *live.Hub
	// Who names the person at the UI in the agent's takeover note; empty
	// means "the user".
	Who string
	// Logger receives diagnostics; nil discards them. Typed text is never
	// logged.
	Logger *slog.Logger
}

// Handler serves the UI. Close it to end its open streams.
type Handler struct {
	hub  *live.Hub
	who  string
	log  *slog.Logger
	mux  *http.ServeMux
	done chan struct{}
	once sync.Once
}

// New makes the UI's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Hub == nil {
		return nil, errors.New("liveui: Config.Hub is required")
	}
	h := &Handler{hub: cfg.Hub, who: cfg.Who, log: cfg.Logger, done: make(chan struct{})}
	if h.who == "" {
		h.who = "the user"
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	static, _ := fs.Sub(assets, "assets")
	m := http.NewServeMux()
	m.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", h.page("index.html"))
	m.HandleFunc("GET /s/{id}", h.page("session.html"))
	m.HandleFunc("GET /api/sessions", h.sessions)
	m.HandleFunc("GET /events", h.listEvents)
	m.HandleFunc("GET /s/{id}/events", h.sessionEvents)
	m.HandleFunc("GET /s/{id}/live.mjpg", h.live)
	m.HandleFunc("GET /s/{id}/som", h.som)
	m.HandleFunc("GET /s/{id}/step/{n}", h.stepImage)
	m.HandleFunc("POST /s/{id}/approve", h.post(h.approve))
	m.HandleFunc("POST /s/{id}/takeover", h.post(h.takeover))
	m.HandleFunc("POST /s/{id}/handback", h.post(h.handback))
	m.HandleFunc("POST /s/{id}/stop", h.post(h.stop))
	m.HandleFunc("POST /s/{id}/input", h.post(h.input))
	h.mux = m
	return h, nil
}

// Close ends the open event and frame streams (for a server shutting
// down). The handler answers other requests as before.
func (h *Handler) Close() { h.once.Do(func() { close(h.done) }) }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	webguard.SetHeaders(w.Header())
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := assets.ReadFile("assets/" + name)
		if err != nil {
			http.Error(w, "missing page", http.StatusInternalServerError)
			return
		}
		if id := r.PathValue("id"); id != "" {
			if _, ok := h.hub.Get(id); !ok {
				http.Error(w, "no live session "+strconv.Quote(id)+" (it may have ended)", http.StatusNotFound)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}
}

// session finds the request's session, or answers 404.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (*live.Session, bool) {
	s, ok := h.hub.Get(r.PathValue("id"))
	if !ok {
		http.Error(w, "no such live session (it may have ended)", http.StatusNotFound)
	}
	return s, ok
}

func writeJSON(w http.ResponseWriter, status int, v any) { webguard.WriteJSON(w, status, v) }

func (h *Handler) sessions(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, h.hub.List())
}

// sse starts an event stream.
func sse(w http.ResponseWriter) (func(event string, v any) error, bool) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return nil, false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	return func(event string, v any) error {
		var err error
		if event == "" {
			_, err = io.WriteString(w, ": keep-alive\n\n")
		} else {
			var b []byte
			if b, err = json.Marshal(v); err != nil {
				return err
			}
			_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		}
		fl.Flush()
		return err
	}, true
}

func (h *Handler) listEvents(w http.ResponseWriter, r *http.Request) {
	poke, stop := h.hub.Watch()
	defer stop()
	send, ok := sse(w)
	if !ok {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		if send("sessions", h.hub.List()) != nil {
			return
		}
		select {
		case <-poke:
			// coalesce a burst of changes
			select {
			case <-time.After(100 * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		case <-tick.C:
			if send("", nil) != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

func (h *Handler) sessionEvents(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	events, stop := s.Subscribe()
	defer stop()
	send, ok := sse(w)
	if !ok {
		return
	}
	if send("snapshot", s.Snapshot()) != nil {
		return
	}
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case e, ok := <-events:
			if !ok {
				send("end", nil)
				return
			}
			if send(e.Type, e.Data) != nil {
				return
			}
		case <-tick.C:
			if send("", nil) != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

// live streams the screencast as MJPEG (multipart/x-mixed-replace, which
// an <img> shows frame by frame). The screencast runs while at least one
// such stream is open.
func (h *Handler) live(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	stream, ok := webguard.NewMJPEG(w)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	leave, err := s.View()
	if err != nil {
		http.Error(w, err.Error(), http.StatusGone)
		return
	}
	defer leave()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-h.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	if stream.Start() != nil {
		return
	}
	write := func(f live.Frame) bool { return stream.Frame(f.JPEG) == nil }
	seq := 0
	var last live.Frame
	repeated := false
	for {
		// Chromium shows a part of the stream once the next one starts:
		// a frame that no other follows soon is sent again, so that a
		// page that stopped painting is shown as it is.
		wait := ctx
		var stop context.CancelFunc = func() {}
		if seq > 0 {
			d := mjpegRepeat
			if repeated {
				d = mjpegKeepAlive
			}
			wait, stop = context.WithTimeout(ctx, d)
		}
		f, n, err := s.NextFrame(wait, seq)
		stop()
		switch {
		case err == nil:
			seq, last, repeated = n, f, false
		case ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded):
			f, repeated = last, true
		default:
			return
		}
		if !write(f) {
			return
		}
	}
}

// The live view's stream sends its last frame again after mjpegRepeat
// without a new one, then every mjpegKeepAlive.
const (
	mjpegRepeat    = 250 * time.Millisecond
	mjpegKeepAlive = 10 * time.Second
)

func writeImage(w http.ResponseWriter, data []byte, mime string, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	w.Header().Set("Content-Type", mime)
	w.Write(data)
}

func (h *Handler) som(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	data, mime, err := s.LastImage()
	writeImage(w, data, mime, err)
}

func (h *Handler) stepImage(w http.ResponseWriter, r *http.Request) {
	s, ok := h.session(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.PathValue("n"))
	if err != nil || n < 1 {
		http.Error(w, "a step number is a positive integer", http.StatusBadRequest)
		return
	}
	data, mime, err := s.StepImage(n)
	writeImage(w, data, mime, err)
}

// post wraps a state-changing handler: same origin only, a JSON body of
// at most maxBody bytes.
func (h *Handler) post(f func(http.ResponseWriter, *http.Request, *live.Session, []byte)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := webguard.SameOrigin(r); err != nil {
			h.log.Warn("liveui: refused a cross-origin request", "path", r.URL.Path, "why", err.Error(), "remote", r.RemoteAddr)
			http.Error(w, "Forbidden: "+err.Error()+" may not change anything here", http.StatusForbidden)
			return
		}
		ct := r.Header.Get("Content-Type")
		if ct != "" && !strings.HasPrefix(ct, "application/json") {
			http.Error(w, "the body must be JSON (Content-Type: application/json)", http.StatusUnsupportedMediaType)
			return
		}
		s, ok := h.session(w, r)
		if !ok {
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			http.Error(w, fmt.Sprintf("the body is over %d bytes", maxBody), http.StatusRequestEntityTooLarge)
			return
		}
		f(w, r, s, body)
	}
}

// answer reports an action's outcome as JSON: {"ok":true} or an error
// with a status.
func answer(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	case errors.Is(err, live.ErrNotFound), errors.Is(err, live.ErrClosed):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
	case errors.Is(err, live.ErrAnswered), errors.Is(err, live.ErrTakenOver), errors.Is(err, live.ErrNotTakenOver), errors.Is(err, live.ErrNotYours), errors.Is(err, live.ErrNotStoppable):
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
	}
}

func decode(body []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body: %w", err)
	}
	return nil
}

func (h *Handler) approve(w http.ResponseWriter, r *http.Request, s *live.Session, body []byte) {
	var in struct {
		ID      int  `json:"id"`
		Approve bool `json:"approve"`
	}
	if err := decode(body, &in); err != nil {
		answer(w, err)
		return
	}
	answer(w, s.Answer(in.ID, in.Approve, h.who))
}

func (h *Handler) takeover(w http.ResponseWriter, r *http.Request, s *live.Session, body []byte) {
	answer(w, s.TakeOver(h.who))
}

// handback hands the wheel back, with the person's message to the agent
// if they left one ({"message": "..."}; an empty body is none).
func (h *Handler) handback(w http.ResponseWriter, r *http.Request, s *live.Session, body []byte) {
	var in struct {
		Message string `json:"message"`
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		if err := decode(body, &in); err != nil {
			answer(w, err)
			return
		}
	}
	answer(w, s.HandBack(in.Message))
}

// stop ends the run in the session.
func (h *Handler) stop(w http.ResponseWriter, r *http.Request, s *live.Session, body []byte) {
	answer(w, s.Stop(h.who))
}

// input sends a person's event on the live view to the page
// (live.Session.InputAt: the board's page sends its own through the
// same call on the worker).
func (h *Handler) input(w http.ResponseWriter, r *http.Request, s *live.Session, body []byte) {
	var in live.ViewInput
	if err := decode(body, &in); err != nil {
		answer(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	err := s.InputAt(ctx, "", in)
	if err != nil {
		// Neither the event's text nor the error is logged: either may
		// hold what the person typed (a password).
		h.log.Debug("liveui: input refused", "kind", in.Kind)
	}
	answer(w, err)
}
