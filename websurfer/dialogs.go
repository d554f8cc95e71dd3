package websurfer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/third_party/playwright-go"
)

// DefaultDialogTimeout is how long a confirm or prompt dialog waits for
// answer_dialog before surf dismisses it, unless Config.DialogTimeout says
// otherwise.
const DefaultDialogTimeout = 30 * time.Second

// Dialogs: an alert (nothing to decide) and a beforeunload dialog are
// dismissed at once, as they always were. A confirm or a prompt is held
// open for the model: the action that opened it returns, the observation
// says it is pending, and answer_dialog accepts or dismisses it. Anything
// else the model does first, or DialogTimeout passing, dismisses it: the
// safe answer, reported as an event.

// heldDialog is a confirm or prompt the page opened and no one answered
// yet. While it is open the page's script is blocked in it.
type heldDialog struct {
	d     playwright.Dialog
	t     *tab
	kind  string // "confirm" or "prompt"
	msg   string
	def   string // a prompt's default text
	timer *time.Timer
}

// dialogState is the surfer's held dialog, if any.
type dialogState struct {
	mu   sync.Mutex
	held *heldDialog
	// opened is closed when a dialog is held, so a settle wait stops
	// waiting on a page that cannot go on; it is replaced once the
	// dialog is answered.
	opened chan struct{}
}

// describe is the dialog as the model reads it: its kind and message.
func (h *heldDialog) describe() string {
	return fmt.Sprintf("%s %s", h.kind, q(h.msg, 200))
}

// onDialog handles a dialog a page opened (from Playwright's goroutine).
func (s *Surfer) onDialog(t *tab, d playwright.Dialog) {
	kind := d.Type()
	if kind == "confirm" || kind == "prompt" {
		h := &heldDialog{d: d, t: t, kind: kind, msg: d.Message(), def: d.DefaultValue()}
		s.dlg.mu.Lock()
		if s.dlg.held == nil {
			s.dlg.held = h
			t.held.Store(true)
			h.timer = time.AfterFunc(s.cfg.DialogTimeout, func() {
				s.dismissDialog(h, fmt.Sprintf("no answer within %s", s.cfg.DialogTimeout))
			})
			if s.dlg.opened == nil {
				s.dlg.opened = make(chan struct{})
			}
			close(s.dlg.opened)
			s.dlg.mu.Unlock()
			return
		}
		s.dlg.mu.Unlock()
		// One dialog is answered at a time: another one (from another
		// tab) gets the safe answer.
	}
	msg := fmt.Sprintf("%s %s was dismissed", kind, q(d.Message(), 200))
	if err := d.Dismiss(); err != nil {
		msg = fmt.Sprintf("%s %s could not be dismissed: %v", kind, q(d.Message(), 200), err)
	}
	s.pushEvent(Event{Kind: "dialog", Message: msg})
}

// takeDialog removes h (or, if h is nil, whatever dialog is held) from the
// held slot and returns it; nil if it was answered already.
func (s *Surfer) takeDialog(h *heldDialog) *heldDialog {
	s.dlg.mu.Lock()
	defer s.dlg.mu.Unlock()
	cur := s.dlg.held
	if cur == nil || (h != nil && cur != h) {
		return nil
	}
	s.dlg.held = nil
	cur.t.held.Store(false)
	s.dlg.opened = make(chan struct{})
	cur.timer.Stop()
	return cur
}

// pendingDialog returns the held dialog, nil if none.
func (s *Surfer) pendingDialog() *heldDialog {
	s.dlg.mu.Lock()
	defer s.dlg.mu.Unlock()
	return s.dlg.held
}

// dismissDialog gives h (nil: any held dialog) the safe answer and reports
// it as an event saying why.
func (s *Surfer) dismissDialog(h *heldDialog, why string) {
	h = s.takeDialog(h)
	if h == nil {
		return
	}
	msg := fmt.Sprintf("%s was dismissed: %s", h.describe(), why)
	if err := h.d.Dismiss(); err != nil {
		msg = fmt.Sprintf("%s could not be dismissed: %s", h.describe(), shortErr(err))
	}
	s.pushEvent(Event{Kind: "dialog", Message: msg})
}

// dialogOpened returns a channel closed once a dialog is held.
func (s *Surfer) dialogOpened() <-chan struct{} {
	s.dlg.mu.Lock()
	defer s.dlg.mu.Unlock()
	if s.dlg.opened == nil {
		s.dlg.opened = make(chan struct{})
	}
	return s.dlg.opened
}

// dialogCtx is ctx, also cancelled once a dialog is held: a page blocked
// in a dialog is not waited for.
func (s *Surfer) dialogCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	opened := s.dialogOpened()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-opened:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// unlessDialog runs an input call (a click, a key press) and returns its
// error, or nil as soon as a dialog is held: the browser acknowledges the
// input only once the dialog it opened is closed, so the call finishes
// in the background when the dialog is answered.
func (s *Surfer) unlessDialog(input func() error) error {
	opened := s.dialogOpened()
	done := make(chan error, 1)
	go func() { done <- input() }()
	select {
	case err := <-done:
		return err
	case <-opened:
		return nil
	}
}

// AnswerDialog accepts or dismisses the confirm or prompt dialog the page
// is waiting on; text is what a prompt gets when accepted. The answer is
// an action: it passes the per-tool rules as answer_dialog.
func (s *Surfer) AnswerDialog(ctx context.Context, accept bool, text string) (*ActionResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	h := s.pendingDialog()
	if h == nil {
		return nil, toolErr("no dialog is waiting for an answer")
	}
	if text != "" && (h.kind != "prompt" || !accept) {
		return nil, toolErr("prompt_text is only for accepting a prompt; the dialog is a %s", h.kind)
	}
	d, err := s.gateAction(ctx, "answer_dialog", h.t, nil)
	if err != nil {
		return nil, err
	}
	if h = s.takeDialog(h); h == nil {
		return nil, toolErr("the dialog was already dismissed")
	}
	before := h.t.mark()
	var summary string
	if accept {
		if h.kind == "prompt" {
			if text == "" {
				text = h.def
			}
			err = h.d.Accept(text)
			summary = fmt.Sprintf("I accepted the %s with the text %s", h.describe(), q(text, 200))
		} else {
			err = h.d.Accept()
			summary = fmt.Sprintf("I accepted the %s", h.describe())
		}
	} else {
		err = h.d.Dismiss()
		summary = fmt.Sprintf("I dismissed the %s", h.describe())
	}
	if err != nil {
		return nil, s.inputErr(ctx, err)
	}
	return guarded(ctx, s, h.t, func() (*ActionResult, error) {
		return s.conclude(ctx, settled(h.t, before, reportNavigation, summary, d))
	})
}

// dialogLine is the observation's line for a held dialog.
func dialogLine(h *heldDialog) string {
	if h.kind == "prompt" {
		return fmt.Sprintf("dialog pending: %s with default text %s — answer with answer_dialog (accept, with prompt_text, or dismiss); any other action dismisses it", h.describe(), q(h.def, 100))
	}
	return fmt.Sprintf("dialog pending: %s — answer with answer_dialog (accept or dismiss); any other action dismisses it", h.describe())
}

// dialogObservation is what an observation can say while the active tab
// is blocked in a dialog: the renderer answers nothing until the dialog
// closes, so the page is not read. The latest observation stays the one
// before, and its ids still apply (any action but answer_dialog
// dismisses the dialog first). The observation carries no image.
func (s *Surfer) dialogObservation(h *heldDialog) *Observation {
	t := h.t
	obs := &Observation{Seq: s.seq, URL: t.page.URL(), tab: t, nav: int(t.nav.Load()), taken: time.Now()}
	same := s.last != nil && s.last.tab == t && s.last.nav == obs.nav
	if same {
		obs.Title = t.title // a new document's title cannot be read yet
	}
	var b strings.Builder
	fmt.Fprintf(&b, "page blocked by a dialog: url %s title %s\n", q(obs.URL, 200), q(obs.Title, 120))
	b.WriteString(dialogLine(h) + "\n")
	if len(s.tabs) > 1 {
		obs.Tabs = s.tabInfos()
		parts := make([]string, len(obs.Tabs))
		for i, ti := range obs.Tabs {
			parts[i] = fmt.Sprintf("%d %s", ti.Index, q(ti.Title, 40))
			if ti.Active {
				parts[i] += " (active)"
			}
		}
		b.WriteString("tabs: " + strings.Join(parts, "; ") + "\n")
	}
	obs.Events = s.takeEvents()
	for _, ev := range obs.Events {
		b.WriteString("event: " + ev.Kind + ": " + ev.Message + "\n")
	}
	obs.Blocked = summarizeDenials(s.sess.TakeDenials())
	for _, l := range obs.Blocked.Lines() {
		b.WriteString(l + "\n")
	}
	note := "the page cannot be read while the dialog is open"
	if same {
		note += fmt.Sprintf("; the ids of observation %d still apply", s.last.Seq)
	}
	obs.Notes = []string{note}
	b.WriteString("note: " + note)
	obs.text = b.String()
	obs.Tokens = tokensOf(obs.text)
	return obs
}

// observeDialog returns the dialog observation if a dialog blocks the
// active tab, nil otherwise. A dialog held on a tab that is no longer
// active gets the safe answer: the model no longer looks at it.
func (s *Surfer) observeDialog() *Observation {
	h := s.pendingDialog()
	if h == nil {
		return nil
	}
	if h.t != s.tabs[s.active] {
		s.dismissDialog(h, "its tab is not the active one")
		return nil
	}
	return s.dialogObservation(h)
}
