package policy

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// HostRule is one allow or deny entry. In YAML and on the command line it
// is written as a string, [scheme://]host[:port][/path], or as a mapping
// {host, ports, paths, schemes}. Host is one of:
//
//	example.com       exactly that host (IDN allowed: bücher.de = xn--bcher-kva.de)
//	*.example.com     any subdomain of example.com, NOT example.com itself
//	"*" alone         any public host (private addresses still need an IP entry)
//	203.0.113.7       an IP address, in any form the URL parser takes (0x7f.1 = 127.0.0.1)
//	[2001:db8::1]     an IPv6 address (brackets optional in the mapping form)
//	10.0.0.0/8        a CIDR block (no port or path in the string form)
type HostRule struct {
	Host string `json:"host" yaml:"host"`
	// Ports limits the rule to these ports (the URL's explicit port or its
	// scheme's default). Empty means any port.
	Ports []int `json:"ports,omitempty" yaml:"ports,omitempty"`
	// Paths limits the rule to URL paths: "/docs" exactly, or "/docs/*"
	// for the prefix "/docs/". Empty means any path. Paths are not checked
	// by DecideDial, which sees no path.
	Paths []string `json:"paths,omitempty" yaml:"paths,omitempty"`
	// Schemes limits the rule to these schemes (http, https, ws, wss).
	// Empty means any.
	Schemes []string `json:"schemes,omitempty" yaml:"schemes,omitempty"`
}

// String writes the rule in its string form when it has one.
func (r HostRule) String() string {
	var sb strings.Builder
	if len(r.Schemes) == 1 {
		sb.WriteString(r.Schemes[0] + "://")
	}
	sb.WriteString(r.Host)
	if len(r.Ports) == 1 {
		sb.WriteString(":" + strconv.Itoa(r.Ports[0]))
	}
	if len(r.Paths) == 1 {
		sb.WriteString(r.Paths[0])
	}
	if len(r.Schemes) > 1 || len(r.Ports) > 1 || len(r.Paths) > 1 {
		sb.WriteString(fmt.Sprintf(" (schemes %v, ports %v, paths %v)", r.Schemes, r.Ports, r.Paths))
	}
	return sb.String()
}

// ParseHostRule parses the string form of a host rule:
// [scheme://]host[:port][/path], "*", or a CIDR block.
func ParseHostRule(s string) (HostRule, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return HostRule{}, fmt.Errorf("empty host pattern")
	}
	for _, c := range s {
		switch c {
		case '@', '?', '#', '\\', ' ', '\t', '\n', '\r', ',':
			return HostRule{}, fmt.Errorf("host pattern %q: %q is not allowed in a host pattern", orig, c)
		}
	}
	var r HostRule
	if i := strings.Index(s, "://"); i >= 0 {
		r.Schemes = []string{strings.ToLower(s[:i])}
		s = s[i+3:]
		switch r.Schemes[0] {
		case "http", "https", "ws", "wss":
		default:
			return HostRule{}, fmt.Errorf("host pattern %q: scheme %q is not one of http, https, ws, wss", orig, r.Schemes[0])
		}
	}
	// A bare CIDR block or IPv6 address.
	if p, err := netip.ParsePrefix(s); err == nil {
		r.Host = p.String()
		return r, nil
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Is6() {
		if a.Zone() != "" {
			return HostRule{}, fmt.Errorf("host pattern %q: IPv6 zones are not allowed", orig)
		}
		r.Host = a.String()
		return r, nil
	}
	var host, rest string
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return HostRule{}, fmt.Errorf("host pattern %q: unclosed '['", orig)
		}
		host, rest = s[:end+1], s[end+1:]
	} else {
		end := strings.IndexAny(s, ":/")
		if end < 0 {
			end = len(s)
		}
		host, rest = s[:end], s[end:]
	}
	if strings.HasPrefix(rest, ":") {
		rest = rest[1:]
		end := strings.IndexByte(rest, '/')
		if end < 0 {
			end = len(rest)
		}
		port, err := parsePort(rest[:end])
		if err != nil {
			return HostRule{}, fmt.Errorf("host pattern %q: %v", orig, err)
		}
		r.Ports = []int{port}
		rest = rest[end:]
	}
	if rest != "" {
		if !strings.HasPrefix(rest, "/") {
			return HostRule{}, fmt.Errorf("host pattern %q: unexpected %q after the host", orig, rest)
		}
		r.Paths = []string{rest}
	}
	r.Host = host
	if _, err := compileHostRule(r); err != nil {
		return HostRule{}, err
	}
	return r, nil
}

func parsePort(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty port")
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad port %q", s)
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, fmt.Errorf("port %q out of range", s)
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("port 0 is not a port")
	}
	return n, nil
}

// hostMatcher is a compiled HostRule.
type hostMatcher struct {
	src     string
	any     bool         // "*"
	domain  string       // exact domain, canonical
	suffix  string       // "*.x": ".x"
	prefix  netip.Prefix // IP address (as /32 or /128) or CIDR block, unmapped
	isIP    bool
	ports   []int
	paths   []pathPattern
	schemes []string
}

type pathPattern struct {
	prefix bool // "/docs/*"
	path   string
}

var ruleSchemes = []string{"http", "https", "ws", "wss"}

func compileHostRule(r HostRule) (*hostMatcher, error) {
	m := &hostMatcher{src: r.String()}
	h := strings.TrimSpace(r.Host)
	switch {
	case h == "":
		return nil, fmt.Errorf("host pattern: empty host")
	case h == "*":
		m.any = true
	case strings.HasPrefix(h, "*."):
		name, err := canonicalPatternDomain(h[2:])
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %v", r.Host, err)
		}
		m.suffix = "." + name
	default:
		if p, err := netip.ParsePrefix(h); err == nil {
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			m.prefix, m.isIP = p.Masked(), true
			break
		}
		if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil && a.Zone() == "" {
			a = a.Unmap()
			m.prefix, m.isIP = netip.PrefixFrom(a, a.BitLen()), true
			break
		}
		if strings.Contains(h, "*") {
			return nil, fmt.Errorf("host pattern %q: '*' is only allowed alone or as a leading \"*.\"", r.Host)
		}
		host, err := ParseHost(h)
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %v", r.Host, err)
		}
		switch host.Kind() {
		case HostIPv4, HostIPv6:
			a := host.Addr().Unmap()
			m.prefix, m.isIP = netip.PrefixFrom(a, a.BitLen()), true
		case HostDomain:
			if host.ChromiumAmbiguous() != "" {
				return nil, fmt.Errorf("host pattern %q: %s", r.Host, host.ChromiumAmbiguous())
			}
			m.domain = canonicalDomain(host.name)
		default:
			return nil, fmt.Errorf("host pattern %q: not a host", r.Host)
		}
	}
	for _, p := range r.Ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("host pattern %q: port %d out of range", r.Host, p)
		}
		m.ports = append(m.ports, p)
	}
	for _, p := range r.Paths {
		pp, err := compilePath(p)
		if err != nil {
			return nil, fmt.Errorf("host pattern %q: %v", r.Host, err)
		}
		m.paths = append(m.paths, pp)
	}
	for _, s := range r.Schemes {
		s = strings.ToLower(s)
		if !slices.Contains(ruleSchemes, s) {
			return nil, fmt.Errorf("host pattern %q: scheme %q is not one of http, https, ws, wss", r.Host, s)
		}
		m.schemes = append(m.schemes, s)
	}
	return m, nil
}

func canonicalPatternDomain(s string) (string, error) {
	if strings.Contains(s, "*") {
		return "", fmt.Errorf("'*' is only allowed alone or as a leading \"*.\"")
	}
	h, err := ParseHost(s)
	if err != nil {
		return "", err
	}
	if h.Kind() != HostDomain {
		return "", fmt.Errorf("a wildcard needs a domain, not %s", h.Kind())
	}
	if h.ChromiumAmbiguous() != "" {
		return "", fmt.Errorf("%s", h.ChromiumAmbiguous())
	}
	d := canonicalDomain(h.name)
	if d == "" {
		return "", fmt.Errorf("empty domain")
	}
	return d, nil
}

// canonicalDomain is the form hosts are compared in: the ASCII domain
// without one trailing dot ("example.com." and "example.com" are the same
// DNS name).
func canonicalDomain(name string) string { return strings.TrimSuffix(name, ".") }

func compilePath(p string) (pathPattern, error) {
	if !strings.HasPrefix(p, "/") {
		return pathPattern{}, fmt.Errorf("path %q must start with '/'", p)
	}
	pp := pathPattern{path: p}
	if strings.HasSuffix(p, "*") {
		pp.prefix = true
		pp.path = strings.TrimSuffix(p, "*")
	}
	if strings.ContainsAny(pp.path, "*?#") {
		return pathPattern{}, fmt.Errorf("path %q: '*' is only allowed at the end; '?' and '#' are not allowed", p)
	}
	// Compare in the URL parser's percent-encoded form.
	u, err := ParseURL("http://h"+pp.path, nil)
	if err != nil {
		return pathPattern{}, fmt.Errorf("path %q: %v", p, err)
	}
	pp.path = canonicalPath(u.Pathname())
	return pp, nil
}

// hostRef is a host in the form matchers compare: a canonical domain or an
// unmapped IP address.
type hostRef struct {
	domain string
	addr   netip.Addr
}

func (h hostRef) isIP() bool { return h.addr.IsValid() }

func refFromHost(h Host) hostRef {
	switch h.kind {
	case HostIPv4, HostIPv6:
		return hostRef{addr: h.addr.Unmap()}
	}
	return hostRef{domain: canonicalDomain(h.name)}
}

// matchName reports whether the host part of the rule matches h.
func (m *hostMatcher) matchName(h hostRef) bool {
	switch {
	case m.any:
		return true
	case m.isIP:
		return h.isIP() && m.matchAddr(h.addr)
	case h.isIP():
		return false
	case m.suffix != "":
		return len(h.domain) > len(m.suffix) && strings.HasSuffix(h.domain, m.suffix)
	}
	return h.domain == m.domain
}

// matchAddr reports whether an IP rule covers addr.
// IPv4 addresses are compared unmapped, and also in their IPv4-mapped form
// against IPv6 blocks (::/0 covers them).
func (m *hostMatcher) matchAddr(a netip.Addr) bool {
	if !m.isIP {
		return false
	}
	a = a.WithZone("").Unmap()
	if m.prefix.Contains(a) {
		return true
	}
	return a.Is4() && m.prefix.Addr().Is6() && m.prefix.Contains(netip.AddrFrom16(a.As16()))
}

func (m *hostMatcher) matchPort(port int) bool {
	return len(m.ports) == 0 || slices.Contains(m.ports, port)
}

func (m *hostMatcher) matchScheme(s string) bool {
	return len(m.schemes) == 0 || slices.Contains(m.schemes, s)
}

// matchPath matches a URL path. Allow rules match strictly: the path in
// canonical form, and never a path holding an encoded '/', '\' or '.',
// which servers may decode into a different path. Deny rules match
// leniently: also fully percent-decoded and case-insensitively.
func (m *hostMatcher) matchPath(path string, lenient bool) bool {
	if len(m.paths) == 0 {
		return true
	}
	canon := canonicalPath(path)
	if !lenient {
		lower := strings.ToLower(path)
		if strings.Contains(lower, "%2f") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%2e") {
			return false
		}
	}
	var decoded string
	if lenient {
		decoded = strings.ToLower(percentDecode(path))
	}
	for _, p := range m.paths {
		if p.match(canon) {
			return true
		}
		if lenient && (p.matchFold(canon) || p.matchFold(decoded)) {
			return true
		}
	}
	return false
}

func (p pathPattern) match(s string) bool {
	if p.prefix {
		return strings.HasPrefix(s, p.path)
	}
	return s == p.path
}

func (p pathPattern) matchFold(s string) bool {
	pl, sl := strings.ToLower(percentDecode(p.path)), strings.ToLower(s)
	if p.prefix {
		return strings.HasPrefix(sl, pl)
	}
	return sl == pl
}

// canonicalPath decodes percent-encoded unreserved characters and
// uppercases the hex of the others, so "/%64ocs" and "/docs" compare equal.
func canonicalPath(p string) string {
	if !strings.Contains(p, "%") {
		return p
	}
	var sb strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) && isHexByte(p[i+1]) && isHexByte(p[i+2]) {
			b := byte(hexVal(rune(p[i+1]))<<4 | hexVal(rune(p[i+2])))
			if isUnreserved(b) {
				sb.WriteByte(b)
			} else {
				sb.WriteByte('%')
				sb.WriteByte(upperHex[b>>4])
				sb.WriteByte(upperHex[b&15])
			}
			i += 2
			continue
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

func isUnreserved(b byte) bool {
	return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') ||
		b == '-' || b == '.' || b == '_' || b == '~'
}

// UnmarshalJSON reads a rule in either of its forms: the string form
// ("example.com", "https://*.example.com:8443/docs/*") or the object
// {host, ports, paths, schemes}.
func (r *HostRule) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		rule, err := ParseHostRule(s)
		if err != nil {
			return err
		}
		*r = rule
		return nil
	}
	type plain HostRule // without this method
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return fmt.Errorf("a host rule is a string like \"example.com\" or an object {host, ports, paths, schemes}: %v", err)
	}
	*r = HostRule(p)
	return nil
}
