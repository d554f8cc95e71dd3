// Package tokens counts model tokens so surf can keep every model request
// within a budget.
//
// It counts and truncates text in o200k_base tokens (the encoding of
// GPT-4o, GPT-4.1, o-series and GPT-5 models) and estimates the tokens of
// chat messages, tools and images. Counting is exact for text (github.com/tiktoken-go/tokenizer does
// the byte-pair encoding) and an estimate for message framing and images.
//
// The encoder loads lazily on first use and is safe for concurrent use. Text
// is counted line by line and the line counts are cached, so counting the
// same conversation again on every agent step costs map lookups, not
// re-encoding.
package tokens

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// codec is the o200k_base encoder, built on first use. tokenizer.Codec is
// safe for concurrent Count and Encode as long as nobody changes its error
// mode, which this package never does.
var codec = sync.OnceValue(func() tokenizer.Codec {
	c, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		// o200k_base is compiled into the tokenizer module: this cannot
		// fail at run time unless the dependency itself is broken.
		panic("tokens: loading o200k_base: " + err.Error())
	}
	return c
})

// Count returns the number of o200k_base tokens in s. Invalid UTF-8 counts
// as if each invalid sequence were U+FFFD, as the encoder sees it.
func Count(s string) int {
	n := 0
	for rest := s; rest != ""; {
		var seg string
		seg, rest = nextSegment(rest)
		n += countSegment(seg)
	}
	return n
}

// Truncate returns the longest prefix of s that holds at most max tokens, cut
// at a token boundary and never inside a UTF-8 sequence. If s already fits it
// is returned unchanged; max <= 0 gives "". When s must be cut and holds
// invalid UTF-8, the cut is made in a copy where each run of invalid bytes is
// replaced by one U+FFFD, so the result is always valid UTF-8; that copy is
// returned whole when it fits.
func Truncate(s string, max int) string {
	if max <= 0 {
		return ""
	}
	if Count(s) <= max {
		return s
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		if Count(s) <= max {
			return s
		}
	}
	used, off := 0, 0
	for rest := s; rest != ""; {
		var seg string
		seg, rest = nextSegment(rest)
		c := countSegment(seg)
		if used+c <= max {
			used += c
			off += len(seg)
			continue
		}
		return s[:off] + cutSegment(seg, max-used)
	}
	return s // unreachable: Count(s) > max means some segment overflows
}

// cutSegment returns the longest prefix of seg, cut at one of its token
// boundaries outside any UTF-8 sequence, that re-encodes to at most n tokens.
// Byte-pair encoding is not prefix-stable, so the prefix is counted again and
// shortened by a token until it fits.
func cutSegment(seg string, n int) string {
	if n <= 0 {
		return ""
	}
	_, toks, _ := codec().Encode(seg)
	n = min(n, len(toks))
	for ; n > 0; n-- {
		cut := 0
		for _, t := range toks[:n] {
			cut += len(t)
		}
		for cut > 0 && cut < len(seg) && !utf8.RuneStart(seg[cut]) {
			cut--
		}
		if p := seg[:cut]; countRaw(p) <= n {
			return p
		}
	}
	return ""
}

// countRaw counts s with the encoder, without the cache.
func countRaw(s string) int {
	n, _ := codec().Count(s) // errors only in ErrorModeStrict, never set
	return n
}

// maxLineBytes bounds a segment cut inside a long line (see nextSegment).
const maxLineBytes = 512

// nextSegment splits s into a first segment and the rest, at a position
// where the o200k pre-tokenizer is certain to start a new piece whatever
// follows, so that Count(seg)+Count(rest) == Count(s) exactly and each
// segment can be counted (and cached) on its own.
//
// The pre-tokenizer (the regular expression of o200k_base) has no
// look-behind, and its only look-ahead is in `\s+(?!\S)`, so a position p is
// a piece boundary independent of context when the piece covering p-1 cannot
// extend past p nor end elsewhere. Two such positions are used:
//
//   - after '\n' when what follows is optional spaces and tabs, then printable
//     ASCII (not '/' right after the newline) or a non-ASCII letter or digit:
//     a piece holding a newline is `\s*[\r\n]+` (which ends at the last
//     newline of a whitespace run) or the tail `[\r\n/]*` of a punctuation
//     piece (which ends before anything but \r, \n and '/'); these lines,
//     indented or not, are the natural unit of page text;
//   - inside lines longer than maxLineBytes, between an ASCII letter and a
//     space: letter pieces consume letters (and a contraction suffix that
//     starts with an apostrophe) and cannot take a space at their end.
//
// Missing a boundary only makes a segment longer; it never makes a count
// wrong. FuzzSegments checks the identity against the encoder itself.
func nextSegment(s string) (seg, rest string) {
	start := 0
	for {
		i := strings.IndexByte(s[start:], '\n')
		if i < 0 {
			break
		}
		i += start
		if i-start > maxLineBytes {
			if j := wordCut(s[start:i]); j > 0 {
				return s[:start+j], s[start+j:]
			}
		}
		p := i + 1
		if p < len(s) && newlineBoundary(s[p:]) {
			return s[:p], s[p:]
		}
		start = p
	}
	if len(s)-start > maxLineBytes {
		if j := wordCut(s[start:]); j > 0 {
			return s[:start+j], s[start+j:]
		}
	}
	return s, ""
}

// newlineBoundary reports whether the text after a '\n' cannot continue a
// piece holding that newline: optional spaces and tabs, then a character
// that is neither whitespace nor (right after the newline) '/'.
func newlineBoundary(after string) bool {
	k := 0
	for k < len(after) && (after[k] == ' ' || after[k] == '\t') {
		k++
	}
	if k == len(after) {
		return false
	}
	c := after[k]
	if c < utf8.RuneSelf {
		return c > ' ' && c < 0x7f && (c != '/' || k > 0)
	}
	r, _ := utf8.DecodeRuneInString(after[k:])
	return r != utf8.RuneError && isLetterOrDigit(r)
}

// wordCut returns the first position at or after maxLineBytes/2 in line
// where an ASCII letter is followed by a space, or 0 if there is none.
func wordCut(line string) int {
	for j := maxLineBytes / 2; j < len(line); j++ {
		if line[j] == ' ' && isASCIILetter(line[j-1]) {
			return j
		}
	}
	return 0
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
