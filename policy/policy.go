package policy

import (
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strconv"
	"strings"

	"github.com/surfkit/surf/internal/textcut"
)

// Policy is a compiled, immutable policy. It is safe for concurrent use.
// Make one with New; a nil *Policy, or a Policy not made by New, denies
// everything.
type Policy struct {
	layers  []*layer
	secrets []*secret
	// approvals, when set, turns Ask into Allow for the hosts a human
	// approved (see Approvals).
	approvals *Approvals
	// redactions, when set, are strings learned at run time that Redact
	// also replaces (see Redactions).
	redactions *Redactions
}

// layer is one compiled Config or Restriction. A Policy's decision is the
// strictest of its layers' decisions, which is what makes Narrow and
// Restrict unable to widen.
type layer struct {
	allow   []*hostMatcher
	ask     []*hostMatcher
	deny    []*hostMatcher
	actions []*actionMatcher
	// restriction: an empty allow list places no limit (instead of "any
	// public host"), and private addresses are left to the other layers.
	restriction bool
}

// New compiles and validates cfg. The zero Config gives the default policy:
// public hosts allowed, private networks denied, no action rules.
func New(cfg Config) (*Policy, error) {
	l, err := compileLayer(cfg.Allow, cfg.Ask, cfg.Deny, cfg.Actions, false)
	if err != nil {
		return nil, err
	}
	p := &Policy{layers: []*layer{l}}
	names := map[string]bool{}
	for i, s := range cfg.Secrets {
		cs, err := compileSecret(s)
		if err != nil {
			return nil, fmt.Errorf("secrets[%d]: %w", i, err)
		}
		if names[cs.name] {
			return nil, fmt.Errorf("secrets[%d]: secret %s defined twice", i, cs.name)
		}
		names[cs.name] = true
		p.secrets = append(p.secrets, cs)
	}
	return p, nil
}

// MustNew is New for configurations known to be valid; it panics on error.
func MustNew(cfg Config) *Policy {
	p, err := New(cfg)
	if err != nil {
		panic(err)
	}
	return p
}

func compileLayer(allow, ask, deny []HostRule, actions []ActionRule, restriction bool) (*layer, error) {
	l := &layer{restriction: restriction}
	for i, r := range allow {
		m, err := compileHostRule(r)
		if err != nil {
			return nil, fmt.Errorf("allow[%d]: %w", i, err)
		}
		l.allow = append(l.allow, m)
	}
	for i, r := range ask {
		m, err := compileHostRule(r)
		if err != nil {
			return nil, fmt.Errorf("ask[%d]: %w", i, err)
		}
		l.ask = append(l.ask, m)
	}
	for i, r := range deny {
		m, err := compileHostRule(r)
		if err != nil {
			return nil, fmt.Errorf("deny[%d]: %w", i, err)
		}
		l.deny = append(l.deny, m)
	}
	for i, r := range actions {
		m, err := compileAction(i, r)
		if err != nil {
			return nil, fmt.Errorf("actions[%d]: %w", i, err)
		}
		l.actions = append(l.actions, m)
	}
	return l, nil
}

// Narrow returns a policy that allows only what both p and other allow, and
// whose action verdicts are the stricter of the two (Deny > Ask > Allow).
// The secrets are p's; other's are ignored. The approval set (see
// WithApprovals) is p's, else other's. Narrowing can never widen p.
func (p *Policy) Narrow(other *Policy) *Policy {
	if p.unusable() || other.unusable() {
		return nil
	}
	out := &Policy{secrets: p.secrets, approvals: p.approvals, redactions: p.redactions}
	if out.approvals == nil {
		out.approvals = other.approvals
	}
	if out.redactions == nil {
		out.redactions = other.redactions
	}
	out.layers = append(append([]*layer(nil), p.layers...), other.layers...)
	return out
}

// Restriction narrows a policy from a client (an MCP client's arguments,
// command-line flags): Allow, when not empty, limits hosts to those listed
// (private addresses still need an IP entry); Ask makes hosts need
// approval; Deny adds denials; Actions adds action rules. An empty
// Restriction changes nothing.
type Restriction struct {
	Allow   []HostRule
	Ask     []HostRule
	Deny    []HostRule
	Actions []ActionRule
}

// Restrict returns p narrowed by r. Like Narrow, it can never widen p.
func (p *Policy) Restrict(r Restriction) (*Policy, error) {
	if p.unusable() {
		return nil, fmt.Errorf("restricting a policy not made by New")
	}
	l, err := compileLayer(r.Allow, r.Ask, r.Deny, r.Actions, true)
	if err != nil {
		return nil, err
	}
	out := &Policy{secrets: p.secrets, approvals: p.approvals, redactions: p.redactions}
	out.layers = append(append([]*layer(nil), p.layers...), l)
	return out, nil
}

// unusable reports whether p is nil or was not made by New.
func (p *Policy) unusable() bool { return p == nil || len(p.layers) == 0 }

func nilPolicy() Decision {
	return Decision{Verdict: Deny, Rule: RulePolicy, Reason: "denied: no policy is configured (rule policy)"}
}

// maxQuoted bounds how much of a bad input a reason repeats.
const maxQuoted = 120

func quoteInput(s string) string {
	if len(s) > maxQuoted {
		return strconv.Quote(textcut.Prefix(s, maxQuoted)) + "..."
	}
	return strconv.Quote(s)
}

// DecideURL parses rawURL against base (the URL of the page or frame that
// holds it, "" for none) exactly as Chromium does, and judges it for kind.
// Input that does not parse is denied (rule url).
func (p *Policy) DecideURL(kind Kind, rawURL, base string) Decision {
	if p.unusable() {
		return nilPolicy()
	}
	var b *URL
	if base != "" {
		var err error
		b, err = ParseURL(base, nil)
		if err != nil {
			return Decision{Verdict: Deny, Rule: RuleURL,
				Reason: "denied: the base URL " + quoteInput(base) + " is not a valid URL (rule url)"}
		}
	}
	u, err := ParseURL(rawURL, b)
	if err != nil {
		reason := "not a valid URL"
		if ue, ok := err.(*URLError); ok {
			reason = ue.Reason
		}
		return Decision{Verdict: Deny, Rule: RuleURL,
			Reason: "denied: " + quoteInput(rawURL) + " is not a valid URL: " + reason + " (rule url)"}
	}
	return p.Decide(kind, u)
}

// Decide judges a parsed URL for kind:
//
//   - http, https: by the host rules, for navigations and requests;
//   - ws, wss: by the host rules, for requests only;
//   - blob: by the host rules applied to the blob's origin (an opaque
//     origin is denied);
//   - about:blank and about:srcdoc: allowed (no network);
//   - data: allowed for requests, denied for navigations;
//   - anything else (javascript:, file:, ftp:, chrome:, view-source:,
//     filesystem: ...): denied.
func (p *Policy) Decide(kind Kind, u *URL) Decision {
	if p.unusable() {
		return nilPolicy()
	}
	if u == nil {
		return Decision{Verdict: Deny, Rule: RuleURL, Reason: "denied: no URL (rule url)"}
	}
	d := Decision{URL: u.String(), Host: u.Hostname()}
	schemeDeny := func(why string) Decision {
		d.Verdict, d.Rule = Deny, RuleSchemes
		d.Reason = fmt.Sprintf("denied: scheme %q is not allowed for %s%s (rule schemes)", u.Scheme(), kindNoun(kind), why)
		return d
	}
	schemeAllow := func(why string) Decision {
		d.Verdict, d.Rule = Allow, RuleSchemes
		d.Reason = fmt.Sprintf("allowed: %s URLs %s (rule schemes)", u.Scheme(), why)
		return d
	}
	switch u.Scheme() {
	case "http", "https":
		return p.decideTarget(d, targetFromURL(u, true))
	case "ws", "wss":
		if kind == Navigation {
			return schemeDeny("")
		}
		return p.decideTarget(d, targetFromURL(u, true))
	case "blob":
		o := u.Origin()
		if o.Opaque {
			return schemeDeny(" when the blob has no http(s) origin")
		}
		t := target{scheme: o.Scheme, host: o.Host, port: o.Port}
		if t.port < 0 {
			t.port = DefaultPort(o.Scheme)
		}
		t.display = o.String()
		return p.decideTarget(d, t)
	case "about":
		if path := u.Pathname(); path == "blank" || path == "srcdoc" {
			return schemeAllow("make no network request")
		}
		return schemeDeny("")
	case "data":
		if kind == Request {
			return schemeAllow("make no network request")
		}
		return schemeDeny("")
	}
	return schemeDeny("")
}

func kindNoun(k Kind) string {
	if k == Request {
		return "requests"
	}
	return "navigation"
}

// target is what the host rules judge.
type target struct {
	display   string // what reasons call it: "example.com", "example.com:8443"
	scheme    string // "" at dial time
	host      Host
	port      int
	path      string
	checkPath bool
	dialAddr  netip.Addr // valid at dial time: the resolved address
}

func targetFromURL(u *URL, checkPath bool) target {
	return target{display: u.Host(), scheme: u.Scheme(), host: u.HostInfo(),
		port: u.EffectivePort(), path: u.Pathname(), checkPath: checkPath}
}

func (p *Policy) decideTarget(d Decision, t target) Decision {
	if why := t.host.ChromiumAmbiguous(); why != "" {
		d.Verdict, d.Rule = Deny, RuleChromiumDivergence
		d.Reason = fmt.Sprintf("denied: the host %s may be read differently by Chromium (%s) (rule chromium-divergence)", quoteInput(t.host.String()), why)
		return d
	}
	switch t.host.Kind() {
	case HostDomain, HostIPv4, HostIPv6:
	default:
		d.Verdict, d.Rule = Deny, RuleURL
		d.Reason = "denied: the URL has no network host (rule url)"
		return d
	}
	// The strictest layer wins: the first Deny, else the first Ask, else
	// the first layer's Allow.
	var first, ask Decision
	asked := false
	for i, l := range p.layers {
		ld := l.decideHost(t)
		switch ld.Verdict {
		case Allow:
			if i == 0 {
				first = ld
			}
			continue
		case Ask:
			if !asked {
				ask, asked = ld, true
			}
			continue
		}
		ld.URL, ld.Host, ld.Tool, ld.Addr = d.URL, d.Host, d.Tool, d.Addr
		return ld
	}
	if asked {
		first = ask
	}
	first.URL, first.Host, first.Tool, first.Addr = d.URL, d.Host, d.Tool, d.Addr
	return p.approve(first, t)
}

// matches reports whether rule m applies to t. A target without a scheme
// (a dial) or without a path (a dial, a blob origin) is matched by the
// rule's host and port only; a deny rule limited to some schemes or paths
// then does not apply, since it cannot be checked and it does not deny
// the whole host. Deny rules match paths leniently, others strictly.
func (t target) matches(m *hostMatcher, ref hostRef, deny bool) bool {
	if !m.matchName(ref) {
		return false
	}
	if t.port == anyPort {
		// Any port: a rule limited to some ports allows the host on
		// those, and does not deny the whole host.
		if deny && len(m.ports) > 0 {
			return false
		}
	} else if !m.matchPort(t.port) {
		return false
	}
	if t.scheme != "" {
		if !m.matchScheme(t.scheme) {
			return false
		}
	} else if deny && len(m.schemes) > 0 {
		return false
	}
	if t.checkPath {
		if !m.matchPath(t.path, deny) {
			return false
		}
	} else if deny && len(m.paths) > 0 {
		return false
	}
	return true
}

func denyf(rule, format string, args ...any) Decision {
	return Decision{Verdict: Deny, Rule: rule, Reason: fmt.Sprintf(format, args...)}
}

func (l *layer) decideHost(t target) Decision {
	ref := refFromHost(t.host)
	name := t.host.String()
	// Deny wins.
	for _, m := range l.deny {
		if t.matches(m, ref, true) {
			return denyf(RuleDeny, "denied: %s matches deny rule %q (rule deny)", t.display, m.src)
		}
		if t.dialAddr.IsValid() && m.isIP && m.matchAddr(t.dialAddr) && m.matchPort(t.port) && len(m.paths) == 0 && len(m.schemes) == 0 {
			return denyf(RuleDeny, "denied: %s resolved to %s, which matches deny rule %q (rule deny)", name, t.dialAddr.Unmap(), m.src)
		}
	}
	if l.restriction && len(l.allow) == 0 && len(l.ask) == 0 {
		return Decision{Verdict: Allow, Rule: RuleAllow, Reason: "allowed: " + t.display + " is not denied"}
	}

	// Private addresses and names need an explicit entry: an IP or CIDR
	// entry for addresses, a name entry (not "*") for names.
	var privKind string
	var priv bool
	if ref.isIP() {
		privKind, priv = PrivateAddress(t.host.Addr())
	} else {
		privKind, priv = privateName(ref.domain)
	}
	find := func(list []*hostMatcher) *hostMatcher {
		for _, m := range list {
			if t.matches(m, ref, false) && (!priv || !m.any) {
				return m
			}
		}
		return nil
	}
	askMatch, allowMatch := find(l.ask), find(l.allow)
	matched := askMatch
	if matched == nil {
		matched = allowMatch
	}
	if priv && matched == nil {
		what := "address"
		if !ref.isIP() {
			what = "host"
		}
		return denyf(RulePrivateNetworks, "denied: %s is a private %s (%s) (rule private-networks)", name, what, privKind)
	}
	if matched == nil && len(l.allow) > 0 {
		for _, m := range append(append([]*hostMatcher(nil), l.allow...), l.ask...) {
			if m.matchName(ref) {
				return denyf(RuleAllow, "denied: %s is not in the allowlist: %s is listed only for other ports, paths or schemes (rule allow)", targetString(t), name)
			}
		}
		return denyf(RuleAllow, "denied: %s is not in the allowlist (rule allow)", t.display)
	}

	// At dial time, the resolved address must be public, or covered by an
	// IP entry, or be loopback for a loopback name the allowlist names.
	if t.dialAddr.IsValid() {
		if kind, p := PrivateAddress(t.dialAddr); p {
			ok := false
			for _, m := range append(append([]*hostMatcher(nil), l.allow...), l.ask...) {
				if m.matchAddr(t.dialAddr) && m.matchPort(t.port) {
					ok = true
					break
				}
			}
			if !ok && matched != nil && !matched.any && loopbackName(ref.domain) && t.dialAddr.Unmap().IsLoopback() {
				ok = true
			}
			if !ok {
				return denyf(RulePrivateNetworks, "denied: %s resolved to %s, a private address (%s) (rule private-networks)", name, t.dialAddr.Unmap(), kind)
			}
		}
	}
	switch {
	case askMatch != nil:
		return Decision{Verdict: Ask, Rule: RuleAsk, Reason: fmt.Sprintf("approval needed: %s matches ask rule %q (rule ask)", t.display, askMatch.src)}
	case allowMatch != nil:
		return Decision{Verdict: Allow, Rule: RuleAllow, Reason: fmt.Sprintf("allowed: %s matches allow rule %q", t.display, allowMatch.src)}
	case l.restriction:
		return Decision{Verdict: Allow, Rule: RuleAllow, Reason: "allowed: " + t.display + " is not denied"}
	}
	return Decision{Verdict: Allow, Rule: RuleAllow, Reason: "allowed: " + t.display + " is a public host"}
}

func targetString(t target) string {
	s := t.display
	if t.checkPath && t.path != "" && t.path != "/" {
		s += t.path
	}
	if t.scheme != "" {
		s = t.scheme + "://" + s
	}
	return s
}

// DecideDial judges a connection the egress proxy is about to make, after
// it resolved DNS itself: host is the requested host (a domain or IP
// literal, brackets optional for IPv6), port the requested port, addr the
// address it will dial. The host must pass the host rules (ports yes;
// paths and schemes are not known here and are not checked), and addr must
// be public unless an IP/CIDR allow entry covers it (or it is loopback and
// host is a loopback name the allowlist names). A hostname allow entry
// never implies private addresses, so DNS rebinding to a private range is
// denied.
func (p *Policy) DecideDial(host string, port int, addr netip.Addr) Decision {
	if p.unusable() {
		return nilPolicy()
	}
	d := Decision{}
	if port < 1 || port > 65535 {
		return denyf(RuleURL, "denied: port %d is not a valid port (rule url)", port)
	}
	if !addr.IsValid() {
		return denyf(RuleURL, "denied: no address to dial for %s (rule url)", quoteInput(host))
	}
	addr = addr.WithZone("")
	var h Host
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil && a.Zone() == "" {
		if a.Is4() {
			h = Host{kind: HostIPv4, addr: a}
		} else {
			h = Host{kind: HostIPv6, addr: a}
		}
	} else {
		var err error
		h, err = ParseHost(host)
		if err != nil {
			return denyf(RuleURL, "denied: %s is not a valid host (rule url)", quoteInput(host))
		}
	}
	d.Host = h.String()
	if (h.Kind() == HostIPv4 || h.Kind() == HostIPv6) && h.Addr().Unmap() != addr.Unmap() {
		out := denyf(RuleURL, "denied: dialling %s for the IP host %s (rule url)", addr, h.String())
		out.Host = d.Host
		return out
	}
	display := h.String()
	if port != 0 {
		display += ":" + strconv.Itoa(port)
	}
	d.Addr = addr.Unmap()
	return p.decideTarget(d, target{display: display, host: h, port: port, dialAddr: addr})
}

// Action is a tool call to judge.
type Action struct {
	// Tool is the tool's name, e.g. "click", "input_text", "upload_file".
	Tool string
	// URL is the URL of the page the action happens on ("" if unknown).
	URL string
	// Target is the element acted on, nil when there is none or it is not
	// known.
	Target *Element
	// Frames are the frames the target element is in when it is not in
	// the top page itself: the URL of its own frame first, then of each
	// frame around it, up to (not counting) the top page. A frame
	// without a network URL (about:srcdoc, blob:) is given by its origin.
	// Rules with hosts are judged on each of them as well as on URL, and
	// the strictest verdict wins, so a page cannot lift a rule on its
	// host by being framed by another; a frame URL that does not parse
	// makes every rule with hosts apply (fail closed).
	Frames []string
}

// Element describes an action's target element.
type Element struct {
	Role      string // ARIA role, e.g. "button", "textbox"
	Name      string // accessible name
	InputType string // the type attribute of an <input>, e.g. "password"
}

type actionMatcher struct {
	rule      string
	tools     []string
	role      string
	name      *regexp.Regexp
	inputType string
	hosts     []*hostMatcher
	verdict   Verdict
	reason    string
}

func compileAction(i int, r ActionRule) (*actionMatcher, error) {
	m := &actionMatcher{rule: r.Rule, role: strings.ToLower(r.Role), inputType: strings.ToLower(r.InputType), reason: r.Reason}
	if m.rule == "" {
		m.rule = fmt.Sprintf("actions[%d]", i)
	}
	if len(r.Tools) == 0 {
		return nil, fmt.Errorf("no tool")
	}
	for _, t := range r.Tools {
		if t == "" {
			return nil, fmt.Errorf("empty tool name")
		}
		m.tools = append(m.tools, t)
	}
	if r.Name != "" {
		re, err := regexp.Compile(r.Name)
		if err != nil {
			return nil, fmt.Errorf("name: %w", err)
		}
		m.name = re
	}
	for j, h := range r.Hosts {
		hm, err := compileHostRule(h)
		if err != nil {
			return nil, fmt.Errorf("hosts[%d]: %w", j, err)
		}
		m.hosts = append(m.hosts, hm)
	}
	switch r.Verdict {
	case Deny, Ask:
		m.verdict = r.Verdict
	default:
		return nil, fmt.Errorf("verdict must be deny or ask, not %s", r.Verdict)
	}
	return m, nil
}

// matches reports whether the rule applies to a. Conditions on the target
// or the page hold when the target or page is unknown: a rule that cannot
// be checked applies (fail closed).
func (m *actionMatcher) matches(a Action, page *URL) bool {
	toolOK := false
	for _, t := range m.tools {
		if t == "*" || t == a.Tool {
			toolOK = true
			break
		}
	}
	if !toolOK {
		return false
	}
	if el := a.Target; el != nil {
		if m.role != "" && !strings.EqualFold(el.Role, m.role) {
			return false
		}
		if m.name != nil && !m.name.MatchString(el.Name) {
			return false
		}
		if m.inputType != "" && !strings.EqualFold(el.InputType, m.inputType) {
			return false
		}
	}
	if len(m.hosts) > 0 && page != nil {
		t := targetFromURL(page, true)
		ref := refFromHost(t.host)
		ok := false
		for _, h := range m.hosts {
			if t.matches(h, ref, true) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// DecideAction judges a tool call by the action rules. The strictest
// matching rule of all layers wins (Deny > Ask > Allow); with none
// matching, the action is allowed. The zero Config has no action rules.
func (p *Policy) DecideAction(a Action) Decision {
	if p.unusable() {
		d := nilPolicy()
		d.Tool = a.Tool
		return d
	}
	var page *URL
	if a.URL != "" {
		if u, err := ParseURL(a.URL, nil); err == nil {
			page = u
		}
	}
	// Where the action happens: the top page, then each frame around the
	// target (see Action.Frames); nil where the URL does not parse.
	locs := []*URL{page}
	for _, f := range a.Frames {
		u, err := ParseURL(f, nil)
		if err != nil {
			u = nil
		}
		locs = append(locs, u)
	}
	var best *actionMatcher
	at := 0 // where best matched: an index in locs
	for _, l := range p.layers {
		for _, m := range l.actions {
			if best != nil && !stricter(m.verdict, best.verdict) {
				continue
			}
			for i, loc := range locs {
				if m.matches(a, loc) {
					best, at = m, i
					break
				}
			}
		}
	}
	d := Decision{Tool: a.Tool, URL: a.URL}
	if page != nil {
		d.URL, d.Host = page.String(), page.Hostname()
	}
	if best == nil {
		d.Verdict, d.Reason = Allow, "allowed: no action rule applies to "+a.Tool
		return d
	}
	d.Verdict, d.Rule = best.verdict, best.rule
	what := describeAction(a)
	if at > 0 {
		// The rule matched a frame the target is in, not the top page.
		if u := locs[at]; u != nil {
			d.URL, d.Host = u.String(), u.Hostname()
			what += " in a frame from " + quoteInput(u.Host())
		} else {
			d.URL, d.Host = a.Frames[at-1], ""
			what += " in a frame whose address surf cannot read"
		}
	}
	extra := ""
	if best.reason != "" {
		extra = ": " + best.reason
	}
	if best.verdict == Ask {
		d.Reason = fmt.Sprintf("approval needed: %s (rule %s)%s", what, best.rule, extra)
	} else {
		d.Reason = fmt.Sprintf("denied: %s is not allowed (rule %s)%s", what, best.rule, extra)
	}
	return d
}

func describeAction(a Action) string {
	s := a.Tool
	if el := a.Target; el != nil {
		var parts []string
		if el.InputType != "" {
			parts = append(parts, el.InputType+" field")
		} else if el.Role != "" {
			parts = append(parts, el.Role)
		}
		if el.Name != "" {
			parts = append(parts, quoteInput(el.Name))
		}
		if len(parts) > 0 {
			s += " on " + strings.Join(parts, " ")
		}
	}
	return s
}

// String summarizes the policy without secret values.
func (p Policy) String() string {
	var allow, deny, actions int
	for _, l := range p.layers {
		allow += len(l.allow)
		deny += len(l.deny)
		actions += len(l.actions)
	}
	return fmt.Sprintf("policy.Policy{layers: %d, allow: %d, deny: %d, actions: %d, secrets: %v}",
		len(p.layers), allow, deny, actions, p.secretNames())
}

// Format prints String for every verb, so no formatting of a Policy can
// reveal a secret value.
func (p Policy) Format(f fmt.State, _ rune) { io.WriteString(f, p.String()) }
