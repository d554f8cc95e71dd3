package websurfer

import (
	"context"
	"fmt"
	"math"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/surfkit/surf/perception"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// Actions on points of the screenshot, for pages whose controls are not
// elements (a canvas, a map, a slider drawn in divs, a sortable list):
// click_at and drag. A point is given in the screenshot's pixels; the
// browser hit-tests it, through frames, and the element and frames found
// there are gated like an element's.

// Point is one end of a pointer action: the element with an id of the
// latest observation (its click point), or a point of the screenshot.
type Point struct {
	ID   int     // an element's id; 0 for X, Y
	X, Y float64 // in the screenshot's pixels
}

func (p Point) String() string {
	if p.ID != 0 {
		return fmt.Sprintf("element %d", p.ID)
	}
	return fmt.Sprintf("(%g, %g)", p.X, p.Y)
}

// spot is a point of the viewport resolved for an action: where it is in
// CSS pixels, and what the browser hit-tests there.
type spot struct {
	p    Point
	x, y float64     // CSS pixels of the viewport
	hit  *snapNode   // the node on top, nil if the snapshot lacks it
	src  *frameSnap  // the frame of hit
	el   *Element    // the listed element at the point, if any
	ref  *elementRef // el's, or a reference to hit for frames
}

// what names what is at the spot, for summaries.
func (sp *spot) what() string {
	if sp.el != nil {
		return fmt.Sprintf("%s %s (id %d)", sp.el.Role, q(sp.el.Name, 60), sp.el.ID)
	}
	if sp.hit != nil {
		return sp.hit.Describe()
	}
	return "the page"
}

// toCSS turns a point of the latest observation's screenshot into CSS
// pixels of the viewport, refusing one outside it.
func (s *Surfer) toCSS(p Point) (float64, float64, error) {
	o := s.last
	vw, vh := float64(o.Viewport.Width), float64(o.Viewport.Height)
	iw, ih := float64(o.ImageWidth), float64(o.ImageHeight)
	if iw <= 0 || ih <= 0 {
		iw, ih = vw, vh // no image: the points are CSS pixels
	}
	if math.IsNaN(p.X) || math.IsNaN(p.Y) || p.X < 0 || p.Y < 0 || p.X >= iw || p.Y >= ih {
		return 0, 0, toolErr("the point (%g, %g) is outside the screenshot, which is %gx%g pixels", p.X, p.Y, iw, ih)
	}
	return p.X * vw / iw, p.Y * vh / ih, nil
}

// resolvePoint finds what is at a point for an action: an element's click
// point (checked to be reachable) or the node the browser hit-tests at a
// point of the screenshot, with the listed element it belongs to.
func (s *Surfer) resolvePoint(ctx context.Context, p Point) (*spot, error) {
	if s.last == nil || s.last.tab != s.tabs[s.active] {
		return nil, toolErr("observe the page first: points are in the latest screenshot")
	}
	if p.ID != 0 {
		r, err := s.target(p.ID)
		if err != nil {
			return nil, err
		}
		if err := s.reachable(ctx, r); err != nil {
			return nil, err
		}
		return &spot{p: p, x: r.clickX, y: r.clickY, hit: r.node, src: r.src, el: r.el, ref: r}, nil
	}
	x, y, err := s.toCSS(p)
	if err != nil {
		return nil, err
	}
	hit, src, err := s.hitPoint(ctx, x, y)
	if err != nil {
		if isGone(err) || browserGone(err) || ctx.Err() != nil {
			return nil, err
		}
		return nil, toolErr("could not tell what is at %s: %s", p, shortErr(err))
	}
	sp := &spot{p: p, x: x, y: y, hit: hit, src: src}
	if hit == nil {
		return sp, nil
	}
	// The listed element the point is in: the innermost one.
	for _, r := range s.last.refs {
		if hit == r.node || hit.IsDescendantOf(r.node) || perception.Reaches(hit, r.node) {
			if sp.ref == nil || r.node.IsDescendantOf(sp.ref.node) {
				sp.ref, sp.el = r, r.el
			}
		}
	}
	if sp.ref != nil {
		return sp, nil
	}
	// Not in a listed element: on something that covers listed elements
	// (a modal's backdrop, a cookie banner) the model cannot have meant.
	listed := map[*snapNode]*Element{}
	for _, r := range s.last.refs {
		listed[r.node] = r.el
	}
	owner := perception.CoverOwner(hit, listed)
	by := perception.DescribeCover(owner, listed)
	for _, e := range s.last.Elements {
		if e.Where == Covered && e.CoveredBy != "" && e.CoveredBy == by {
			return nil, toolErr("the point %s is covered by %s, which covers element %d too; close or answer it first", p, by, e.ID)
		}
	}
	sp.ref = &elementRef{src: src, node: hit, backend: hit.Backend(), clickX: x, clickY: y}
	return sp, nil
}

// hitPoint asks the browser which node is at a point of the viewport (CSS
// pixels), going into frames: out-of-process ones through their own
// sessions.
func (s *Surfer) hitPoint(ctx context.Context, px, py float64) (*snapNode, *frameSnap, error) {
	frames := s.last.frames
	if len(frames) == 0 {
		return nil, nil, nil
	}
	fs := frames[0]
	for depth := 0; depth < 16; depth++ {
		x, y := fs.Snap.HitPoint(px, py) // the frame hit-tests in its own CSS pixels
		no := false
		res, err := cdp.Call(ctx, sessOf(fs), dom.GetNodeForLocation, dom.GetNodeForLocationParams{X: int64(x), Y: int64(y), IncludeUserAgentShadowDOM: &no, IgnorePointerEventsNone: &no})
		if err != nil {
			return nil, fs, err
		}
		hit := perception.FindBackend(fs.Snap, res.BackendNodeID)
		var child *frameSnap
		for _, f := range frames {
			if hit != nil && f.Parent == fs && f.Owner == hit {
				child = f
			}
		}
		if child == nil {
			return hit, fs, nil
		}
		fs = child
	}
	return nil, nil, nil
}

// gateSpot judges an action at a spot under the action rules of each of
// tools (click_at is judged as a click too), strictest first, and puts the
// strictest verdict to the approver once.
func (s *Surfer) gateSpot(ctx context.Context, t *tab, sp *spot, names ...string) (policy.Decision, error) {
	a := policy.Action{URL: t.page.URL()}
	target := fmt.Sprintf("%s at %s", sp.what(), sp.p)
	if sp.el != nil {
		a.Target = &policy.Element{Role: sp.el.Role, Name: sp.el.Name, InputType: sp.el.InputType}
	}
	if sp.ref != nil && sp.ref.node != nil && sp.ref.inFrame() {
		frames, err := s.elementFrames(ctx, sp.ref)
		if err != nil {
			return policy.Decision{Tool: names[0], Verdict: policy.Deny}, s.frameErr(ctx, sp.ref, err)
		}
		for _, f := range frames[:len(frames)-1] {
			if loc := frameLocation(f); loc != "" {
				a.Frames = append(a.Frames, loc)
			}
		}
	}
	var d policy.Decision
	for i, name := range names {
		a.Tool = name
		di := s.pol.DecideAction(a)
		if i == 0 || verdictRank(di.Verdict) > verdictRank(d.Verdict) {
			d = di
		}
	}
	d.Tool = names[0]
	d, _, err := s.decide(ctx, d, target, func(d policy.Decision) sandbox.Denial {
		u := a.URL
		if len(a.Frames) > 0 && d.URL != "" {
			u = d.URL
		}
		return sandbox.Denial{Layer: sandbox.LayerAction, URL: u, Decision: d}
	})
	return d, err
}

// verdictRank orders verdicts by strictness: Deny > Ask > Allow.
func verdictRank(v policy.Verdict) int {
	switch v {
	case policy.Allow:
		return 0
	case policy.Ask:
		return 1
	}
	return 2
}

// ClickAt clicks a point of the latest screenshot (in its pixels), for
// what has no element: a canvas, a map. The element and frames at the
// point are gated as click_at and as click.
func (s *Surfer) ClickAt(ctx context.Context, x, y float64) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		sp, err := s.resolvePoint(ctx, Point{X: x, Y: y})
		if err != nil {
			return nil, err
		}
		d, err := s.gateSpot(ctx, t, sp, "click_at", "click")
		if err != nil {
			return nil, err
		}
		before := t.mark()
		if err := s.unlessDialog(func() error { return t.page.Mouse().Click(sp.x, sp.y) }); err != nil {
			return nil, s.inputErr(ctx, err)
		}
		return settled(t, before, reportNewTabURL, fmt.Sprintf("I clicked at %s, on %s", sp.p, sp.what()), d), nil
	})
}

// dragSteps is how many mouse moves a drag makes on its way, so pages
// that follow the pointer (sliders, sortable lists) see it travel.
const dragSteps = 12

// Drag presses the mouse at one point (an element or a point of the
// screenshot), moves it to another and releases it there: a slider's
// thumb, a sortable list's item, a map. Both ends are gated as drag, the
// start as click too.
func (s *Surfer) Drag(ctx context.Context, from, to Point) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		a, err := s.resolvePoint(ctx, from)
		if err != nil {
			return nil, err
		}
		b, err := s.resolvePoint(ctx, to)
		if err != nil {
			return nil, err
		}
		da, err := s.gateSpot(ctx, t, a, "drag", "click")
		if err != nil {
			return nil, err
		}
		db, err := s.gateSpot(ctx, t, b, "drag")
		if err != nil {
			return nil, err
		}
		before := t.mark()
		m := t.page.Mouse()
		err = s.unlessDialog(func() error {
			if err := m.Move(a.x, a.y); err != nil {
				return err
			}
			if err := m.Down(); err != nil {
				return err
			}
			// A first small step starts the drag where pages wait for
			// the pointer to move a little before they take it as one.
			if err := m.Move(a.x+(b.x-a.x)/float64(dragSteps), a.y+(b.y-a.y)/float64(dragSteps)); err != nil {
				_ = m.Up()
				return err
			}
			if err := m.Move(b.x, b.y, playwright.MouseMoveOptions{Steps: playwright.Int(dragSteps)}); err != nil {
				_ = m.Up()
				return err
			}
			return m.Up()
		})
		if err != nil {
			return nil, s.inputErr(ctx, err)
		}
		return settled(t, before, reportNewTab, fmt.Sprintf("I dragged from %s, on %s, to %s, on %s", a.p, a.what(), b.p, b.what()), da, db), nil
	})
}
