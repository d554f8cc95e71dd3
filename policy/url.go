package policy

import (
	"net/netip"
	"strconv"
	"strings"
)

// URL is a URL parsed by the URL Standard's basic URL parser, the parser
// Chromium's URL handling follows. Its accessors return what the matching
// attribute of the JavaScript URL object returns.
type URL struct {
	scheme     string
	username   string
	password   string
	host       Host
	hasHost    bool
	port       int // -1: none (or the scheme's default)
	path       []string
	opaquePath string
	isOpaque   bool // path is opaque (mailto:x, javascript:x, data:x)
	query      *string
	fragment   *string
}

// URLError is returned by ParseURL for input that is not a URL.
type URLError struct {
	Input  string
	Reason string
}

func (e *URLError) Error() string {
	return "parsing URL " + strconv.Quote(e.Input) + ": " + e.Reason
}

// Unwrap makes errors.Is(err, ErrInvalidURL) hold.
func (e *URLError) Unwrap() error { return ErrInvalidURL }

var specialPorts = map[string]int{
	"ftp": 21, "file": -1, "http": 80, "https": 443, "ws": 80, "wss": 443,
}

func isSpecialScheme(s string) bool {
	_, ok := specialPorts[s]
	return ok
}

// DefaultPort returns the default port of a special scheme (http 80, https
// 443, ws 80, wss 443, ftp 21), and 0 for other schemes.
func DefaultPort(scheme string) int {
	if p := specialPorts[scheme]; p > 0 {
		return p
	}
	return 0
}

// Scheme returns the scheme without the colon, lowercased ("https").
func (u *URL) Scheme() string { return u.scheme }

// IsSpecial reports whether the scheme is one of the URL Standard's special
// schemes: ftp, file, http, https, ws, wss.
func (u *URL) IsSpecial() bool { return isSpecialScheme(u.scheme) }

// Username returns the percent-encoded username.
func (u *URL) Username() string { return u.username }

// Password returns the percent-encoded password.
func (u *URL) Password() string { return u.password }

// HostInfo returns the parsed host. Its Kind is HostNone when the URL has no
// host.
func (u *URL) HostInfo() Host {
	if !u.hasHost {
		return Host{}
	}
	return u.host
}

// HostKind reports the kind of the URL's host.
func (u *URL) HostKind() HostKind { return u.HostInfo().kind }

// Addr returns the address of an IPv4 or IPv6 host, else the zero Addr.
func (u *URL) Addr() netip.Addr { return u.host.addr }

// Hostname returns the host as URL.hostname serializes it: IPv4 dotted
// decimal, IPv6 compressed in brackets, domains in ASCII (punycode).
func (u *URL) Hostname() string {
	if !u.hasHost {
		return ""
	}
	return u.host.String()
}

// Host returns hostname plus ":port" when the port is not the scheme's
// default, as URL.host does.
func (u *URL) Host() string {
	if !u.hasHost {
		return ""
	}
	if u.port >= 0 {
		return u.host.String() + ":" + strconv.Itoa(u.port)
	}
	return u.host.String()
}

// Port returns the explicit port as URL.port does: "" when there is none or
// when it is the scheme's default.
func (u *URL) Port() string {
	if u.port < 0 {
		return ""
	}
	return strconv.Itoa(u.port)
}

// EffectivePort returns the port a connection would use: the explicit port,
// else the scheme's default, else 0.
func (u *URL) EffectivePort() int {
	if u.port >= 0 {
		return u.port
	}
	return DefaultPort(u.scheme)
}

// Pathname returns the serialized path, as URL.pathname does.
func (u *URL) Pathname() string {
	if u.isOpaque {
		return u.opaquePath
	}
	var sb strings.Builder
	for _, seg := range u.path {
		sb.WriteByte('/')
		sb.WriteString(seg)
	}
	return sb.String()
}

// Search returns "?query", or "" when the query is null or empty.
func (u *URL) Search() string {
	if u.query == nil || *u.query == "" {
		return ""
	}
	return "?" + *u.query
}

// Hash returns "#fragment", or "" when the fragment is null or empty.
func (u *URL) Hash() string {
	if u.fragment == nil || *u.fragment == "" {
		return ""
	}
	return "#" + *u.fragment
}

// String returns the href: the URL Standard's URL serializer.
func (u *URL) String() string {
	var sb strings.Builder
	sb.WriteString(u.scheme)
	sb.WriteByte(':')
	if u.hasHost {
		sb.WriteString("//")
		if u.username != "" || u.password != "" {
			sb.WriteString(u.username)
			if u.password != "" {
				sb.WriteByte(':')
				sb.WriteString(u.password)
			}
			sb.WriteByte('@')
		}
		sb.WriteString(u.Host())
	} else if !u.isOpaque && len(u.path) > 1 && u.path[0] == "" {
		sb.WriteString("/.")
	}
	sb.WriteString(u.Pathname())
	if u.query != nil {
		sb.WriteByte('?')
		sb.WriteString(*u.query)
	}
	if u.fragment != nil {
		sb.WriteByte('#')
		sb.WriteString(*u.fragment)
	}
	return sb.String()
}

// Origin is a URL's origin: a (scheme, host, port) tuple or an opaque
// origin.
type Origin struct {
	Scheme string
	Host   Host
	Port   int // -1 when it is the scheme's default
	Opaque bool
}

// String serializes the origin: "https://example.com:8443", or "null" for an
// opaque origin.
func (o Origin) String() string {
	if o.Opaque {
		return "null"
	}
	s := o.Scheme + "://" + o.Host.String()
	if o.Port >= 0 {
		s += ":" + strconv.Itoa(o.Port)
	}
	return s
}

// Origin returns the URL's origin. For blob: URLs it is the origin of the
// URL inside ("blob:https://a.test/uuid" has origin https://a.test) when
// that is an http(s) URL; file: and other schemes have opaque origins.
func (u *URL) Origin() Origin {
	switch u.scheme {
	case "blob":
		inner, err := ParseURL(u.Pathname(), nil)
		if err != nil || (inner.scheme != "http" && inner.scheme != "https") {
			return Origin{Opaque: true, Port: -1}
		}
		return inner.Origin()
	case "ftp", "http", "https", "ws", "wss":
		return Origin{Scheme: u.scheme, Host: u.host, Port: u.port}
	}
	return Origin{Opaque: true, Port: -1}
}

// ParseURL parses input as the URL Standard's basic URL parser does,
// resolving it against base when base is non-nil (as a link on the page at
// base would be). It never panics; input that is not a URL gives a
// *URLError.
func ParseURL(input string, base *URL) (*URL, error) {
	p := &urlParser{base: base, raw: input}
	u, reason := p.parse(input)
	if reason != "" {
		return nil, &URLError{Input: input, Reason: reason}
	}
	return u, nil
}

type parseState int

const (
	stSchemeStart parseState = iota
	stScheme
	stNoScheme
	stSpecialRelativeOrAuthority
	stPathOrAuthority
	stRelative
	stRelativeSlash
	stSpecialAuthoritySlashes
	stSpecialAuthorityIgnoreSlashes
	stAuthority
	stHost
	stPort
	stFile
	stFileSlash
	stFileHost
	stPathStart
	stPath
	stOpaquePath
	stQuery
	stFragment
)

type urlParser struct {
	base *URL
	raw  string
	in   []rune
}

const eof = rune(-1)

func isC0OrSpace(r rune) bool { return r >= 0 && r <= 0x20 }

func isASCIIAlpha(r rune) bool { return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') }

func toLowerASCII(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 32
	}
	return r
}

func (p *urlParser) at(i int) rune {
	if i >= 0 && i < len(p.in) {
		return p.in[i]
	}
	return eof
}

// remainingStartsWith reports whether the code points after pointer start
// with s.
func (p *urlParser) remainingStartsWith(pointer int, s string) bool {
	i := pointer + 1
	for _, r := range s {
		if p.at(i) != r {
			return false
		}
		i++
	}
	return true
}

func isWindowsDriveLetter(s []rune) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

func isNormalizedWindowsDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(rune(s[0])) && s[1] == ':'
}

// startsWithWindowsDriveLetter checks the code points from i on.
func (p *urlParser) startsWithWindowsDriveLetter(i int) bool {
	if len(p.in)-i < 2 || i < 0 {
		return false
	}
	if !isWindowsDriveLetter(p.in[i : i+2]) {
		return false
	}
	if len(p.in)-i == 2 {
		return true
	}
	switch p.in[i+2] {
	case '/', '\\', '?', '#':
		return true
	}
	return false
}

func isSingleDot(s string) bool {
	return s == "." || strings.EqualFold(s, "%2e")
}

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

func (u *URL) shortenPath() {
	if u.scheme == "file" && len(u.path) == 1 && isNormalizedWindowsDriveLetter(u.path[0]) {
		return
	}
	if len(u.path) > 0 {
		u.path = u.path[:len(u.path)-1]
	}
}

func strPtr(s string) *string { return &s }

func (p *urlParser) parse(input string) (*URL, string) {
	// Strip leading and trailing C0 control or space, then remove all ASCII
	// tab or newline.
	runes := []rune(input)
	start, end := 0, len(runes)
	for start < end && isC0OrSpace(runes[start]) {
		start++
	}
	for end > start && isC0OrSpace(runes[end-1]) {
		end--
	}
	in := make([]rune, 0, end-start)
	for _, r := range runes[start:end] {
		if r != '\t' && r != '\n' && r != '\r' {
			in = append(in, r)
		}
	}
	p.in = in

	u := &URL{port: -1}
	base := p.base
	state := stSchemeStart
	var buf []rune
	atSignSeen, insideBrackets, passwordTokenSeen := false, false, false
	spec := false // whether u.scheme is special; kept in step by setScheme
	setScheme := func(scheme string) {
		u.scheme = scheme
		spec = isSpecialScheme(scheme)
	}
	// Builders for the parts that grow code point by code point, so that
	// long inputs parse in linear time.
	var opaque, frag, user, pass strings.Builder

	for pointer := 0; pointer <= len(in); pointer++ {
		c := p.at(pointer)
		switch state {
		case stSchemeStart:
			if isASCIIAlpha(c) {
				buf = append(buf, toLowerASCII(c))
				state = stScheme
			} else {
				state = stNoScheme
				pointer--
			}

		case stScheme:
			if isASCIIAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.' {
				buf = append(buf, toLowerASCII(c))
			} else if c == ':' {
				setScheme(string(buf))
				buf = buf[:0]
				if u.scheme == "file" {
					state = stFile
				} else if spec && base != nil && base.scheme == u.scheme {
					state = stSpecialRelativeOrAuthority
				} else if spec {
					state = stSpecialAuthoritySlashes
				} else if p.remainingStartsWith(pointer, "/") {
					state = stPathOrAuthority
					pointer++
				} else {
					u.isOpaque = true
					u.opaquePath = ""
					state = stOpaquePath
				}
			} else {
				buf = buf[:0]
				state = stNoScheme
				pointer = -1
			}

		case stNoScheme:
			if base == nil || (base.isOpaque && c != '#') {
				return nil, "relative URL without a base"
			} else if base.isOpaque && c == '#' {
				setScheme(base.scheme)
				u.isOpaque = true
				u.opaquePath = base.opaquePath
				u.query = clonePtr(base.query)
				u.fragment = strPtr("")
				state = stFragment
			} else if base.scheme != "file" {
				state = stRelative
				pointer--
			} else {
				state = stFile
				pointer--
			}

		case stSpecialRelativeOrAuthority:
			if c == '/' && p.remainingStartsWith(pointer, "/") {
				state = stSpecialAuthorityIgnoreSlashes
				pointer++
			} else {
				state = stRelative
				pointer--
			}

		case stPathOrAuthority:
			if c == '/' {
				state = stAuthority
			} else {
				state = stPath
				pointer--
			}

		case stRelative:
			setScheme(base.scheme)
			if c == '/' {
				state = stRelativeSlash
			} else if spec && c == '\\' {
				state = stRelativeSlash
			} else {
				u.username, u.password = base.username, base.password
				u.host, u.hasHost, u.port = base.host, base.hasHost, base.port
				u.path = append([]string(nil), base.path...)
				u.query = clonePtr(base.query)
				if c == '?' {
					u.query = strPtr("")
					state = stQuery
				} else if c == '#' {
					u.fragment = strPtr("")
					state = stFragment
				} else if c != eof {
					u.query = nil
					u.shortenPath()
					state = stPath
					pointer--
				}
			}

		case stRelativeSlash:
			if spec && (c == '/' || c == '\\') {
				state = stSpecialAuthorityIgnoreSlashes
			} else if c == '/' {
				state = stAuthority
			} else {
				u.username, u.password = base.username, base.password
				u.host, u.hasHost, u.port = base.host, base.hasHost, base.port
				state = stPath
				pointer--
			}

		case stSpecialAuthoritySlashes:
			if c == '/' && p.remainingStartsWith(pointer, "/") {
				state = stSpecialAuthorityIgnoreSlashes
				pointer++
			} else {
				state = stSpecialAuthorityIgnoreSlashes
				pointer--
			}

		case stSpecialAuthorityIgnoreSlashes:
			if c != '/' && c != '\\' {
				state = stAuthority
				pointer--
			}

		case stAuthority:
			if c == '@' {
				if atSignSeen {
					buf = append([]rune("%40"), buf...)
				}
				atSignSeen = true
				for _, r := range buf {
					if r == ':' && !passwordTokenSeen {
						passwordTokenSeen = true
						continue
					}
					if passwordTokenSeen {
						appendPercentEncoded(&pass, r, userinfoSet)
					} else {
						appendPercentEncoded(&user, r, userinfoSet)
					}
				}
				buf = buf[:0]
			} else if c == eof || c == '/' || c == '?' || c == '#' || (spec && c == '\\') {
				if atSignSeen && len(buf) == 0 {
					return nil, "credentials without a host"
				}
				u.username, u.password = user.String(), pass.String()
				pointer -= len(buf) + 1
				buf = buf[:0]
				state = stHost
			} else {
				buf = append(buf, c)
			}

		case stHost:
			if c == ':' && !insideBrackets {
				if len(buf) == 0 {
					return nil, "missing host"
				}
				h, err := parseHost(string(buf), !spec)
				if err != nil {
					return nil, err.Error()
				}
				u.host, u.hasHost = h, true
				buf = buf[:0]
				state = stPort
			} else if c == eof || c == '/' || c == '?' || c == '#' || (spec && c == '\\') {
				pointer--
				if spec && len(buf) == 0 {
					return nil, "missing host"
				}
				h, err := parseHost(string(buf), !spec)
				if err != nil {
					return nil, err.Error()
				}
				u.host, u.hasHost = h, true
				buf = buf[:0]
				state = stPathStart
			} else {
				if c == '[' {
					insideBrackets = true
				}
				if c == ']' {
					insideBrackets = false
				}
				buf = append(buf, c)
			}

		case stPort:
			if isDigit(c) {
				buf = append(buf, c)
			} else if c == eof || c == '/' || c == '?' || c == '#' || (spec && c == '\\') {
				if len(buf) > 0 {
					port := 0
					for _, d := range buf {
						port = port*10 + int(d-'0')
						if port > 65535 {
							return nil, "port out of range"
						}
					}
					if dp, ok := specialPorts[u.scheme]; ok && dp == port {
						u.port = -1
					} else {
						u.port = port
					}
					buf = buf[:0]
				}
				state = stPathStart
				pointer--
			} else {
				return nil, "invalid port"
			}

		case stFile:
			setScheme("file")
			u.host, u.hasHost = Host{kind: HostEmpty}, true
			if c == '/' || c == '\\' {
				state = stFileSlash
			} else if base != nil && base.scheme == "file" {
				u.host, u.hasHost = base.host, base.hasHost
				u.path = append([]string(nil), base.path...)
				u.query = clonePtr(base.query)
				if c == '?' {
					u.query = strPtr("")
					state = stQuery
				} else if c == '#' {
					u.fragment = strPtr("")
					state = stFragment
				} else if c != eof {
					u.query = nil
					if !p.startsWithWindowsDriveLetter(pointer) {
						u.shortenPath()
					} else {
						u.path = nil
					}
					state = stPath
					pointer--
				}
			} else {
				state = stPath
				pointer--
			}

		case stFileSlash:
			if c == '/' || c == '\\' {
				state = stFileHost
			} else {
				if base != nil && base.scheme == "file" {
					u.host, u.hasHost = base.host, base.hasHost
					if !p.startsWithWindowsDriveLetter(pointer) && len(base.path) > 0 && isNormalizedWindowsDriveLetter(base.path[0]) {
						u.path = append(u.path, base.path[0])
					}
				}
				state = stPath
				pointer--
			}

		case stFileHost:
			if c == eof || c == '/' || c == '\\' || c == '?' || c == '#' {
				pointer--
				if isWindowsDriveLetter(buf) {
					state = stPath
				} else if len(buf) == 0 {
					u.host, u.hasHost = Host{kind: HostEmpty}, true
					state = stPathStart
				} else {
					h, err := parseHost(string(buf), false)
					if err != nil {
						return nil, err.Error()
					}
					if h.kind == HostDomain && h.name == "localhost" {
						h = Host{kind: HostEmpty}
					}
					u.host, u.hasHost = h, true
					buf = buf[:0]
					state = stPathStart
				}
			} else {
				buf = append(buf, c)
			}

		case stPathStart:
			if spec {
				state = stPath
				if c != '/' && c != '\\' {
					pointer--
				}
			} else if c == '?' {
				u.query = strPtr("")
				state = stQuery
			} else if c == '#' {
				u.fragment = strPtr("")
				state = stFragment
			} else if c != eof {
				state = stPath
				if c != '/' {
					pointer--
				}
			}

		case stPath:
			slash := c == '/' || (spec && c == '\\')
			if c == eof || slash || c == '?' || c == '#' {
				seg := string(buf)
				if isDoubleDot(seg) {
					u.shortenPath()
					if !slash {
						u.path = append(u.path, "")
					}
				} else if isSingleDot(seg) && !slash {
					u.path = append(u.path, "")
				} else if !isSingleDot(seg) {
					if u.scheme == "file" && len(u.path) == 0 && isWindowsDriveLetter(buf) {
						seg = string(buf[0]) + ":"
					}
					u.path = append(u.path, seg)
				}
				buf = buf[:0]
				if c == '?' {
					u.query = strPtr("")
					state = stQuery
				}
				if c == '#' {
					u.fragment = strPtr("")
					state = stFragment
				}
			} else {
				buf = appendEncodedRunes(buf, c, pathSet)
			}

		case stOpaquePath:
			if c == '?' || c == '#' || c == eof {
				u.opaquePath = opaque.String()
			}
			if c == '?' {
				u.query = strPtr("")
				state = stQuery
			} else if c == '#' {
				u.fragment = strPtr("")
				state = stFragment
			} else if c == ' ' {
				if n := p.at(pointer + 1); n == '?' || n == '#' {
					opaque.WriteString("%20")
				} else {
					opaque.WriteByte(' ')
				}
			} else if c != eof {
				appendPercentEncoded(&opaque, c, c0ControlSet)
			}

		case stQuery:
			if c == '#' || c == eof {
				set := querySet
				if spec {
					set = specialQuerySet
				}
				var sb strings.Builder
				sb.WriteString(*u.query)
				for _, r := range buf {
					appendPercentEncoded(&sb, r, set)
				}
				u.query = strPtr(sb.String())
				buf = buf[:0]
				if c == '#' {
					u.fragment = strPtr("")
					state = stFragment
				}
			} else {
				buf = append(buf, c)
			}

		case stFragment:
			if c != eof {
				appendPercentEncoded(&frag, c, fragmentSet)
			} else {
				u.fragment = strPtr(frag.String())
			}
		}
	}
	return u, ""
}

func clonePtr(s *string) *string {
	if s == nil {
		return nil
	}
	return strPtr(*s)
}
