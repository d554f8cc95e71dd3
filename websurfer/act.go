package websurfer

import (
	"context"
	"fmt"
	"strings"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// Every action takes one path: begin (the lock, a held dialog dismissed,
// crashed tabs replaced), for an action on an element resolve its id and
// pass the gates, then the action's own step, then settle (wait for what
// the step set off, and say whether it navigated or opened a tab) and
// finish (observe the page). onPage and onElement are that path; the
// actions in actions.go are only their steps.

// An outcome is what an action's step did, for the steps after it.
type outcome struct {
	summary string
	// describe, if set, makes the summary after settling instead: for a
	// summary that names the page as it is then.
	describe func() string
	// decisions are the gates the step passed itself (a navigation's);
	// onElement puts the element's gates before them.
	decisions []policy.Decision
	// settle is the tab to wait for after the step, nil for none, and
	// before its navigation count to compare with.
	settle *tab
	before navMark
	// report is what the summary says about the page after settling.
	report report
}

// report is what an action's summary adds after the page settled.
type report int

const (
	reportNothing report = iota
	// reportNavigation: "; the page navigated to ..." if the tab, still
	// the active one, navigated.
	reportNavigation
	// reportNewTab: a new tab the action opened becomes active, and the
	// summary says so (or else that the page navigated).
	reportNewTab
	// reportNewTabURL is reportNewTab, with the new tab's URL.
	reportNewTabURL
)

// settled is the outcome of a step that passed the gates of decisions and
// waits for tab t, whose navigation count was before, and reports what r
// says.
func settled(t *tab, before navMark, r report, summary string, decisions ...policy.Decision) *outcome {
	return &outcome{summary: summary, decisions: decisions, settle: t, before: before, report: r}
}

// onPage runs an action on the page: step gets the active tab with the
// surfer locked.
func (s *Surfer) onPage(ctx context.Context, step func(ctx context.Context, t *tab) (*outcome, error)) (*ActionResult, error) {
	t, unlock, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return guarded(ctx, s, t, func() (*ActionResult, error) {
		o, err := step(ctx, t)
		if err != nil {
			return nil, err
		}
		return s.conclude(ctx, o)
	})
}

// aim says which of the shared checks an action on an element takes
// before its step.
type aim struct {
	id int
	// tool is the tool the policy's action rules judge; "" for an action
	// they do not judge (hover, scroll_element_*).
	tool string
	// link gates the URL of a link as a navigation, before the action
	// rules (click).
	link bool
	// reach checks that the element takes the pointer at its click point
	// now (click, hover).
	reach bool
	// onScreen refuses an element that is not on screen, covered or not
	// (scroll_element_*, whose wheel turns over the element).
	onScreen bool
}

// onElement runs an action on the element with id a.id of the latest
// observation: resolved, gated and checked as a says, then step.
func (s *Surfer) onElement(ctx context.Context, a aim, step func(ctx context.Context, t *tab, r *elementRef) (*outcome, error)) (*ActionResult, error) {
	return s.onPage(ctx, func(ctx context.Context, t *tab) (*outcome, error) {
		r, err := s.target(a.id)
		if err != nil {
			return nil, err
		}
		var decisions []policy.Decision
		if href := r.el.Href; a.link && href != "" && !strings.HasPrefix(strings.ToLower(href), "javascript:") {
			d, err := s.gateURL(ctx, a.tool, href, t.page.URL())
			if err != nil {
				return nil, err
			}
			decisions = append(decisions, d)
		}
		if a.tool != "" {
			d, err := s.gateAction(ctx, a.tool, t, r.el)
			if err != nil {
				return nil, err
			}
			decisions = append(decisions, d)
		}
		if a.onScreen && r.el.Where != InViewport && r.el.Where != Covered {
			e := offscreenError(r.el)
			e.wheel = true
			return nil, tools.NewError(e)
		}
		if a.reach {
			if err := s.reachable(ctx, r); err != nil {
				return nil, err
			}
		}
		o, err := step(ctx, t, r)
		if err != nil {
			return nil, err
		}
		o.decisions = append(decisions, o.decisions...)
		return o, nil
	})
}

// conclude ends an action: it waits for the page as o says, completes the
// summary and observes the page.
func (s *Surfer) conclude(ctx context.Context, o *outcome) (*ActionResult, error) {
	t := o.settle
	navigated := t != nil && s.settle(ctx, t, o.before)
	summary := o.summary
	if o.describe != nil {
		summary = o.describe()
	}
	if t != nil {
		wentTo := func() string { return fmt.Sprintf("; the page navigated to %s", q(t.page.URL(), 200)) }
		switch o.report {
		case reportNavigation:
			if navigated && t == s.tabs[s.active] {
				summary += wentTo()
			}
		case reportNewTab, reportNewTabURL:
			switch {
			case s.adoptPopups(ctx, true) == 0:
				if navigated {
					summary += wentTo()
				}
			case o.report == reportNewTabURL:
				summary += fmt.Sprintf("; it opened a new tab, which is now active (tab %d: %s)", s.active, q(s.tabs[s.active].page.URL(), 200))
			default:
				summary += fmt.Sprintf("; a new tab opened and is now active (tab %d)", s.active)
			}
		}
	}
	return s.finish(ctx, summary, o.decisions...)
}

// finish observes the page after an action and wraps up the result.
func (s *Surfer) finish(ctx context.Context, summary string, decisions ...policy.Decision) (*ActionResult, error) {
	s.adoptPopups(ctx, false)
	progress(ctx, "reading the page")
	obs, err := s.observe(ctx)
	if err != nil {
		return nil, err
	}
	return &ActionResult{Summary: s.pol.Redact(summary), Observation: obs, Decisions: decisions}, nil
}

// begin is the common start of an action: it takes the lock, refuses a
// closed surfer, replaces crashed tabs and returns the active tab.
func (s *Surfer) begin(ctx context.Context) (*tab, func(), error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, nil, ErrClosed
	}
	s.acts++
	s.dismissDialog(nil, "another action came first")
	if err := s.renewCrashed(ctx); err != nil {
		s.mu.Unlock()
		return nil, nil, err
	}
	return s.tabs[s.active], s.unlockPublish, nil
}

// target resolves an id of the latest observation for an action.
func (s *Surfer) target(id int) (*elementRef, error) {
	r, err := s.resolve(id)
	if err != nil {
		return nil, tools.NewError(err)
	}
	return r, nil
}

// gateURL decides a navigation the model asked for, resolving Ask through
// the approver. A denial becomes a tool error and an event.
func (s *Surfer) gateURL(ctx context.Context, tool, raw, base string) (policy.Decision, error) {
	d := s.pol.DecideURL(policy.Navigation, raw, base)
	d.Tool = tool
	d, asked, err := s.decide(ctx, d, raw, func(d policy.Decision) sandbox.Denial {
		return sandbox.Denial{Layer: sandbox.LayerAction, Kind: policy.Navigation, URL: d.URL, Host: d.Host, Decision: d, Navigation: true}
	})
	if err != nil {
		return d, err
	}
	if asked {
		// The approval opens the host for the session's request gate and
		// egress proxy too, not just this step's action gate.
		if err := s.sess.Approve(d.Host, s.cfg.ApprovalTTL); err != nil {
			return d, toolErr("the approval of %s could not be recorded: %v", q(d.Host, 200), err)
		}
	}
	return d, nil
}

// gateAction applies the per-tool rules to an action on an element.
func (s *Surfer) gateAction(ctx context.Context, tool string, t *tab, el *Element) (policy.Decision, error) {
	a := policy.Action{Tool: tool, URL: t.page.URL()}
	target := ""
	if el != nil {
		a.Target = &policy.Element{Role: el.Role, Name: el.Name, InputType: el.InputType}
		// Rules with hosts judge the frames around the element too.
		frames, err := s.actionFrames(ctx, el)
		if err != nil {
			return policy.Decision{Tool: tool, Verdict: policy.Deny}, err
		}
		a.Frames = frames
		target = fmt.Sprintf("%d %s %s", el.ID, el.Role, q(el.Name, 60))
	}
	d, _, err := s.decide(ctx, s.pol.DecideAction(a), target, func(d policy.Decision) sandbox.Denial {
		u := a.URL
		if len(a.Frames) > 0 && d.URL != "" {
			u = d.URL // the rule may have matched a frame
		}
		return sandbox.Denial{Layer: sandbox.LayerAction, URL: u, Decision: d}
	})
	return d, err
}

// decide puts an Ask decision to the approver and notes the outcome for
// TakeDecisions. A denial is recorded as denial describes it and comes
// back as a tool error (a *policy.DeniedError). asked reports whether the
// approver was asked.
func (s *Surfer) decide(ctx context.Context, d policy.Decision, target string, denial func(policy.Decision) sandbox.Denial) (_ policy.Decision, asked bool, _ error) {
	asked = d.Verdict == policy.Ask
	restore := func() {}
	if asked {
		restore = s.setActivity(ActivityApproval)
	}
	d, err := policy.Resolve(ctx, d, s.cfg.Approver)
	restore()
	if err != nil {
		return d, asked, err
	}
	s.decided = append(s.decided, Decided{Decision: d, Asked: asked, Target: target})
	if d.Verdict != policy.Allow {
		s.sess.RecordDenial(denial(d)) // counted by countDenials
		return d, asked, tools.NewError(d.Err())
	}
	return d, asked, nil
}
