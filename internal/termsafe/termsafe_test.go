package termsafe

import (
	"fmt"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain text, ünïcödé ✓ and a \\ backslash", "plain text, ünïcödé ✓ and a \\ backslash"},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"\x1b[2J\x1b[Hclear", `\x1b[2J\x1b[Hclear`},
		{"key\r\nforged: line\tx", `key\r\nforged: line\tx`},
		{"del\x7f nul\x00", `del\x7f nul\x00`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"bidi \u202eevil\u2066 sep\u2028", `bidi \u202eevil\u2066 sep\u2028`},
		{"bad \xff\xc2 utf8", `bad \xff\xc2 utf8`},
	} {
		if got := String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := String(c.in); hasControl(got) {
			t.Errorf("String(%q) = %q holds a control character", c.in, got)
		}
	}
	if got := Lines("one\x1b[1A\ntwo\r"); got != "one\\x1b[1A\ntwo\\r" {
		t.Errorf("Lines: %q", got)
	}
}

func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return true
		}
	}
	return false
}

func FuzzString(f *testing.F) {
	f.Add("\x1b[31mred\x07\r\n")
	f.Fuzz(func(t *testing.T, s string) {
		if got := String(s); hasControl(got) {
			t.Errorf("String(%q) = %q holds a control character", s, got)
		}
	})
}

func TestWriter(t *testing.T) {
	var b strings.Builder
	w := Writer(&b)
	n, err := fmt.Fprintf(w, "title\t%s\n", "\x1b]0;x\x07\r\nforged")
	if err != nil || n != len("title\t\x1b]0;x\x07\r\nforged\n") {
		t.Fatalf("wrote %d, %v", n, err)
	}
	if want := "title\t\\x1b]0;x\\x07\\r\nforged\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
