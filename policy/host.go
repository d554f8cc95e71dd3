package policy

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// HostKind says what kind of host a URL has, as the URL Standard classifies
// it.
type HostKind int

const (
	// HostNone: the URL has no host at all (data:, javascript:, mailto:x).
	HostNone HostKind = iota
	// HostEmpty: the host is the empty string (file:///x).
	HostEmpty
	// HostDomain: an ASCII domain after IDNA processing.
	HostDomain
	// HostIPv4: an IPv4 address, in any of the number forms the parser takes.
	HostIPv4
	// HostIPv6: a bracketed IPv6 address.
	HostIPv6
	// HostOpaque: the percent-encoded host of a non-special URL (foo://h/).
	HostOpaque
)

func (k HostKind) String() string {
	switch k {
	case HostNone:
		return "none"
	case HostEmpty:
		return "empty"
	case HostDomain:
		return "domain"
	case HostIPv4:
		return "ipv4"
	case HostIPv6:
		return "ipv6"
	case HostOpaque:
		return "opaque"
	}
	return "unknown"
}

// Host is a parsed host: a domain, an IP address, an opaque host or the
// empty host. The zero Host is "no host".
type Host struct {
	kind HostKind
	name string     // domain, opaque host; empty for IP kinds
	addr netip.Addr // IPv4 / IPv6 hosts
	// ambiguous records why Chromium may read this host differently from
	// the URL Standard ("" when it reads it the same).
	ambiguous string
}

// Kind reports the host's kind.
func (h Host) Kind() HostKind { return h.kind }

// Addr returns the address of an IPv4 or IPv6 host, and the zero Addr for
// other kinds.
func (h Host) Addr() netip.Addr { return h.addr }

// String serializes the host as the URL Standard does: IPv4 dotted decimal,
// IPv6 compressed in brackets, domains and opaque hosts as they are.
func (h Host) String() string {
	switch h.kind {
	case HostIPv4:
		return h.addr.String()
	case HostIPv6:
		return "[" + serializeIPv6(h.addr) + "]"
	}
	return h.name
}

// ChromiumAmbiguous returns a non-empty explanation when Chromium is known to
// read this host differently from the URL Standard (or to reject it), and ""
// otherwise.
func (h Host) ChromiumAmbiguous() string { return h.ambiguous }

// Errors returned by the host and URL parsers. They are wrapped in a
// *URLError that names the input.
var (
	ErrInvalidHost = errors.New("invalid host")
	ErrInvalidURL  = errors.New("invalid URL")
)

// ParseHost parses a host string the way the URL parser parses the host of
// a special URL (http, https, ws, wss, ftp): percent-decoding, IDNA
// domain-to-ASCII, IPv4 in every number form, bracketed IPv6.
func ParseHost(input string) (Host, error) {
	if input == "" {
		return Host{}, hostError(input, "empty host")
	}
	return parseHost(input, false)
}

type hostErr struct {
	input  string
	reason string
}

func (e *hostErr) Error() string {
	return "invalid host " + strconv.Quote(e.input) + ": " + e.reason
}

func (e *hostErr) Unwrap() error { return ErrInvalidHost }

func hostError(input, reason string) error { return &hostErr{input: input, reason: reason} }

// parseHost is the URL Standard's host parser.
func parseHost(input string, isOpaque bool) (Host, error) {
	if strings.HasPrefix(input, "[") {
		if !strings.HasSuffix(input, "]") || len(input) < 2 {
			return Host{}, hostError(input, "unclosed IPv6 address")
		}
		a, ok := parseIPv6(input[1 : len(input)-1])
		if !ok {
			return Host{}, hostError(input, "invalid IPv6 address")
		}
		return Host{kind: HostIPv6, addr: a}, nil
	}
	if isOpaque {
		return parseOpaqueHost(input)
	}
	decoded := percentDecode(input)
	domain := decoded
	if !utf8.ValidString(domain) {
		// UTF-8 decode without BOM: invalid sequences become U+FFFD, which
		// IDNA rejects below.
		domain = strings.ToValidUTF8(domain, "\uFFFD")
	}
	ascii, err := domainToASCII(domain)
	if err != nil {
		return Host{}, hostError(input, err.Error())
	}
	if endsInANumber(ascii) {
		v, ok := parseIPv4(ascii)
		if !ok {
			return Host{}, hostError(input, "invalid IPv4 address")
		}
		return Host{kind: HostIPv4, addr: netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})}, nil
	}
	h := Host{kind: HostDomain, name: ascii}
	h.ambiguous = chromiumAmbiguity(decoded, ascii)
	return h, nil
}

// chromiumAmbiguity reports the known classes of hosts that Chromium reads
// differently from the URL Standard:
//   - '*' in a host: Chromium escapes it to %2A, the Standard keeps it;
//   - an ASCII forbidden host code point (such as '<' or '>') in the input
//     that IDNA normalization absorbed (">" + U+0338 composes to U+226F):
//     Chromium rejects the host, the Standard accepts it.
func chromiumAmbiguity(decoded, ascii string) string {
	if strings.ContainsRune(ascii, '*') {
		return "Chromium escapes '*' in hosts"
	}
	for i := 0; i < len(decoded); i++ {
		if c := decoded[i]; c < 0x80 && isForbiddenDomainCodePoint(rune(c)) {
			return "Chromium rejects the ASCII character " + strconv.QuoteRune(rune(c)) + " in a host before IDNA mapping"
		}
	}
	return ""
}

func parseOpaqueHost(input string) (Host, error) {
	for _, r := range input {
		if r != '%' && isForbiddenHostCodePoint(r) {
			return Host{}, hostError(input, "forbidden code point "+strconv.QuoteRune(r))
		}
	}
	return Host{kind: HostOpaque, name: percentEncodeString(input, c0ControlSet)}, nil
}

func isForbiddenHostCodePoint(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

func isForbiddenDomainCodePoint(r rune) bool {
	return isForbiddenHostCodePoint(r) || r <= 0x1f || r == '%' || r == 0x7f
}

// idnaProfile is UTS #46 ToASCII configured as the URL Standard's "domain to
// ASCII" with beStrict false.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.StrictDomainName(false),
	idna.VerifyDNSLength(false),
	idna.RemoveLeadingDots(false),
)

var errEmptyDomain = errors.New("domain is empty after IDNA processing")

// domainToASCII is the URL Standard's "domain to ASCII" (beStrict false).
func domainToASCII(domain string) (string, error) {
	var result string
	if fastASCII(domain) {
		result = strings.ToLower(domain)
	} else {
		r, err := idnaProfile.ToASCII(applyIDNADelta(domain))
		if err != nil {
			return "", err
		}
		result = r
	}
	if result == "" {
		return "", errEmptyDomain
	}
	for _, r := range result {
		if isForbiddenDomainCodePoint(r) {
			return "", errors.New("forbidden code point " + strconv.QuoteRune(r))
		}
	}
	return result, nil
}

// fastASCII reports whether domain is all ASCII. The URL Standard returns
// an ASCII domain lowercased whatever Unicode ToASCII would say about it
// (web compatibility: "xn--8i7caa" and other A-labels that do not
// revalidate are accepted as they are).
func fastASCII(domain string) bool {
	for i := 0; i < len(domain); i++ {
		if domain[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInANumber is the URL Standard's "ends in a number checker".
func endsInANumber(s string) bool {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" {
		if len(parts) == 1 {
			return false
		}
		parts = parts[:len(parts)-1]
	}
	last := parts[len(parts)-1]
	if last != "" {
		digits := true
		for i := 0; i < len(last); i++ {
			if last[i] < '0' || last[i] > '9' {
				digits = false
				break
			}
		}
		if digits {
			return true
		}
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// ipv4Cap saturates IPv4 number parsing: every value at or above it fails
// the IPv4 parser anyway.
const ipv4Cap = 1 << 40

// parseIPv4Number is the URL Standard's IPv4 number parser. Values are
// saturated at ipv4Cap.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	if len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X") {
		radix = 16
		s = s[2:]
	} else if len(s) >= 2 && s[0] == '0' {
		radix = 8
		s = s[1:]
	}
	if s == "" {
		return 0, true
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		if v < ipv4Cap {
			v = v*radix + d
		}
	}
	if v > ipv4Cap {
		v = ipv4Cap
	}
	return v, true
}

// parseIPv4 is the URL Standard's IPv4 parser.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, 0, 4)
	for _, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums = append(nums, n)
	}
	for _, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
	}
	last := nums[len(nums)-1]
	if last >= uint64(1)<<(8*(5-len(nums))) {
		return 0, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return uint32(v), true
}

// parseIPv6 is the URL Standard's IPv6 parser (the input is without
// brackets).
func parseIPv6(input string) (netip.Addr, bool) {
	var addr [8]uint16
	pieceIndex := 0
	compress := -1
	in := []rune(input)
	p := 0
	at := func(i int) rune {
		if i < len(in) {
			return in[i]
		}
		return -1
	}
	if at(p) == ':' {
		if at(p+1) != ':' {
			return netip.Addr{}, false
		}
		p += 2
		pieceIndex++
		compress = pieceIndex
	}
	for at(p) != -1 {
		if pieceIndex == 8 {
			return netip.Addr{}, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return netip.Addr{}, false
			}
			p++
			pieceIndex++
			compress = pieceIndex
			continue
		}
		value, length := 0, 0
		for length < 4 && isHexDigit(at(p)) {
			value = value*16 + hexVal(at(p))
			p++
			length++
		}
		if at(p) == '.' {
			if length == 0 {
				return netip.Addr{}, false
			}
			p -= length
			if pieceIndex > 6 {
				return netip.Addr{}, false
			}
			numbersSeen := 0
			for at(p) != -1 {
				ipv4Piece := -1
				if numbersSeen > 0 {
					if at(p) == '.' && numbersSeen < 4 {
						p++
					} else {
						return netip.Addr{}, false
					}
				}
				if !isDigit(at(p)) {
					return netip.Addr{}, false
				}
				for isDigit(at(p)) {
					n := int(at(p) - '0')
					if ipv4Piece == -1 {
						ipv4Piece = n
					} else if ipv4Piece == 0 {
						return netip.Addr{}, false
					} else {
						ipv4Piece = ipv4Piece*10 + n
					}
					if ipv4Piece > 255 {
						return netip.Addr{}, false
					}
					p++
				}
				addr[pieceIndex] = addr[pieceIndex]*0x100 + uint16(ipv4Piece)
				numbersSeen++
				if numbersSeen == 2 || numbersSeen == 4 {
					pieceIndex++
				}
			}
			if numbersSeen != 4 {
				return netip.Addr{}, false
			}
			break
		} else if at(p) == ':' {
			p++
			if at(p) == -1 {
				return netip.Addr{}, false
			}
		} else if at(p) != -1 {
			return netip.Addr{}, false
		}
		addr[pieceIndex] = uint16(value)
		pieceIndex++
	}
	if compress != -1 {
		swaps := pieceIndex - compress
		pieceIndex = 7
		for pieceIndex != 0 && swaps > 0 {
			addr[pieceIndex], addr[compress+swaps-1] = addr[compress+swaps-1], addr[pieceIndex]
			pieceIndex--
			swaps--
		}
	} else if pieceIndex != 8 {
		return netip.Addr{}, false
	}
	var b [16]byte
	for i, v := range addr {
		b[2*i] = byte(v >> 8)
		b[2*i+1] = byte(v)
	}
	return netip.AddrFrom16(b), true
}

// serializeIPv6 is the URL Standard's IPv6 serializer (no brackets): the
// first longest run of two or more zero pieces is compressed, no embedded
// IPv4 form.
func serializeIPv6(a netip.Addr) string {
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	compress, best := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	var sb strings.Builder
	ignore0 := false
	for i := 0; i < 8; i++ {
		if ignore0 && pieces[i] == 0 {
			continue
		}
		ignore0 = false
		if compress == i {
			if i == 0 {
				sb.WriteString("::")
			} else {
				sb.WriteString(":")
			}
			ignore0 = true
			continue
		}
		sb.WriteString(strconv.FormatUint(uint64(pieces[i]), 16))
		if i != 7 {
			sb.WriteByte(':')
		}
	}
	return sb.String()
}

func isDigit(r rune) bool    { return r >= '0' && r <= '9' }
func isHexDigit(r rune) bool { return isDigit(r) || (r >= 'a' && r <= 'f') || (r >= 'A' && r <= 'F') }

func hexVal(r rune) int {
	switch {
	case r >= '0' && r <= '9':
		return int(r - '0')
	case r >= 'a' && r <= 'f':
		return int(r-'a') + 10
	case r >= 'A' && r <= 'F':
		return int(r-'A') + 10
	}
	return 0
}
