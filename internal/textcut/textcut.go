// Package textcut shortens strings for display without splitting a
// character: the one place surf cuts titles, lines and messages to size.
package textcut

import (
	"strings"
	"unicode/utf8"
)

// Ellipsis marks where a string was cut.
const Ellipsis = "…"

// Prefix returns s cut to at most n bytes on a rune boundary, unmarked.
func Prefix(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Bytes returns s cut to at most n bytes on a rune boundary, followed by
// an ellipsis when it was cut.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + Ellipsis
}

// Runes returns s cut to at most n runes, followed by an ellipsis when it
// was cut.
func Runes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k] + Ellipsis
		}
		i++
	}
	return s
}

// FirstLine returns s up to its first newline.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Line returns the first line of s cut to n bytes with Bytes.
func Line(s string, n int) string {
	return Bytes(FirstLine(s), n)
}

// Flat turns every newline in s into a space and cuts the result to n
// bytes with Bytes; other white space is kept as it is.
func Flat(s string, n int) string {
	return Bytes(strings.ReplaceAll(s, "\n", " "), n)
}

// OneLine collapses every run of white space in s (newlines among it) to
// one space and cuts the result to n bytes with Bytes.
func OneLine(s string, n int) string {
	return Bytes(strings.Join(strings.Fields(s), " "), n)
}
