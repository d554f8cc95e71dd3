package websurfer

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/chromedp/cdproto/cdp"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// A secret is typed into the element the model chose and nowhere else:
// its hosts are checked against the origin of the frame holding the
// element, and its value is set into that element without keystrokes a
// page could send elsewhere.

// secretTarget checks that the secrets in text may be typed into the
// element of r: the origin of the frame that holds the element (not the
// top page's) must be one of each secret's hosts. It returns the text with
// the values put in. A refusal is a tool error and a recorded denial.
func (s *Surfer) secretTarget(ctx context.Context, t *tab, r *elementRef, text string) (string, error) {
	frames, err := s.elementFrames(ctx, r)
	if err != nil {
		return "", s.frameErr(ctx, r, err)
	}
	own := frames[0]
	origin, err := s.documentOrigin(ctx, t, r, own)
	if err != nil {
		return "", err
	}
	where := ""
	if r.inFrame() {
		where = fmt.Sprintf(" (element %d is in a frame from %s)", r.el.ID, q(origin, 100))
	}
	host, ok := originHost(origin)
	var real string
	if !ok {
		err = &policy.SecretError{Reason: fmt.Sprintf("no secret may be typed into element %d: its frame has no network origin (%s)", r.el.ID, q(origin, 100))}
		where = ""
	} else {
		real, err = s.pol.Substitute(text, host)
	}
	if err != nil {
		s.sess.RecordDenial(sandbox.Denial{Layer: sandbox.LayerAction, URL: own.URL, Host: host, Decision: policy.Decision{Verdict: policy.Deny, Rule: "secrets", Reason: err.Error() + where, Tool: "input_text"}})
		return "", toolErr("%w%s", err, where)
	}
	return real, nil
}

// documentOrigin is the origin of the document that holds the element of
// r, in frame f. The browser's frame tree has it for a frame with a
// network URL; a frame without one (about:srcdoc, about:blank) has its
// origin from the page that made it, or an opaque one if sandboxed, which
// only the document itself knows: surf's own script world there reads it,
// where the page's scripts cannot change what it sees.
func (s *Surfer) documentOrigin(ctx context.Context, t *tab, r *elementRef, f *cdp.Frame) (string, error) {
	if _, ok := originHost(f.SecurityOrigin); ok {
		if u, err := url.Parse(f.URL); err == nil && isWebScheme(u.Scheme) {
			return f.SecurityOrigin, nil
		}
	}
	var origin string
	err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, `function () { return this.ownerDocument === document ? String(self.origin) : ''; }`, nil, &origin)
	if err != nil {
		if ctx.Err() != nil || browserGone(err) {
			return "", errors.Join(ctx.Err(), err)
		}
		return "", toolErr("could not tell where element %d is: %s; nothing was typed", r.el.ID, shortErr(err))
	}
	if origin == "" {
		return "", toolErr("element %d is no longer in the page it was observed in; nothing was typed (observe again)", r.el.ID)
	}
	return origin, nil
}

// setSecret is how a secret is typed: no keystrokes, which a page could
// send elsewhere by moving the focus between them, but one call in surf's
// own script world of the element's frame that checks the element is
// still in the document whose origin was checked, focuses it, sets its
// value with the unpatched native setter and fires input and change, as
// typing would. It reports whether the element still has the focus
// afterwards. Only text fields (input and textarea) take secrets.
const setSecret = `function (value, replace) {
  if (!this.isConnected || this.ownerDocument !== document) return {error: 'gone'};
  let proto;
  if (this.tagName === 'INPUT') {
    const t = String(this.type).toLowerCase();
    if (!['text', 'password', 'email', 'search', 'tel', 'url', 'number'].includes(t)) return {error: 'type', type: t};
    proto = HTMLInputElement.prototype;
  } else if (this.tagName === 'TEXTAREA') {
    proto = HTMLTextAreaElement.prototype;
  } else {
    return {error: 'type', type: this.tagName.toLowerCase()};
  }
  if (this.disabled || this.readOnly) return {error: 'readonly'};
  const v = replace ? value : this.value + value;
  if (this.maxLength >= 0 && v.length > this.maxLength) return {error: 'long', max: this.maxLength};
  this.focus();
  // A focus handler may have moved the element: to another document, it
  // would not be where the origin was checked.
  if (!this.isConnected || this.ownerDocument !== document) return {error: 'gone'};
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(this, v);
  this.dispatchEvent(new InputEvent('input', {bubbles: true, composed: true, inputType: 'insertText'}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {focused: document.hasFocus() && this.matches(':focus-within')};
}`

// hasFocusJS reports whether the element, or something inside it, has the
// keyboard focus, in a frame that has it.
const hasFocusJS = `function () { return this.isConnected && document.hasFocus() && this.matches(':focus-within'); }`

// putSecret sets a secret-bearing text into the element of r (see
// setSecret). It returns whether the element kept the focus.
func (s *Surfer) putSecret(ctx context.Context, t *tab, r *elementRef, real string, replace bool) (bool, error) {
	var res struct {
		Error   string
		Type    string
		Max     int
		Focused bool
	}
	id := r.el.ID
	if err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, setSecret, []any{real, replace}, &res); err != nil {
		if ctx.Err() != nil || browserGone(err) {
			return false, errors.Join(ctx.Err(), err)
		}
		return false, toolErr("could not type into element %d: %s; nothing was typed", id, shortErr(err))
	}
	switch res.Error {
	case "":
		return res.Focused, nil
	case "gone":
		return false, toolErr("element %d is no longer in the page it was observed in; nothing was typed (observe again)", id)
	case "type":
		return false, toolErr("element %d %s is not a text field (it is %s); a secret is typed only into a text input or textarea", id, q(r.el.Name, 60), q(res.Type, 40))
	case "readonly":
		// The page changed the field since it was observed.
		return false, tools.NewError(&NotEditableError{ID: id, Role: r.el.Role, Name: r.el.Name})
	case "long":
		return false, toolErr("element %d %s takes at most %d characters, fewer than the text with the secret; nothing was typed", id, q(r.el.Name, 60), res.Max)
	}
	return false, toolErr("could not type into element %d: %s", id, res.Error)
}

// inputSecret types a text with secrets (real, the values put in) into
// the element of r: see setSecret. Enter is pressed only if the element
// still has the focus.
func (s *Surfer) inputSecret(ctx context.Context, t *tab, r *elementRef, text, real string, pressEnter, replace bool) (*outcome, error) {
	if e := notEditable(r.el); e != nil {
		return nil, tools.NewError(e)
	}
	kept, err := s.putSecret(ctx, t, r, real, replace)
	if err != nil {
		return nil, err
	}
	note := ""
	if !kept && pressEnter {
		note = "; the page then moved the keyboard focus away from it, so I did not press Enter"
	}
	return s.typed(ctx, t, r, text, pressEnter && kept, note)
}
