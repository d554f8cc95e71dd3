package policy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"strings"
)

// secretForms returns the ways a secret's value may be written where surf
// reads or stores text: as typed, escaped in JSON and HTML, percent-encoded
// the ways browsers and Go write URLs and forms (upper- and lower-case
// hex), and in base64 (whole, and the part of it any alignment inside a
// longer base64 text determines). value itself comes first.
func secretForms(value string) []string {
	var forms []string
	seen := map[string]bool{}
	add := func(f string) {
		if f != "" && !seen[f] {
			seen[f] = true
			forms = append(forms, f)
		}
	}
	add(value)
	for _, esc := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(esc)
		if enc.Encode(value) == nil {
			q := strings.TrimSuffix(b.String(), "\n")
			add(q[1 : len(q)-1])
		}
	}
	add(html.EscapeString(value))
	var percent []string
	percent = append(percent,
		url.QueryEscape(value), // Go: space as '+', '~' kept, '*' escaped
		url.PathEscape(value),
		formEncode(value, true),                     // Chromium's form submission: '*' kept, '~' escaped, space as '+'
		formEncode(value, false),                    // the same with space as %20
		percentEncodeString(value, specialQuerySet), // what URL parsing leaves of a raw query
		percentEncodeString(value, querySet),
		percentEncodeString(value, pathSet),
		percentEncodeString(value, userinfoSet),
		percentEncodeString(value, fragmentSet),
		percentEncodeString(value, componentSet), // encodeURIComponent
		percentEncodeString(value, func(r rune) bool { return !isASCIIAlnum(r) }),
	)
	for _, p := range percent {
		add(p)
		add(lowerHex(p))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		add(enc.EncodeToString([]byte(value)))
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for _, core := range base64Cores(enc, []byte(value)) {
			add(core)
		}
	}
	return forms
}

// minBase64Core is the shortest base64 run redacted inside a longer base64
// text: shorter ones would match unrelated text.
const minBase64Core = 8

// base64Cores returns, for each of the three alignments value may have
// inside a longer base64 text, the characters that only value's bytes
// determine.
func base64Cores(enc *base64.Encoding, value []byte) []string {
	var cores []string
	for k := 0; k < 3; k++ {
		in := append(make([]byte, k), value...)
		s := enc.EncodeToString(in)
		from := (8*k + 5) / 6            // the first character whose bits are all value's
		to := (8 * (k + len(value))) / 6 // past the last such character
		if to-from >= minBase64Core && to <= len(s) {
			cores = append(cores, s[from:to])
		}
	}
	return cores
}

// formEncode is the application/x-www-form-urlencoded byte serializer as
// Chromium writes it: ASCII letters, digits and "-._*" stay, space becomes
// '+' (or %20 when plus is false), line breaks become CRLF, every other
// byte is %XX with upper-case hex.
func formEncode(s string, plus bool) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isASCIIAlnum(rune(c)) || c == '-' || c == '.' || c == '_' || c == '*':
			sb.WriteByte(c)
		case c == ' ' && plus:
			sb.WriteByte('+')
		case c == '\n':
			sb.WriteString("%0D%0A")
		default:
			sb.WriteByte('%')
			sb.WriteByte(upperHex[c>>4])
			sb.WriteByte(upperHex[c&15])
		}
	}
	return sb.String()
}

// componentSet is what encodeURIComponent escapes: all but ASCII letters,
// digits and "-_.!~*'()".
func componentSet(r rune) bool {
	return !isASCIIAlnum(r) && !strings.ContainsRune("-_.!~*'()", r)
}

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// lowerHex lower-cases the hex digits of s's %XX escapes.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHexByte(b[i+1]) && isHexByte(b[i+2]) {
			b[i+1], b[i+2] = byte(toLowerASCII(rune(b[i+1]))), byte(toLowerASCII(rune(b[i+2])))
			i += 2
		}
	}
	return string(b)
}

// RedactBase64 redacts a base64 text (as HAR files hold binary bodies):
// it decodes s, redacts the decoded bytes and encodes them again. A text
// that does not decode is redacted as it is.
func (p *Policy) RedactBase64(s string) string {
	if !p.Redacts() || s == "" {
		return s
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		b, err := enc.DecodeString(s)
		if err != nil {
			continue
		}
		r := p.Redact(string(b))
		if r == string(b) {
			return p.Redact(s)
		}
		return enc.EncodeToString([]byte(r))
	}
	return p.Redact(s)
}

// ContainsSecret reports whether text holds one of the policy's secrets,
// or a value of its redaction set, in any of the forms Redact replaces.
func (p *Policy) ContainsSecret(text string) bool {
	if p == nil || text == "" {
		return false
	}
	for _, s := range p.secrets {
		for _, f := range s.forms {
			if strings.Contains(text, f) {
				return true
			}
		}
	}
	return p.redactions.Contains(text)
}
