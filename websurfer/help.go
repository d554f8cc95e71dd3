package websurfer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Human is a person who can take over the browser when the agent asks
// (the request_help tool): a live view, an MCP elicitation. Help blocks
// until the person took over and handed back (or declined), and returns
// what to tell the model; an error is reported to the model as the tool's
// result, never ends the run.
type Human interface {
	Help(ctx context.Context, reason string) (string, error)
}

// DefaultHelpTimeout bounds request_help unless Config.HelpTimeout says
// otherwise.
const DefaultHelpTimeout = 5 * time.Minute

// noHuman is request_help's result without a Config.Human.
const noHuman = "no human is available to help (no live view or elicitation is attached); continue without help or answer that you are blocked"

// RequestHelp asks Config.Human to take over the browser for reason and
// waits (at most Config.HelpTimeout) for them to hand it back. It returns
// the text for the model: what the person said, that nobody answered in
// time, or that no human is available. It returns an error only when ctx
// ends. Afterwards the surfer picks up what the person did (tabs they
// opened), and the next observation shows the page as they left it.
func (s *Surfer) RequestHelp(ctx context.Context, reason string) (string, error) {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "", toolErr("request_help needs a reason: what should the person do?")
	}
	h := s.cfg.Human
	if h == nil {
		return noHuman, nil
	}
	hctx, cancel := context.WithTimeout(ctx, s.cfg.HelpTimeout)
	defer cancel()
	restore := s.setActivity(ActivityTakenOver)
	// The reason is the model's own words: secrets are redacted, text a
	// person typed is not (the model never saw it; a word it shares with
	// it is the model's).
	answer, err := h.Help(hctx, s.pol.RedactSecrets(reason))
	restore()
	s.pickUp(ctx)
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case errors.Is(err, context.DeadlineExceeded) || (err == nil && hctx.Err() != nil):
		return fmt.Sprintf("nobody took over within %s; continue without help or answer that you are blocked", s.cfg.HelpTimeout), nil
	case err != nil:
		return "the request for help failed: " + s.pol.Redact(err.Error()) + "; continue without help or answer that you are blocked", nil
	}
	answer = strings.TrimSpace(s.pol.Redact(answer))
	if answer == "" {
		answer = "The person handed the browser back."
	}
	return answer, nil
}

// pickUp takes in what a person did to the browser while the agent
// waited: tabs their input opened become known (the newest active, as
// after an action that opened one), and the live view's tab is the
// active one.
func (s *Surfer) pickUp(ctx context.Context) {
	s.mu.Lock()
	defer s.unlockPublish()
	if s.closed {
		return
	}
	s.adoptPopups(ctx, true)
}
