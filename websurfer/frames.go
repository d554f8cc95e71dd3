package websurfer

import (
	"context"
	"errors"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
)

// Where an element lives decides what the policy says about acting on it:
// a secret may be typed only into a frame whose origin is one of the
// secret's hosts, and an action rule with hosts applies to the frames
// around the target as well as to the top page. What the frames are is
// read from the browser at the time of the action (Page.getFrameTree on
// the frame's own CDP session), not from the page's scripts, which can
// say anything about their own origin.

// errFrameGone is the error of an element whose frame is no longer there.
var errFrameGone = errors.New("its frame is gone")

// inFrame reports whether the element of r is inside a frame rather than
// in the top page's own document.
func (r *elementRef) inFrame() bool { return r.src.Parent != nil || r.node.InFrame() }

// elementFrames returns the frames the element of r is in, as the browser
// has them now: its own frame first, then each frame around it, the top
// page's main frame last.
func (s *Surfer) elementFrames(ctx context.Context, r *elementRef) ([]*cdp.Frame, error) {
	var out []*cdp.Frame
	fs, id := r.src, r.node.FrameID()
	for depth := 0; fs != nil; depth++ {
		if id == "" || depth > 32 {
			return nil, errFrameGone
		}
		var tree page.GetFrameTreeResult
		if err := sessOf(fs).Call(ctx, page.CommandGetFrameTree, nil, &tree); err != nil {
			return nil, err
		}
		path := framePath(tree.FrameTree, cdp.FrameID(id), 0)
		if path == nil {
			return nil, errFrameGone
		}
		for i := len(path) - 1; i >= 0; i-- {
			out = append(out, path[i])
		}
		if fs.Parent == nil {
			break
		}
		if fs.Owner == nil {
			return nil, errFrameGone
		}
		fs, id = fs.Parent, fs.Owner.FrameID()
	}
	return out, nil
}

// framePath is the path of frames from the root of tree down to frame id,
// nil if id is not in the tree.
func framePath(tree *page.FrameTree, id cdp.FrameID, depth int) []*cdp.Frame {
	if tree == nil || tree.Frame == nil || depth > 64 {
		return nil
	}
	if tree.Frame.ID == id {
		return []*cdp.Frame{tree.Frame}
	}
	for _, c := range tree.ChildFrames {
		if p := framePath(c, id, depth+1); p != nil {
			return append([]*cdp.Frame{tree.Frame}, p...)
		}
	}
	return nil
}

// frameLocation is the address an action rule judges a frame by: its URL,
// or for a frame without a network URL (about:srcdoc, about:blank, blob:)
// its origin, which it has from the page that made it. A frame with an
// opaque origin and no network URL (a data: or sandboxed srcdoc frame)
// gives "": it has no host, and the frames around it are judged.
func frameLocation(f *cdp.Frame) string {
	if u, err := url.Parse(f.URL); err == nil && isWebScheme(u.Scheme) && u.Host != "" {
		return f.URL
	}
	if _, ok := originHost(f.SecurityOrigin); ok {
		return f.SecurityOrigin
	}
	return ""
}

func isWebScheme(s string) bool {
	s = strings.ToLower(s)
	return s == "http" || s == "https"
}

// originHost is the host of a tuple origin ("https://host:port"); false
// for an opaque origin ("null") or one without a network host.
func originHost(origin string) (string, bool) {
	u, err := url.Parse(origin)
	if err != nil || !isWebScheme(u.Scheme) || u.Hostname() == "" {
		return "", false
	}
	return u.Hostname(), true
}

// refOf finds the reference of an element of the latest observation.
func (s *Surfer) refOf(el *Element) *elementRef {
	if s.last == nil || el == nil {
		return nil
	}
	if r := s.last.refs[el.ID]; r != nil && r.el == el {
		return r
	}
	for _, r := range s.last.refs {
		if r.el == el {
			return r
		}
	}
	return nil
}

// actionFrames is Action.Frames for an action on el: the locations of the
// frames it is in, its own first, without the top page; nil for an element
// of the top page. An element whose frames cannot be read is refused.
func (s *Surfer) actionFrames(ctx context.Context, el *Element) ([]string, error) {
	r := s.refOf(el)
	if r == nil {
		// Not an element of the latest observation: what it said is all
		// there is.
		if el.Frame != "" {
			return []string{el.Frame}, nil
		}
		return nil, nil
	}
	if !r.inFrame() {
		return nil, nil
	}
	frames, err := s.elementFrames(ctx, r)
	if err != nil {
		return nil, s.frameErr(ctx, r, err)
	}
	var out []string
	for _, f := range frames[:len(frames)-1] {
		if loc := frameLocation(f); loc != "" {
			out = append(out, loc)
		}
	}
	return out, nil
}

// frameErr sorts an error of reading an element's frames: the browser or
// the run gone ends the run; anything else is a tool error, and the
// action is not done.
func (s *Surfer) frameErr(ctx context.Context, r *elementRef, err error) error {
	if err := endsRun(ctx, err); err != nil {
		return err
	}
	return toolErr("could not tell which frame element %d %s %s is in (%s); observe again", r.el.ID, r.el.Role, q(r.el.Name, 60), shortErr(err))
}

// focused reports whether the element of r (or something inside it) has
// the keyboard focus now.
func (s *Surfer) focused(ctx context.Context, t *tab, r *elementRef) (bool, error) {
	var ok bool
	if err := t.callOn(ctx, r.sess(), r.node.FrameID(), r.backend, hasFocusJS, nil, &ok); err != nil {
		if ctx.Err() != nil || browserGone(err) {
			return false, errors.Join(ctx.Err(), err)
		}
		return false, toolErr("could not check that element %d has the keyboard focus: %s", r.el.ID, shortErr(err))
	}
	return ok, nil
}

// focusMovedErr is the result when the page took the focus away from the
// element surf was typing into.
func focusMovedErr(r *elementRef, what string) error {
	return toolErr("the page moved the keyboard focus away from element %d %s %s %s", r.el.ID, r.el.Role, q(r.el.Name, 60), what)
}
