package policy

import (
	"strings"
	"unicode/utf8"
)

// percentEncodeSet says which code points are percent-encoded. Code points
// above U+007E are always encoded.
type percentEncodeSet func(r rune) bool

func c0ControlSet(r rune) bool { return r <= 0x1f || r > 0x7e }

func fragmentSet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '<' || r == '>' || r == '`'
}

func querySet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '#' || r == '<' || r == '>'
}

func specialQuerySet(r rune) bool { return querySet(r) || r == '\'' }

func pathSet(r rune) bool {
	return querySet(r) || r == '?' || r == '^' || r == '`' || r == '{' || r == '}'
}

func userinfoSet(r rune) bool {
	return pathSet(r) || r == '/' || r == ':' || r == ';' || r == '=' || r == '@' ||
		(r >= '[' && r <= '^') || r == '|'
}

const upperHex = "0123456789ABCDEF"

// appendPercentEncoded appends r, UTF-8 percent-encoded when it is in set.
func appendPercentEncoded(sb *strings.Builder, r rune, set percentEncodeSet) {
	if !set(r) {
		sb.WriteRune(r)
		return
	}
	var buf [4]byte
	n := encodeRune(buf[:], r)
	for _, b := range buf[:n] {
		sb.WriteByte('%')
		sb.WriteByte(upperHex[b>>4])
		sb.WriteByte(upperHex[b&15])
	}
}

func encodeRune(p []byte, r rune) int {
	return utf8.EncodeRune(p, r) // invalid runes become U+FFFD
}

func percentEncodeString(s string, set percentEncodeSet) string {
	var sb strings.Builder
	for _, r := range s {
		appendPercentEncoded(&sb, r, set)
	}
	return sb.String()
}

// percentDecode is the URL Standard's percent-decode on a string's UTF-8
// bytes. The result may hold invalid UTF-8.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHexByte(s[i+1]) && isHexByte(s[i+2]) {
			b = append(b, byte(hexVal(rune(s[i+1]))<<4|hexVal(rune(s[i+2]))))
			i += 2
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

func isHexByte(c byte) bool { return isHexDigit(rune(c)) }

// appendEncodedRunes appends r to dst, UTF-8 percent-encoded when it is in
// set.
func appendEncodedRunes(dst []rune, r rune, set percentEncodeSet) []rune {
	if !set(r) {
		return append(dst, r)
	}
	var buf [4]byte
	n := encodeRune(buf[:], r)
	for _, b := range buf[:n] {
		dst = append(dst, '%', rune(upperHex[b>>4]), rune(upperHex[b&15]))
	}
	return dst
}
