package policy

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
)

// Verdict is the outcome of a decision. The zero Verdict is Deny, so a
// Decision that was never filled in denies.
type Verdict int

const (
	// Deny: the navigation, request, connection or action must not happen.
	Deny Verdict = iota
	// Allow: it may happen.
	Allow
	// Ask: it may happen only if an Approver says yes; without one it is
	// denied (see Resolve).
	Ask
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// MarshalText encodes the verdict as "allow", "deny" or "ask".
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText decodes "allow", "deny" or "ask", so that rules written as
// JSON (a board task's policy) read back.
func (v *Verdict) UnmarshalText(b []byte) error {
	p, err := ParseVerdict(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// ParseVerdict parses "allow", "deny" or "ask".
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "deny":
		return Deny, nil
	case "ask":
		return Ask, nil
	}
	return Deny, fmt.Errorf("unknown verdict %q (want allow, deny or ask)", s)
}

// stricter reports whether a is stricter than b: Deny > Ask > Allow.
func stricter(a, b Verdict) bool { return rank(a) > rank(b) }

func rank(v Verdict) int {
	switch v {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// Kind says what a URL is being judged for.
type Kind int

const (
	// Navigation: a top-level or frame navigation, including popups and
	// each redirect hop.
	Navigation Kind = iota
	// Request: a subresource, fetch/XHR, WebSocket or worker request.
	Request
)

func (k Kind) String() string {
	if k == Request {
		return "request"
	}
	return "navigation"
}

// ParseKind parses "navigation" or "request".
func ParseKind(s string) (Kind, error) {
	switch s {
	case "navigation":
		return Navigation, nil
	case "request":
		return Request, nil
	}
	return Navigation, fmt.Errorf("unknown context %q (want navigation or request)", s)
}

// Rule names reported in Decision.Rule for the built-in checks. Host and
// action rules from the configuration report "allow", "deny" or the action
// rule's name.
const (
	RuleURL                = "url"                 // the URL does not parse
	RuleSchemes            = "schemes"             // the scheme is not allowed in this context
	RuleChromiumDivergence = "chromium-divergence" // Chromium may read the host differently
	RulePrivateNetworks    = "private-networks"    // a private address or name
	RuleAllow              = "allow"               // not in the allowlist / allowed by it
	RuleAsk                = "ask"                 // on the ask list: needs approval
	RuleDeny               = "deny"                // matched a deny pattern
	RuleApproval           = "approval"            // resolved by an Approver
	RulePolicy             = "policy"              // no policy (nil *Policy)
)

// Decision is the gate's answer. Reason is written for the model and the
// journal: it says what was judged, the outcome and the rule, e.g.
// "denied: 127.0.0.1 is a private address (loopback) (rule private-networks)".
type Decision struct {
	Verdict Verdict
	Rule    string
	Reason  string
	// URL is the href of the judged URL, Host its URL.hostname; both empty
	// for action decisions without a URL and for URLs that do not parse.
	URL  string
	Host string
	// Tool is the tool of an action decision.
	Tool string
	// Addr is the dialled address of a DecideDial decision.
	Addr netip.Addr
}

// Allowed reports whether the verdict is Allow.
func (d Decision) Allowed() bool { return d.Verdict == Allow }

// Err returns nil for Allow, and a *DeniedError (which matches ErrDenied)
// for Deny and for an unresolved Ask.
func (d Decision) Err() error {
	if d.Verdict == Allow {
		return nil
	}
	return &DeniedError{URL: d.URL, Rule: d.Rule, Reason: d.Reason}
}

// ErrDenied is matched (errors.Is) by every error that reports a denial.
var ErrDenied = errors.New("denied by policy")

// DeniedError is a denial as an error.
type DeniedError struct {
	URL    string
	Rule   string
	Reason string
}

func (e *DeniedError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	return "denied (rule " + e.Rule + ")"
}

// Is makes errors.Is(err, ErrDenied) hold.
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// Approver answers Ask decisions, typically by asking a human.
type Approver interface {
	// Approve reports whether the asked-for navigation or action may go
	// ahead. An error (such as a cancelled ctx) ends the run.
	Approve(ctx context.Context, d Decision) (bool, error)
}

// statedKey carries the model's stated reason in a context.
type statedKey struct{}

// WithStated returns ctx carrying the reason the model gave for the
// action being decided (its call's reasoning argument), for an Approver
// to show a person beside the decision. It is the model's words: an
// approver shows it as such, redacted like all model text.
func WithStated(ctx context.Context, reason string) context.Context {
	if reason == "" {
		return ctx
	}
	return context.WithValue(ctx, statedKey{}, reason)
}

// Stated is the model's stated reason carried by ctx (WithStated), or "".
func Stated(ctx context.Context) string {
	s, _ := ctx.Value(statedKey{}).(string)
	return s
}

// ApproverFunc adapts a function to the Approver interface.
type ApproverFunc func(ctx context.Context, d Decision) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, d Decision) (bool, error) { return f(ctx, d) }

var _ Approver = ApproverFunc(nil)

// AllowAll returns an Approver that approves everything (for
// "--approve allow" in tests and demos).
func AllowAll() Approver {
	return ApproverFunc(func(context.Context, Decision) (bool, error) { return true, nil })
}

// DenyAll returns an Approver that approves nothing ("--approve deny").
func DenyAll() Approver {
	return ApproverFunc(func(context.Context, Decision) (bool, error) { return false, nil })
}

// Resolve turns an Ask decision into Allow or Deny by asking a. Allow and
// Deny are returned unchanged. With a nil Approver, Ask is Deny. An error
// from the approver is returned with a Deny decision.
func Resolve(ctx context.Context, d Decision, a Approver) (Decision, error) {
	if d.Verdict != Ask {
		return d, nil
	}
	out := d
	out.Rule = d.Rule
	if a == nil {
		out.Verdict = Deny
		out.Reason = "denied: " + trimVerdictPrefix(d.Reason) + "; approval is required and no approver is configured"
		return out, nil
	}
	if err := ctx.Err(); err != nil {
		out.Verdict = Deny
		return out, err
	}
	ok, err := a.Approve(ctx, d)
	if err != nil {
		out.Verdict = Deny
		out.Reason = "denied: " + trimVerdictPrefix(d.Reason) + "; the approver failed"
		return out, fmt.Errorf("asking for approval: %w", err)
	}
	if ok {
		out.Verdict = Allow
		out.Reason = "approved: " + trimVerdictPrefix(d.Reason)
	} else {
		out.Verdict = Deny
		out.Reason = "denied by the approver: " + trimVerdictPrefix(d.Reason)
	}
	return out, nil
}

func trimVerdictPrefix(s string) string {
	for _, p := range []string{"approval needed: ", "denied: ", "allowed: "} {
		if len(s) >= len(p) && s[:len(p)] == p {
			return s[len(p):]
		}
	}
	return s
}
