package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCuts(t *testing.T) {
	for _, c := range []struct{ name, got, want string }{
		{"short", Bytes("abc", 5), "abc"},
		{"exact", Bytes("abcde", 5), "abcde"},
		{"cut", Bytes("abcdef", 3), "abc…"},
		{"rune boundary", Bytes("aü", 2), "a…"},
		{"prefix", Prefix("aüb", 2), "a"},
		{"prefix negative", Prefix("abc", -1), ""},
		{"runes", Runes("aüböc", 3), "aüb…"},
		{"runes short", Runes("aü", 3), "aü"},
		{"first line", FirstLine("one\ntwo"), "one"},
		{"line", Line("abcdef\nxyz", 4), "abcd…"},
		{"line short", Line("ab\ncdefgh", 4), "ab"},
		{"flat", Flat("a\n  b\nc", 5), "a   b…"},
		{"one line", OneLine("a \n b\t\tc", 3), "a b…"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
}

func FuzzBytes(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Add("\xff\xfe", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 0 || n > 1<<16 {
			return
		}
		got := Bytes(s, n)
		body := strings.TrimSuffix(got, Ellipsis)
		if len(body) > n || !strings.HasPrefix(s, body) {
			t.Fatalf("Bytes(%q, %d) = %q", s, n, got)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Bytes(%q, %d) = %q splits a character", s, n, got)
		}
	})
}
