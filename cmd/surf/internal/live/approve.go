package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
)

// ApprovalReq is a pending approval as the UI shows it.
type ApprovalReq struct {
	ID     int    `json:"id"`
	Tool   string `json:"tool"`
	URL    string `json:"url,omitempty"`
	Host   string `json:"host,omitempty"` // the host a yes opens, for an ask host rule
	Reason string `json:"reason"`
	// Why is the model's stated reason for the action, when it gave one:
	// its words, redacted.
	Why   string    `json:"why,omitempty"`
	Since time.Time `json:"since"`
}

// approval is a pending approval and where its answer goes.
type approval struct {
	req ApprovalReq
	ch  chan verdict // buffered 1
}

type verdict struct {
	ok bool
	by string
}

func (a *approval) answer(ok bool, by string) bool {
	select {
	case a.ch <- verdict{ok, by}:
		return true
	default:
		return false
	}
}

// ErrAnswered is the error of answering an approval that was answered
// already (by another approver, or another person).
var ErrAnswered = errors.New("the approval was already answered")

// Approver returns the session's approver: each Ask decision is shown in
// the UI as a pending approval and put to other as well (MCP elicitation,
// the terminal) at the same time; the first answer wins and the other
// question is cancelled. A nil other leaves the UI alone to answer: the
// decision waits for it until ctx ends.
func (s *Session) Approver(other policy.Approver) policy.Approver {
	return policy.ApproverFunc(func(ctx context.Context, d policy.Decision) (bool, error) {
		return s.approve(ctx, d, other)
	})
}

func (s *Session) approve(ctx context.Context, d policy.Decision, other policy.Approver) (bool, error) {
	a := &approval{ch: make(chan verdict, 1)}
	reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d.Reason), "ask: "))
	a.req = ApprovalReq{Tool: d.Tool, URL: s.red(d.URL), Reason: s.red(reason), Since: time.Now(),
		Why: s.red(textcut.Flat(policy.Stated(ctx), 300))}
	if d.Rule == policy.RuleAsk {
		a.req.Host = d.Host
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false, ErrClosed
	}
	s.nextAppr++
	a.req.ID = s.nextAppr
	s.approvals[a.req.ID] = a
	s.mu.Unlock()
	s.publish(Event{Type: "approval", Data: a.req})
	s.changed()
	defer func() {
		s.mu.Lock()
		delete(s.approvals, a.req.ID)
		s.mu.Unlock()
		s.changed()
	}()

	type result struct {
		ok  bool
		err error
	}
	var otherc chan result
	octx, cancel := context.WithCancel(ctx)
	defer cancel() // the loser is cancelled
	if other != nil {
		otherc = make(chan result, 1)
		go func() {
			ok, err := other.Approve(octx, d)
			otherc <- result{ok, err}
		}()
	}
	var ok bool
	var err error
	by := ""
	select {
	case v := <-a.ch:
		ok, by = v.ok, v.by
	case r := <-otherc:
		ok, err, by = r.ok, r.err, "the other approver"
	case <-ctx.Done():
		err = ctx.Err()
	}
	// Whoever lost can no longer answer.
	a.answer(false, "")
	word := "denied"
	if ok {
		word = "approved"
	}
	if err == nil {
		s.publish(Event{Type: "approved", Data: map[string]any{"id": a.req.ID, "approved": ok, "by": by}})
		s.log.Info("approval", "tool", d.Tool, "url", a.req.URL, "verdict", word, "by", by)
	} else {
		s.publish(Event{Type: "approved", Data: map[string]any{"id": a.req.ID, "approved": false, "by": "nobody: " + err.Error()}})
	}
	return ok, err
}

// Answer answers a pending approval from the UI.
func (s *Session) Answer(id int, approve bool, by string) error {
	s.mu.Lock()
	a, ok := s.approvals[id]
	s.mu.Unlock()
	if !ok {
		return fmt.Errorf("approval %d: %w (it may have been answered elsewhere)", id, ErrNotFound)
	}
	if !a.answer(approve, by) {
		return fmt.Errorf("approval %d: %w", id, ErrAnswered)
	}
	return nil
}
