// Package policy is surf's gate: it decides whether a navigation, a
// request, a connection or a tool call may happen, and keeps secrets away
// from the model.
//
// It is pure Go with no browser dependency; the request gate, the egress
// proxy and the tool dispatcher call it, and fail closed when it says no.
// DecideURL and Decide judge URLs (read the way Chromium reads them,
// ParseURL), DecideDial the address the egress proxy is about to dial, and
// DecideAction tool calls; each returns a Decision with a Verdict (Allow,
// Deny, Ask; the zero Verdict is Deny), the rule that decided and a reason
// for the model. A Policy is immutable: Narrow and Restrict only take
// away. Secrets reach a page only through Substitute, on their hosts, and
// Redact keeps them out of what the model and the journal read.
//
// docs/DESIGN.md ("policy") describes URL parsing, host patterns, private
// networks, schemes, action rules, secrets, narrowing and decisions in full.
package policy
