package policy

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// Approvals is the set of hosts a human approved for one session: each
// opens one host whose host rules say Ask (an ask entry), for the rest of
// the session or until it expires. It is safe for concurrent use.
//
// A policy that consults it (WithApprovals) turns an Ask verdict for an
// approved host into Allow, in every decision: navigations and requests
// (DecideURL, Decide) and the egress proxy's dials (DecideDial), so that
// every enforcement layer agrees. An approval never overrides a Deny: a
// deny entry, a private address an ask entry does not name, a port, path
// or scheme outside the ask entry, or a name that resolves to a private
// address all stay denied. Other hosts matching the same ask entry are
// not opened, and action rules (DecideAction) are not affected: an action
// is approved each time it is asked.
type Approvals struct {
	mu    sync.RWMutex
	hosts map[string]time.Time // zero time: no expiry
	now   func() time.Time     // tests set a clock; nil means time.Now
}

// NewApprovals returns an empty set.
func NewApprovals() *Approvals { return &Approvals{hosts: map[string]time.Time{}} }

// approvalKey is the form hosts are kept in: the canonical host (as the
// URL parser serializes it, IPv6 in brackets) without a trailing dot.
func approvalKey(h Host) string { return strings.TrimSuffix(h.String(), ".") }

// parseApprovalHost reads a host as Decision.Host gives it: a domain, an
// IPv4 address or an IPv6 address with or without brackets.
func parseApprovalHost(host string) (Host, error) {
	in := strings.TrimSpace(host)
	if strings.Contains(in, ":") && !strings.HasPrefix(in, "[") {
		in = "[" + in + "]"
	}
	h, err := ParseHost(in)
	if err != nil {
		return Host{}, err
	}
	switch h.Kind() {
	case HostDomain, HostIPv4, HostIPv6:
		return h, nil
	}
	return Host{}, fmt.Errorf("%s is not a network host", quoteInput(host))
}

// Approve opens host for ttl (zero or less: until the set is dropped with
// its session). host is a domain or an IP address, as Decision.Host
// reports it; approving it again extends (or makes permanent) its time.
func (a *Approvals) Approve(host string, ttl time.Duration) error {
	if a == nil {
		return fmt.Errorf("approving %s: no approval set", quoteInput(host))
	}
	h, err := parseApprovalHost(host)
	if err != nil {
		return fmt.Errorf("approving %s: %w", quoteInput(host), err)
	}
	var until time.Time
	if ttl > 0 {
		until = a.clock().Add(ttl)
	}
	k := approvalKey(h)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hosts == nil {
		a.hosts = map[string]time.Time{}
	}
	if old, ok := a.hosts[k]; ok && (old.IsZero() || (!until.IsZero() && old.After(until))) {
		return nil // already open for at least as long
	}
	a.hosts[k] = until
	return nil
}

// Revoke closes host again.
func (a *Approvals) Revoke(host string) {
	if a == nil {
		return
	}
	h, err := parseApprovalHost(host)
	if err != nil {
		return
	}
	a.mu.Lock()
	delete(a.hosts, approvalKey(h))
	a.mu.Unlock()
}

// Approved reports whether host is approved now.
func (a *Approvals) Approved(host string) bool {
	h, err := parseApprovalHost(host)
	if err != nil {
		return false
	}
	return a.approved(h)
}

// Hosts lists the hosts approved now, for session info and journals.
func (a *Approvals) Hosts() []string {
	if a == nil {
		return nil
	}
	now := a.clock()
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []string
	for h, until := range a.hosts {
		if until.IsZero() || now.Before(until) {
			out = append(out, h)
		}
	}
	return out
}

// CopyFrom adds the approvals of other that are still open (with their
// expiry), e.g. to a session that replaces a crashed one.
func (a *Approvals) CopyFrom(other *Approvals) {
	if a == nil || other == nil || a == other {
		return
	}
	now := other.clock()
	other.mu.RLock()
	m := make(map[string]time.Time, len(other.hosts))
	for h, until := range other.hosts {
		if until.IsZero() || now.Before(until) {
			m[h] = until
		}
	}
	other.mu.RUnlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.hosts == nil {
		a.hosts = map[string]time.Time{}
	}
	for h, until := range m {
		if old, ok := a.hosts[h]; ok && (old.IsZero() || (!until.IsZero() && old.After(until))) {
			continue
		}
		a.hosts[h] = until
	}
}

func (a *Approvals) approved(h Host) bool {
	if a == nil {
		return false
	}
	a.mu.RLock()
	until, ok := a.hosts[approvalKey(h)]
	a.mu.RUnlock()
	return ok && (until.IsZero() || a.clock().Before(until))
}

func (a *Approvals) clock() time.Time {
	if a.now != nil {
		return a.now()
	}
	return time.Now()
}

// WithApprovals returns p consulting a: an Ask verdict of the host rules
// for a host in a is Allow (rule approval). Everything else is p's. A nil
// a gives p's decisions unchanged; narrowing the result keeps a. A policy
// not made by New is returned as it is (it denies everything).
func (p *Policy) WithApprovals(a *Approvals) *Policy {
	if p.unusable() {
		return p
	}
	out := *p
	out.approvals = a
	return &out
}

// approve turns an Ask decision for an approved host into Allow.
func (p *Policy) approve(d Decision, t target) Decision {
	if d.Verdict != Ask || !p.approvals.approved(t.host) {
		return d
	}
	d.Verdict, d.Rule = Allow, RuleApproval
	d.Reason = fmt.Sprintf("allowed: %s was approved for this session (rule approval)", t.display)
	return d
}
