// Package termsafe escapes the control characters in text that came from
// a page, a file or a peer before the CLI prints it to a terminal: an
// escape sequence in a page title or a localStorage key must show as text
// (\x1b[2J), not clear the screen, retitle the window or forge lines.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character escaped: C0 controls
// (newline, carriage return and tab included, so a value cannot forge a
// line), DEL, C1 controls (U+0080 to U+009F, which some terminals take as
// CSI and friends), the Unicode line and paragraph separators, and the
// bidirectional overrides that reorder what a terminal shows. Invalid
// UTF-8 bytes are escaped as \xNN. Other text, backslashes included, is
// left as it is. A string without such characters is returned unchanged.
func String(s string) string { return escapeKeeping(s, "") }

// Lines is String for multi-line text that surf prints as lines of its
// own: newlines stay, everything else String escapes is escaped.
func Lines(s string) string { return escapeKeeping(s, "\n") }

// escapeKeeping escapes what String does except the characters in keep.
func escapeKeeping(s, keep string) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if needs(r, n, keep) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !needs(r, n, keep):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

func needs(r rune, n int, keep string) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case strings.ContainsRune(keep, r):
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi embeddings, overrides, isolates
		return true
	}
	return false
}

// Writer returns a writer that escapes, in everything written to w, what
// String escapes except newlines and tabs: for a command's human-readable
// output, whose lines and columns are surf's own. It reports len(p) as
// written when w took the escaped text whole.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (sw writer) Write(p []byte) (int, error) {
	s := string(p)
	e := escapeKeeping(s, "\n\t")
	if _, err := io.WriteString(sw.w, e); err != nil {
		return 0, err
	}
	return len(p), nil
}
