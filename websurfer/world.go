package websurfer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/surfkit/surf/internal/textcut"
)

// isolatedWorld holds surf's own JavaScript worlds of a tab's frames.
// Scripts surf runs there (scrolling the page, choosing a native option)
// cannot be seen or tampered with by the page's scripts, which live in
// the main world.
//
// A world belongs to one document: a frame keeps its id across
// navigations, but each new document needs a world of its own (the old
// one may even live on, for the back/forward cache, and a node of the new
// document cannot be resolved in it). So each frame's world is kept with
// the loader id of the document it was made for, and made again when the
// frame's document changed.
type isolatedWorld struct {
	mu  sync.Mutex
	ids map[worldKey]docWorld
}

type worldKey struct {
	sess  *cdpSession
	frame string
}

// docWorld is the world made for one document of a frame.
type docWorld struct {
	loader string // the document's loader id
	id     runtime.ExecutionContextID
}

// worldName is the name of surf's isolated worlds.
const worldName = "surf"

// context returns the isolated world of the current document of a frame of
// a session, creating it when needed. frame "" means the session's main
// frame.
func (w *isolatedWorld) context(ctx context.Context, sess *cdpSession, frame string) (runtime.ExecutionContextID, error) {
	dw, err := w.worldVia(ctx, sess, sess.Call, frame)
	return dw.id, err
}

// worldVia is context, reading the frame tree with call and returning the
// world with its document.
func (w *isolatedWorld) worldVia(ctx context.Context, sess *cdpSession, call callFunc, frame string) (docWorld, error) {
	var tree page.GetFrameTreeResult
	if err := call(ctx, page.CommandGetFrameTree, nil, &tree); err != nil {
		return docWorld{}, err
	}
	if tree.FrameTree == nil || tree.FrameTree.Frame == nil {
		return docWorld{}, errors.New("the page has no main frame")
	}
	f := tree.FrameTree.Frame
	if frame != "" {
		if f = findFrame(tree.FrameTree, frame); f == nil {
			return docWorld{}, errors.New("the element's frame is gone from the page")
		}
	}
	k := worldKey{sess, string(f.ID)}
	w.mu.Lock()
	cur, ok := w.ids[k]
	w.mu.Unlock()
	if ok && cur.loader == string(f.LoaderID) {
		return cur, nil
	}
	no := false
	res, err := cdp.Call(ctx, sess, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: f.ID, WorldName: worldName, GrantUniveralAccess: &no})
	if err != nil {
		return docWorld{}, fmt.Errorf("creating surf's script world: %w", err)
	}
	dw := docWorld{loader: string(f.LoaderID), id: res.ExecutionContextID}
	w.mu.Lock()
	if w.ids == nil {
		w.ids = map[worldKey]docWorld{}
	}
	w.ids[k] = dw
	w.mu.Unlock()
	return dw, nil
}

// findFrame finds a frame by id in a frame tree.
func findFrame(t *page.FrameTree, id string) *cdp.Frame {
	if t == nil || t.Frame == nil {
		return nil
	}
	if string(t.Frame.ID) == id {
		return t.Frame
	}
	for _, c := range t.ChildFrames {
		if f := findFrame(c, id); f != nil {
			return f
		}
	}
	return nil
}

// forget drops the cached world of a frame (after its context died).
func (w *isolatedWorld) forget(sess *cdpSession, frame string) {
	w.mu.Lock()
	if frame == "" {
		for k := range w.ids {
			if k.sess == sess {
				delete(w.ids, k)
			}
		}
	} else {
		delete(w.ids, worldKey{sess, frame})
	}
	w.mu.Unlock()
}

// evaluate runs an expression in the isolated world of a session's main
// frame and decodes its JSON value into out (which may be nil).
func (t *tab) evaluate(ctx context.Context, sess *cdpSession, expr string, out any) error {
	_, err := t.evaluateIn(ctx, sess, sess.Call, expr, out)
	return err
}

// evaluateRead is evaluate for a script that only reads the page (and
// keeps surf's own state in its world): the frame tree and the script go
// over the direct session when there is one, ahead of anything queued on
// Playwright's relay.
func (t *tab) evaluateRead(ctx context.Context, sess *cdpSession, expr string, out any) error {
	_, err := t.evaluateIn(ctx, sess, sess.read, expr, out)
	return err
}

// evaluateIn is evaluate, sending its commands with call and returning
// the world the expression ran in.
func (t *tab) evaluateIn(ctx context.Context, sess *cdpSession, call callFunc, expr string, out any) (docWorld, error) {
	for attempt := 0; ; attempt++ {
		dw, err := t.world.worldVia(ctx, sess, call, "")
		if err != nil {
			return docWorld{}, err
		}
		var res runtime.EvaluateResult
		err = call(ctx, runtime.CommandEvaluate, evalParams(dw.id, expr), &res)
		if err != nil {
			if attempt == 0 && contextGone(err) {
				t.world.forget(sess, "")
				continue
			}
			return docWorld{}, err
		}
		return dw, decodeRemote(res.Result, res.ExceptionDetails, out)
	}
}

// evalParams runs expr in a context and returns its value as JSON, once
// the promise it may return settled.
func evalParams(id runtime.ExecutionContextID, expr string) runtime.EvaluateParams {
	yes := true
	return runtime.EvaluateParams{Expression: expr, ContextID: id, ReturnByValue: &yes, AwaitPromise: &yes}
}

// callOn runs a function with a DOM node as `this`, in the isolated world
// of the node's frame, with JSON arguments, decoding its result into out.
func (t *tab) callOn(ctx context.Context, sess *cdpSession, frame string, backend cdp.BackendNodeID, fn string, args []any, out any) error {
	for attempt := 0; ; attempt++ {
		id, err := t.world.context(ctx, sess, frame)
		if err != nil {
			return err
		}
		obj, err := cdp.Call(ctx, sess, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: backend, ExecutionContextID: id})
		if err != nil {
			if attempt == 0 && contextGone(err) {
				t.world.forget(sess, frame)
				continue
			}
			return fmt.Errorf("the element is gone from the page: %w", err)
		}
		if obj.Object == nil || obj.Object.ObjectID == "" {
			return errors.New("the element is gone from the page")
		}
		var cargs []*runtime.CallArgument
		for _, a := range args {
			b, err := json.Marshal(a)
			if err != nil {
				return err
			}
			cargs = append(cargs, &runtime.CallArgument{Value: b})
		}
		yes := true
		res, err := cdp.Call(ctx, sess, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: fn, ObjectID: obj.Object.ObjectID, Arguments: cargs, ReturnByValue: &yes, AwaitPromise: &yes,
		})
		_ = sess.Call(ctx, runtime.CommandReleaseObject, runtime.ReleaseObjectParams{ObjectID: obj.Object.ObjectID}, nil)
		if err != nil {
			return err
		}
		return decodeRemote(res.Result, res.ExceptionDetails, out)
	}
}

func decodeRemote(r *runtime.RemoteObject, exc *runtime.ExceptionDetails, out any) error {
	if exc != nil {
		msg := exc.Text
		if exc.Exception != nil && exc.Exception.Description != "" {
			msg = exc.Exception.Description
		}
		return fmt.Errorf("script error: %s", textcut.FirstLine(msg))
	}
	if out == nil || r == nil || len(r.Value) == 0 {
		return nil
	}
	return json.Unmarshal(r.Value, out)
}

// contextGone reports an error of a cached world that no longer holds the
// frame's document: destroyed, or kept alive with a page the tab has
// navigated away from (the back-forward cache), so the frame's current
// nodes do not belong to it.
func contextGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "Cannot find context") || strings.Contains(s, "context with specified id") || strings.Contains(s, "Execution context was destroyed") ||
		strings.Contains(s, "does not belong to the document")
}
