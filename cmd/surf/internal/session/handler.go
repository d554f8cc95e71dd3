package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// The daemon's built-in requests, next to the tools of surf's action space.
const (
	ReqStatus     = "status"     // the session's pid and flags (Status, as JSON in Text)
	ReqOpen       = "open"       // {"url": "..."}: visit a URL, or just observe
	ReqObserve    = "observe"    // observe again
	ReqTabs       = "tabs"       // the open tabs
	ReqScreenshot = "screenshot" // {"plain": bool}: the set-of-mark image or a plain one
	ReqClose      = "close"      // close the browser and end the daemon
	ReqSaveState  = "save_state" // save the session's state file now
)

// Status is the answer to ReqStatus.
type Status struct {
	Session string   `json:"session"`
	PID     int      `json:"pid"`
	Flags   []string `json:"flags"`
}

// HandlerConfig is the session a Handler answers for.
type HandlerConfig struct {
	// Name and Flags are the session's name and the flags it was opened
	// with, for ReqStatus and messages.
	Name  string
	Flags []string
	// Respond is as in DaemonConfig.
	Respond func(error) daemon.Response
	// Logger gets the session's errors; nil discards them.
	Logger *slog.Logger
}

// Handler answers a session daemon's requests with its browser: the
// built-ins (Req*) and, by name, the tools of surf's action space. Every
// answer but those to ReqStatus, ReqClose, ReqScreenshot and ReqSaveState
// carries the latest observation, as JSON, for clients that print JSON.
type Handler struct {
	b       *Browser
	reg     *tools.Registry
	status  Status
	respond func(error) daemon.Response
	log     *slog.Logger

	stop      chan struct{}
	stopOnce  sync.Once
	closeOnce sync.Once
	closing   atomic.Bool // the daemon is closing the browser itself
	closeErr  error       // closing's error (a state file not saved), set once
}

var _ daemon.Handler = (*Handler)(nil)

// NewHandler returns the handler of browser b.
func NewHandler(b *Browser, cfg HandlerConfig) *Handler {
	h := &Handler{
		b:       b,
		reg:     b.Surfer.Tools(),
		status:  Status{Session: cfg.Name, PID: os.Getpid(), Flags: cfg.Flags},
		respond: cfg.Respond,
		log:     cfg.Logger,
		stop:    make(chan struct{}),
	}
	if h.respond == nil {
		h.respond = defaultRespond
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

func defaultRespond(err error) daemon.Response {
	var h interface{ Hint() string }
	hint := ""
	if errors.As(err, &h) {
		hint = h.Hint()
	}
	return daemon.Fail(daemon.ExitFailed, err, hint)
}

// Stop is closed when the daemon should stop: the session was closed, or
// its browser is gone.
func (h *Handler) Stop() <-chan struct{} { return h.stop }

func (h *Handler) stopNow() { h.stopOnce.Do(func() { close(h.stop) }) }

// CloseBrowser closes the surfer, session and sandbox (killing the
// browser's process group), once, and returns the close's error.
func (h *Handler) CloseBrowser() error {
	h.closeOnce.Do(func() {
		h.closing.Store(true)
		h.closeErr = h.b.close()
		if h.closeErr != nil {
			h.log.Warn("closing the session", "err", h.closeErr)
		}
	})
	return h.closeErr
}

// Handle answers one request.
func (h *Handler) Handle(ctx context.Context, req daemon.Request) daemon.Response {
	resp := h.handle(ctx, req)
	switch req.Tool {
	case ReqStatus, ReqClose, ReqScreenshot, ReqSaveState:
	default:
		// Actions, open, observe and tabs: the latest observation, for
		// clients that print JSON.
		if obs := h.b.Surfer.Last(); obs != nil && !h.closing.Load() {
			resp.Observation, _ = json.Marshal(struct {
				*websurfer.Observation
				Text string `json:"text"`
			}{obs, obs.Text()})
		}
	}
	return resp
}

func (h *Handler) handle(ctx context.Context, req daemon.Request) daemon.Response {
	switch req.Tool {
	case ReqStatus:
		b, _ := json.Marshal(h.status)
		return daemon.Response{OK: true, Text: string(b)}
	case ReqOpen:
		var a struct {
			URL string `json:"url"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return daemon.Fail(daemon.ExitUsage, err, "")
		}
		return h.open(ctx, a.URL)
	case ReqObserve:
		obs, err := h.b.Surfer.Observe(ctx)
		if err != nil {
			return h.runtimeError(err)
		}
		return daemon.Response{OK: true, Text: obs.Text()}
	case ReqTabs:
		return h.tabs(ctx)
	case ReqScreenshot:
		var a struct {
			Plain bool `json:"plain"`
		}
		if err := decodeArgs(req.Args, &a); err != nil {
			return daemon.Fail(daemon.ExitUsage, err, "")
		}
		return h.screenshot(ctx, a.Plain)
	case ReqSaveState:
		return h.saveState(ctx)
	case ReqClose:
		return h.close()
	}
	name := req.Tool
	if _, ok := h.reg.Lookup(name); !ok {
		return daemon.Fail(daemon.ExitUsage, fmt.Errorf("unknown action %q", name), "")
	}
	res, err := h.reg.Call(ctx, name, req.Args, h.b.Surfer.Offered()...)
	if err != nil {
		return h.runtimeError(err)
	}
	if res.IsError {
		return daemon.Fail(daemon.ExitFailed, errors.New(strings.TrimSpace(res.Text)), "")
	}
	return daemon.Response{OK: true, Text: res.Text}
}

// close closes the browser and stops the daemon.
func (h *Handler) close() daemon.Response {
	if err := h.CloseBrowser(); err != nil {
		h.stopNow()
		return h.respond(fmt.Errorf("session %q closed, but: %w", h.status.Session, err))
	}
	h.stopNow()
	text := fmt.Sprintf("session %q closed", h.status.Session)
	if sf := h.b.State; sf.Path != "" && !sf.ReadOnly {
		text += "; its state is saved in " + sf.Path
	}
	return daemon.Response{OK: true, Text: text}
}

// saveState writes the session's state file now ("surf state save").
func (h *Handler) saveState(ctx context.Context) daemon.Response {
	sf := h.b.State
	if sf.Path == "" {
		return daemon.Fail(daemon.ExitFailed, fmt.Errorf("session %q has no state file", h.status.Session), "open it with --state FILE to keep its login")
	}
	sum, err := h.b.Session.SaveState(ctx)
	if err != nil {
		return h.respond(fmt.Errorf("saving the state: %w", err))
	}
	return daemon.Response{OK: true, Text: fmt.Sprintf("saved %s: %s", sf.Path, DescribeState(sum))}
}

func (h *Handler) open(ctx context.Context, url string) daemon.Response {
	if url == "" {
		obs := h.b.Surfer.Last()
		if obs == nil {
			var err error
			if obs, err = h.b.Surfer.Observe(ctx); err != nil {
				return h.runtimeError(err)
			}
		}
		return daemon.Response{OK: true, Text: obs.Text()}
	}
	if h.b.CheckURL != nil {
		if err := h.b.CheckURL(url); err != nil {
			return h.respond(err)
		}
	}
	res, err := h.b.Surfer.VisitURL(ctx, url)
	if err != nil {
		if tools.IsToolError(err) {
			return daemon.Fail(daemon.ExitFailed, errors.New(strings.TrimPrefix(err.Error(), "tool error: ")), "")
		}
		return h.runtimeError(err)
	}
	return daemon.Response{OK: true, Text: res.Observation.Text()}
}

// tabs lists the open tabs from a fresh observation. Observing renumbers
// the elements; when the list changed from what the caller last saw, it
// says so, since the old ids no longer mean what they meant.
func (h *Handler) tabs(ctx context.Context) daemon.Response {
	prev := h.b.Surfer.Last()
	obs, err := h.b.Surfer.Observe(ctx)
	if err != nil {
		return h.runtimeError(err)
	}
	var sb strings.Builder
	for _, t := range obs.Tabs {
		mark := " "
		if t.Active {
			mark = "*"
		}
		fmt.Fprintf(&sb, "%s %d %q %s\n", mark, t.Index, t.Title, t.URL)
	}
	if prev != nil && !sameElements(prev, obs) {
		fmt.Fprintf(&sb, "(the page has changed: element ids are now those of observation %d; run 'surf observe' to list them)\n", obs.Seq)
	}
	return daemon.Response{OK: true, Text: sb.String()}
}

// sameElements reports whether two observations list the same elements
// under the same ids.
func sameElements(a, b *websurfer.Observation) bool {
	if len(a.Elements) != len(b.Elements) {
		return false
	}
	for i := range a.Elements {
		x, y := a.Elements[i], b.Elements[i]
		if x.ID != y.ID || x.Role != y.Role || x.Name != y.Name || x.Tag != y.Tag {
			return false
		}
	}
	return true
}

// screenshot returns the set-of-mark image of the latest observation (the
// one whose ids the caller has), or a plain screenshot of the viewport now.
func (h *Handler) screenshot(ctx context.Context, plain bool) daemon.Response {
	if plain {
		img, err := h.b.Surfer.Screenshot(ctx)
		if err != nil {
			return h.runtimeError(err)
		}
		return daemon.Response{OK: true, Text: "a plain screenshot of the viewport", Image: img}
	}
	obs := h.b.Surfer.Last()
	if obs == nil {
		var err error
		if obs, err = h.b.Surfer.Observe(ctx); err != nil {
			return h.runtimeError(err)
		}
	}
	if len(obs.Image) == 0 {
		return daemon.Fail(daemon.ExitFailed, fmt.Errorf("observation %d has no screenshot", obs.Seq), "")
	}
	return daemon.Response{OK: true, Text: fmt.Sprintf("the set-of-mark screenshot of observation %d (%s)", obs.Seq, obs.URL), Image: obs.Image}
}

// runtimeError answers an error that is not the action's fault: the
// browser or the session failed. When the surfer is closed for good, the
// daemon stops after answering.
func (h *Handler) runtimeError(err error) daemon.Response {
	if errors.Is(err, context.DeadlineExceeded) {
		return daemon.Fail(daemon.ExitFailed, fmt.Errorf("the action did not finish in time: %w", err), "the page may be stuck; try 'surf observe', or 'surf close' and 'surf open' again")
	}
	if errors.Is(err, websurfer.ErrClosed) {
		h.stopNow()
	}
	h.log.Warn("session error", "err", err)
	return daemon.Fail(daemon.ExitFailed, err, "if the session no longer works, run 'surf close' and 'surf open URL' again")
}

// decodeArgs decodes a built-in's arguments strictly; nil means none.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("bad arguments: %w", err)
	}
	return nil
}

// DescribeState is one line of counts for a state file, never a value:
// "3 cookies, 1 origin (dropped by the policy: 2 cookies, 0 origins), encrypted".
func DescribeState(s sandbox.StateSummary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s", plural(s.Cookies, "cookie"), plural(s.Origins, "origin"))
	if s.DroppedCookies > 0 || s.DroppedOrigins > 0 {
		fmt.Fprintf(&b, " (dropped by the policy: %s, %s)", plural(s.DroppedCookies, "cookie"), plural(s.DroppedOrigins, "origin"))
	}
	if s.Encrypted {
		b.WriteString(", encrypted")
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
