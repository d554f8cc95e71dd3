// Package policy is surf's gate: it decides whether a navigation, a
// request, a connection or a tool call may happen, and it keeps secrets
// away from the model. It is pure Go with no browser dependency; the
// browser's request interception, the egress proxy and the tool dispatcher
// call it, and fail closed when it says no.
//
// # URLs are read the way Chromium reads them
//
// ParseURL is the URL Standard's basic URL parser (https://url.spec.whatwg.org),
// which Chromium follows: leading and trailing C0 controls and spaces are
// trimmed, tabs and newlines removed anywhere, backslashes are slashes in
// special URLs, userinfo ends at the last '@' of the authority, hosts are
// percent-decoded and run through UTS #46 (golang.org/x/net/idna configured
// as the Standard's "domain to ASCII", with the Unicode 17 mapping changes
// applied), and a host that ends in a number is an IPv4 address in any
// form: 2130706433, 0x7f000001, 0177.0.0.1 and 127.1 are all 127.0.0.1. So
// "https://allowed.com:pass@localhost:8080" is judged as localhost. The
// parser passes every host vector of the web-platform-tests URL suite.
// Where Chromium is known to depart from the Standard ('*' in a host, an
// ASCII '<' or '>' that IDNA normalization absorbs), the URL is denied
// (rule chromium-divergence), and a URL that does not parse is denied
// (rule url).
//
// # Host patterns
//
// A policy's allow and deny lists hold host rules, written
// [scheme://]host[:port][/path] or as a mapping {host, ports, paths, schemes}:
//
//	example.com         exactly example.com (and "example.com.")
//	*.example.com       any subdomain of example.com, not example.com itself;
//	                    list both to allow both
//	"*" alone           any public host
//	bücher.example      IDN, compared as xn--bcher-kva.example
//	127.0.0.1, 0x7f.1   an IP address, canonicalized (both are 127.0.0.1)
//	[::1], ::1          an IPv6 address; IPv4-mapped forms compare as IPv4
//	10.0.0.0/8          a CIDR block
//	example.com:8443    only that port (a URL's port is its explicit port or
//	                    its scheme's default); no port means any port
//	example.com/docs/*  only paths starting with /docs/ ("/docs" alone is
//	                    that exact path)
//	https://example.com only that scheme (http, https, ws or wss)
//
// Deny wins over ask, ask over allow: hosts on the ask list are reachable
// like allowed ones, but each decision on them is Ask (an Approver must say
// yes; a policy with Approvals, see WithApprovals, allows the hosts a human
// approved for the session). An empty allow list means any public host: the zero Config allows
// the public web and nothing else. Path rules are a
// convenience, not a boundary: servers decode paths in different ways, so
// allow paths match strictly (and never a path with an encoded '/', '\' or
// '.') and deny paths match leniently (decoded, case-insensitive). Where
// no path or scheme is known (DecideDial, the origin of a blob: URL), rules
// are judged by host and port: a path- or scheme-limited allow rule allows
// the host, a path- or scheme-limited deny rule does not deny it.
//
// # Private networks
//
// Private addresses are denied unless an IP or CIDR allow entry covers them
// (--allow 127.0.0.1, 10.0.0.0/8): loopback (127.0.0.0/8, ::1), RFC 1918,
// link-local (169.254.0.0/16, fe80::/10), cloud metadata (169.254.169.254,
// fd00:ec2::254), unique local (fc00::/7), 0.0.0.0/8, the unspecified
// address, carrier-grade NAT (100.64.0.0/10), multicast, broadcast,
// documentation, benchmarking and other reserved blocks, and IPv6 forms
// embedding such an IPv4 address (IPv4-mapped ::ffff:0:0/96, NAT64
// 64:ff9b::/96, 6to4 2002::/16; PrivateAddress has the list). The names
// localhost and *.localhost (which Chromium resolves to loopback itself),
// the loopback names of /etc/hosts (localhost6, ip6-localhost, ...) and
// *.local, *.internal and *.home.arpa are private too: naming them in an
// allow entry (not "*") allows them, and for loopback names also their
// loopback addresses. A hostname entry never implies private addresses:
// when the egress proxy resolves a name to a private address (DNS
// rebinding), DecideDial denies it unless an IP entry covers the address.
//
// # Schemes
//
// Navigations (top-level, frames, popups, each redirect hop) may go to
// http and https URLs by the host rules, to about:blank and about:srcdoc,
// and to blob: URLs whose origin the host rules allow. Requests
// (subresources, fetch, workers, WebSockets) may also use ws and wss by
// the host rules, and data: URLs. Everything else is denied in both:
// data: navigations, javascript:, file:, ftp:, chrome:, view-source:,
// filesystem: and blob: URLs with an opaque origin.
//
// # Actions
//
// Action rules deny a tool or require approval (Ask) for it, optionally
// only for some targets (role, accessible-name regular expression, input
// type) or pages (host rules). The strictest matching rule wins; a rule
// whose target or page conditions cannot be checked (no target given)
// applies. The zero Config has no action rules; testdata/example.yaml
// shows the usual ones (uploads denied; passwords and buy/pay/delete
// clicks need approval). An Approver answers Ask (Resolve); with no
// approver, Ask is Deny.
//
// # Secrets
//
// Secrets are named values the model only sees as placeholders,
// <secret:NAME>. Substitute puts the value in only when the host the text
// goes to matches the secret's hosts, and otherwise fails without the
// value; Redact replaces values (also URL-encoded) with placeholders in
// anything the model or the journal will read. Values come inline, from an
// environment variable (resolved by LoadOptions.Getenv; the package never
// reads the environment) or from a file, and never print: SecretValue
// formats and marshals as "<redacted>".
//
// # Narrowing
//
// A Policy is immutable. Narrow and Restrict return a policy that allows
// only what the original and the narrowing both allow, with the stricter
// action verdict (Deny > Ask > Allow) and the original's secrets. A client
// (an MCP client, a command-line flag, a URL named on the command line) can
// narrow a policy, never widen it.
//
// # Decisions
//
// DecideURL and Decide judge URLs before a navigation or request,
// DecideDial judges the address the egress proxy is about to dial, and
// DecideAction judges tool calls. Each returns a Decision with a Verdict
// (Allow, Deny, Ask; the zero Verdict is Deny), the rule that decided, and
// a reason for the model, such as
// "denied: 127.0.0.1 is a private address (loopback) (rule private-networks)".
// Decision.Err gives a *DeniedError matching ErrDenied.
package policy
