package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/tools"
	"github.com/surfkit/surf/websurfer"
)

// approver answers one MCP session's Ask decisions: through elicitation
// when the client supports it, otherwise (or when elicitation is turned
// off) through the fallback, and with no fallback it denies.
type approver struct {
	ss       *mcp.ServerSession
	fallback policy.Approver
	elicit   bool
	log      *slog.Logger
}

var _ policy.Approver = (*approver)(nil)

// approveField is the one field of the elicitation form.
const approveField = "approve"

// Approve asks the client's user. Only an accepted form whose approve
// field is true approves; declining, cancelling or unchecking denies. An
// elicitation that fails is a tool error (the action is not done, and the
// result says why); a ctx that ended is returned as is.
func (a *approver) Approve(ctx context.Context, d policy.Decision) (bool, error) {
	if !a.elicit || !canElicit(a.ss) {
		if a.fallback == nil {
			return false, nil
		}
		return a.fallback.Approve(ctx, d)
	}
	// The client's user decides: the call's turn at the browser serves
	// others meanwhile (a fallback that answers at once keeps it).
	res, err := admit.Away(ctx, func() (*mcp.ElicitResult, error) { return a.elicitApproval(ctx, d) })
	if err != nil {
		a.log.Warn("elicitation failed", "err", err)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// A tool error: the action is not done, the call reports why,
		// and the session goes on.
		return false, tools.Errorf("the client could not be asked for approval (%v), so the action was not done", err)
	}
	ok := res.Action == "accept" && res.Content[approveField] == true
	a.log.Info("approval", "tool", d.Tool, "url", d.URL, "action", res.Action, "approved", ok)
	return ok, nil
}

// elicitApproval puts d to the client's user as a one-field form.
func (a *approver) elicitApproval(ctx context.Context, d policy.Decision) (*mcp.ElicitResult, error) {
	return a.ss.Elicit(ctx, &mcp.ElicitParams{
		Mode:    "form",
		Message: elicitMessage(d),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				approveField: map[string]any{
					"type":        "boolean",
					"title":       "Approve",
					"description": "Let surf go ahead with this action.",
					"default":     false,
				},
			},
			"required": []string{approveField},
		},
	})
}

// asks reports whether the approver can say yes at all: through
// elicitation (the client said it supports it) or a fallback.
func (a *approver) asks() bool {
	return a.fallback != nil || (a.elicit && canElicit(a.ss))
}

// canElicit reports whether the client said it supports form elicitation.
func canElicit(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	if p == nil || p.Capabilities == nil || p.Capabilities.Elicitation == nil {
		return false
	}
	e := p.Capabilities.Elicitation
	return e.Form != nil || e.URL == nil // {} means form, for older clients
}

// elicitMessage says what surf wants to do. Page strings in the reason are
// quoted by the policy.
func elicitMessage(d policy.Decision) string {
	var b strings.Builder
	b.WriteString("surf asks for approval. ")
	reason := strings.TrimSpace(d.Reason)
	reason = strings.TrimPrefix(reason, "ask: ")
	reason = strings.TrimPrefix(reason, "approval needed: ")
	if reason == "" {
		reason = d.Tool
	}
	fmt.Fprintf(&b, "The browsing policy requires your approval for: %s", reason)
	if d.URL != "" && !strings.Contains(reason, d.URL) {
		fmt.Fprintf(&b, " (page or address: %s)", d.URL)
	}
	b.WriteString(".")
	if d.Rule == policy.RuleAsk && d.Host != "" {
		// A host approval outlasts the call: say so.
		fmt.Fprintf(&b, " Approving opens %s (that host only) to this session's browser.", d.Host)
	}
	b.WriteString(" Approve it?")
	return b.String()
}

// elicitHuman answers request_help for a session without a live view,
// through elicitation: the client's user is asked to do what the agent
// cannot (in a browser window they can see, or by answering: a code from
// a second factor, a choice) and to say when it is done.
type elicitHuman struct {
	ss  *mcp.ServerSession
	log *slog.Logger
}

var _ websurfer.Human = (*elicitHuman)(nil)

// The fields of the help form.
const (
	helpDone = "done"
	helpNote = "note"
)

// Help asks the client's user and returns what to tell the agent.
func (h *elicitHuman) Help(ctx context.Context, reason string) (string, error) {
	res, err := h.ss.Elicit(ctx, &mcp.ElicitParams{
		Mode: "form",
		Message: "surf's agent asks for a person's help with: " + reason +
			". Do it in the browser if you can, or write here what the agent needs (a code, an answer), and say whether it is done.",
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				helpDone: map[string]any{"type": "boolean", "title": "Done", "description": "It is done; the agent can go on.", "default": false},
				helpNote: map[string]any{"type": "string", "title": "Note for the agent", "maxLength": 2000},
			},
			"required": []string{helpDone},
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		h.log.Warn("elicitation for help failed", "err", err)
		return "", fmt.Errorf("the client could not be asked: %w", err)
	}
	note, _ := res.Content[helpNote].(string)
	note = strings.TrimSpace(note)
	h.log.Info("help", "action", res.Action, "done", res.Content[helpDone] == true)
	switch {
	case res.Action == "accept" && res.Content[helpDone] == true:
		if note == "" {
			return "The person says it is done.", nil
		}
		return "The person says it is done, and writes: " + note, nil
	case res.Action == "accept":
		if note == "" {
			return "The person could not do it; continue without help or answer that you are blocked.", nil
		}
		return "The person could not do it, and writes: " + note, nil
	default:
		return "The person declined to help; continue without help or answer that you are blocked.", nil
	}
}
