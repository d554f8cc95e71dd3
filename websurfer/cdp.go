package websurfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/surfkit/surf/internal/bounded"
	"github.com/surfkit/surf/internal/cdpmux"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// cdpSession adapts a Playwright CDP session to cdproto's cdp.Session, so
// surf speaks typed CDP (cdp.Call with the generated commands) over the
// connection Playwright already has: local and remote browsers alike. With
// a local browser the observation's reads take surf's own session on the
// same target instead (direct), skipping the driver's relay.
type cdpSession struct {
	s playwright.CDPSession
	// direct, when set, is surf's own session on the same target over the
	// local browser's DevTools pipe (sandbox.Session.DevTools); the
	// observation's read-only commands go there (see directMethods).
	direct sandbox.DevToolsSession
	// frames, when set, draws the target's frames: its frames are on
	// demand (see pump.go), and its screenshots are frames of surf's own.
	frames *frameSource

	mu     sync.Mutex
	subs   map[string][]chan jsonv2.Value
	hooked map[string]bool
	closed bool
}

var _ cdp.Session = (*cdpSession)(nil)

func newCDPSession(s playwright.CDPSession) *cdpSession {
	return &cdpSession{s: s, subs: map[string][]chan jsonv2.Value{}, hooked: map[string]bool{}}
}

// directMethods are the commands sent on the direct session when there is
// one: they read the page without changing any session's state, and their
// results are the large ones.
var directMethods = map[string]bool{
	"Page.captureScreenshot":         true,
	"DOMSnapshot.captureSnapshot":    true,
	"Page.getLayoutMetrics":          true,
	"Accessibility.getPartialAXTree": true,
	"DOM.getBoxModel":                true,
}

// Call sends a command and decodes its result. Playwright calls cannot be
// interrupted; ctx is checked before the call and its error wins after it.
func (c *cdpSession) Call(ctx context.Context, method string, params, result any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.direct != nil && directMethods[method] {
		return c.callDirect(ctx, method, params, result)
	}
	var m map[string]any
	if params != nil {
		b, err := jsonv2.Marshal(params)
		if err != nil {
			return fmt.Errorf("encoding %s: %w", method, err)
		}
		if err := jsonv2.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("encoding %s: %w", method, err)
		}
	}
	// Playwright calls cannot be cancelled: the call runs on its own and
	// is abandoned (its result dropped) when ctx ends first, so a page
	// that never answers (a tab that renders no frame) cannot hang surf.
	type reply struct {
		r   any
		err error
	}
	done := make(chan reply, 1)
	go func() {
		r, err := c.s.Send(method, m)
		done <- reply{r, err}
	}()
	var r any
	var err error
	select {
	case rep := <-done:
		r, err = rep.r, rep.err
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return &cdpError{method: method, err: err}
	}
	if result == nil || r == nil {
		return nil
	}
	if d, ok := result.(anyDecoder); ok {
		// Playwright has already parsed the JSON; large results decode
		// from that value directly instead of through two more passes.
		if err := d.decodeAny(r); err != nil {
			return fmt.Errorf("decoding %s: %w", method, err)
		}
		return nil
	}
	b, err := jsonv2.Marshal(r)
	if err != nil {
		return fmt.Errorf("decoding %s: %w", method, err)
	}
	if err := jsonv2.Unmarshal(b, result); err != nil {
		return fmt.Errorf("decoding %s: %w", method, err)
	}
	return nil
}

// callFunc is the signature of Call.
type callFunc func(ctx context.Context, method string, params, result any) error

// read is Call for a command that reads the page without changing any
// session's state: it goes over the direct session when there is one,
// whatever its method.
func (c *cdpSession) read(ctx context.Context, method string, params, result any) error {
	if c.direct == nil {
		return c.Call(ctx, method, params, result)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return c.callDirect(ctx, method, params, result)
}

// callDirect is Call on the direct session.
func (c *cdpSession) callDirect(ctx context.Context, method string, params, result any) error {
	wait, err := c.sendDirect(ctx, method, params)
	if err != nil {
		return err
	}
	return wait(ctx, result)
}

// sendDirect writes a command to the direct session, which must be there,
// and returns without its reply: commands sent one after another run in
// that order in the renderer. wait decodes the reply into result.
func (c *cdpSession) sendDirect(ctx context.Context, method string, params any) (wait func(ctx context.Context, result any) error, err error) {
	r, err := c.direct.Send(ctx, method, params)
	if err != nil {
		return nil, directResult(ctx, method, nil, err, nil)
	}
	return func(ctx context.Context, result any) error {
		d, takesCBOR := result.(cborDecoder)
		cr, givesCBOR := r.(cborReply)
		if takesCBOR && givesCBOR {
			raw, cbor, err := cr.WaitCBOR(ctx)
			if err != nil || !cbor {
				return directResult(ctx, method, raw, err, result)
			}
			if err := d.decodeCBOR(raw); err != nil {
				return fmt.Errorf("decoding %s: %w", method, err)
			}
			return nil
		}
		raw, err := r.Wait(ctx)
		return directResult(ctx, method, raw, err, result)
	}, nil
}

// directResult decodes a direct session's reply to method (raw, err) into
// result.
func directResult(ctx context.Context, method string, raw []byte, err error, result any) error {
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("%s: %w", method, ctxErr)
		}
		var ce *cdpmux.Error
		if errors.As(err, &ce) {
			return &cdpError{method: method, err: errors.New(ce.Message)}
		}
		return err
	}
	if result == nil {
		return nil
	}
	if d, ok := result.(rawDecoder); ok {
		err = d.decodeRaw(raw)
	} else {
		err = jsonv2.Unmarshal(raw, result)
	}
	if err != nil {
		return fmt.Errorf("decoding %s: %w", method, err)
	}
	return nil
}

// rawDecoder is a result that decodes itself from the raw JSON of a
// direct session's reply.
type rawDecoder interface {
	decodeRaw(b []byte) error
}

// cborDecoder is a result that decodes itself from the CBOR of a direct
// session's reply, when the browser's pipe carries CBOR (see
// cdpmux.Config.CBOR).
type cborDecoder interface {
	decodeCBOR(b []byte) error
}

// cborReply is a direct session's reply that can hand over its result in
// CBOR (cdpmux.Reply.WaitCBOR): cbor says whether it did, or gave JSON.
type cborReply interface {
	WaitCBOR(ctx context.Context) (res []byte, cbor bool, err error)
}

// anyDecoder is a result that decodes itself from the value Playwright
// parsed (maps, slices, float64s, strings, bools).
type anyDecoder interface {
	decodeAny(v any) error
}

// Subscribe buffers the events of method until cancel is called.
func (c *cdpSession) Subscribe(method string) (<-chan jsonv2.Value, func()) {
	ch := make(chan jsonv2.Value, 64)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		close(ch)
		return ch, func() {}
	}
	c.subs[method] = append(c.subs[method], ch)
	if !c.hooked[method] {
		c.hooked[method] = true
		c.s.On(method, func(payload map[string]interface{}) { c.dispatch(method, payload) })
	}
	c.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			list := c.subs[method]
			for i, x := range list {
				if x == ch {
					c.subs[method] = append(list[:i:i], list[i+1:]...)
					close(ch)
					break
				}
			}
		})
	}
}

func (c *cdpSession) dispatch(method string, payload map[string]interface{}) {
	b, err := jsonv2.Marshal(payload)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ch := range c.subs[method] {
		select {
		case ch <- jsonv2.Value(b):
		default: // a slow subscriber loses events rather than blocking the connection
		}
	}
}

// Detach ends the session.
func (c *cdpSession) Detach() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for m, list := range c.subs {
		for _, ch := range list {
			close(ch)
		}
		delete(c.subs, m)
	}
	c.mu.Unlock()
	// The driver never answers a detach from a crashed page's session:
	// the wait is bounded (the call is abandoned).
	_ = bounded.Call(cleanupWait, c.s.Detach)
}

// cdpError is an error reported by the browser for a command.
type cdpError struct {
	method string
	err    error
}

func (e *cdpError) Error() string { return e.method + ": " + e.err.Error() }
func (e *cdpError) Unwrap() error { return e.err }

// isGone reports whether err means the target (page, frame) went away, as
// opposed to a bad command.
func isGone(err error) bool {
	if err == nil {
		return false
	}
	var ce *cdpError
	if !errors.As(err, &ce) {
		return false
	}
	msg := ce.err.Error()
	for _, s := range []string{"Target closed", "Session closed", "has been closed", "No target with given id", "Session with given id not found", "detached", "Cannot find context"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
