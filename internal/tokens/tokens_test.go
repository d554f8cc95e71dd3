package tokens

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func readPage(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/page.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// edgeCases stress the segment boundaries: newlines before '/', spaces,
// punctuation and non-ASCII; long lines; contractions; invalid UTF-8.
var edgeCases = []string{
	"",
	"a",
	"hello world",
	"Hello, world!\nSecond line.\n",
	"end.\n\n/path/after/newline",
	"line\n  indented\n\tTabbed\n",
	"x\r\nY\r\n\r\nZ",
	"words.\n/root\n\n\nNext",
	"It's they'll we'd I'M YOU'RE\nDon't",
	"naïve café\nÜber\n日本語\n١٢٣ digits\n½ fraction",
	"emoji 😀😀\n😀 next\n",
	"bad \xff\xfe utf8\n\xc3(\nx",
	"trailing spaces   \nNext   ",
	strings.Repeat("word ", 300) + "\n" + strings.Repeat("Ab", 400) + " tail",
	strings.Repeat("averyveryverylongword", 60) + " " + strings.Repeat("x", 700),
	"12345678901234567890\n1234\n",
	"<|endoftext|> special text is ordinary text",
	"- list\n  - link \"Home\"\n  - link \"About\"\n\t- tab\n  /slash\n \n  x\n\n\t\n y",
	"a.\n  /b\n\t\t)c\n \u00a0d\n  \u3000e\n  é\n  😀",
	"x\n\r\n  y\r\n\t\tz\n\v w\n \f v",
}

func TestCountMatchesEncoder(t *testing.T) {
	cases := append([]string{readPage(t)}, edgeCases...)
	for _, s := range cases {
		// Twice: the second count comes from the cache.
		for range 2 {
			if got, want := Count(s), countRaw(s); got != want {
				t.Errorf("Count(%.40q) = %d, encoder says %d", s, got, want)
			}
		}
	}
}

// TestCountRandom compares Count with the encoder on random strings built
// from the characters that decide piece boundaries, long enough to be split
// inside lines too.
func TestCountRandom(t *testing.T) {
	alphabet := []string{"\n", "\n", "\r", " ", " ", "\t", "/", ".", ",", "'s", "'", "a", "b", "Q", "ab", "XY",
		"7", "123", "é", "日", "\u00a0", "\u3000", "😀", "-", "\"", "\v", "\f", "\xff", "word ", "Word."}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	split := 0
	for range n {
		var b strings.Builder
		for range rng.IntN(120) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		if rng.IntN(10) == 0 {
			b.WriteString(strings.Repeat("lorem ipsum ", 60)) // a long line
		}
		s := b.String()
		if got, want := Count(s), countRaw(s); got != want {
			t.Fatalf("Count(%q) = %d, encoder says %d", s, got, want)
		}
		if _, rest := nextSegment(s); rest != "" {
			split++
		}
	}
	// The comparison only means something where Count did split.
	if split < n/4 {
		t.Fatalf("only %d of %d strings were split into segments", split, n)
	}
}

func TestCountKnownValues(t *testing.T) {
	// o200k_base ids from OpenAI's tiktoken: "hello world" -> [24912, 2375].
	ids, _, err := codec().Encode("hello world")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids) != "[24912 2375]" {
		t.Fatalf("Encode(hello world) = %v, want [24912 2375]", ids)
	}
	if n := Count("hello world"); n != 2 {
		t.Errorf("Count(hello world) = %d, want 2", n)
	}
	if n := Count(""); n != 0 {
		t.Errorf("Count(\"\") = %d, want 0", n)
	}
}

func TestSegmentsCoverInput(t *testing.T) {
	// An accessibility-tree-like rendering: every line indented.
	var tree strings.Builder
	for i := range 200 {
		fmt.Fprintf(&tree, "%s- link %q [%d]\n", strings.Repeat("  ", i%4), fmt.Sprint("item ", i), i)
	}
	for _, s := range []string{readPage(t), tree.String()} {
		checkSegments(t, s)
	}
}

func checkSegments(t *testing.T, s string) {
	var parts []string
	for rest := s; rest != ""; {
		var seg string
		seg, rest = nextSegment(rest)
		if seg == "" {
			t.Fatal("empty segment")
		}
		parts = append(parts, seg)
	}
	if strings.Join(parts, "") != s {
		t.Fatal("segments do not reassemble the input")
	}
	if lines := strings.Count(s, "\n"); len(parts) < lines/2 {
		t.Errorf("%d lines split into %d segments, want line-sized segments", lines, len(parts))
	}
	if got, want := Count(s), countRaw(s); got != want {
		t.Errorf("Count = %d, encoder says %d", got, want)
	}
}

func TestTruncate(t *testing.T) {
	page := readPage(t)
	tests := []struct {
		name string
		s    string
		max  int
	}{
		{"zero", "hello world", 0},
		{"negative", "hello world", -3},
		{"fits", "hello world", 2},
		{"fits loosely", "hello world", 100},
		{"one token", "hello world", 1},
		{"page 100", page, 100},
		{"page 1000", page, 1000},
		{"page all but one", page, Count(page) - 1},
		{"euro signs", strings.Repeat("€", 50), 7},
		{"emoji", strings.Repeat("😀🙂", 20), 5},
		{"cjk", strings.Repeat("日本語のページです。", 20), 9},
		{"invalid utf8", "ab\xffcd \xfe\xfe efgh ijkl", 3},
		{"long line", strings.Repeat("lorem ipsum dolor ", 200), 77},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Truncate(tt.s, tt.max)
			checkTruncate(t, tt.s, tt.max, got)
		})
	}
}

func checkTruncate(t *testing.T, s string, max int, got string) {
	t.Helper()
	if max <= 0 {
		if got != "" {
			t.Fatalf("Truncate(_, %d) = %q, want empty", max, got)
		}
		return
	}
	if Count(s) <= max {
		if got != s {
			t.Fatalf("Truncate of a fitting string changed it: %q", got)
		}
		return
	}
	clean := strings.ToValidUTF8(s, "\uFFFD")
	if Count(clean) <= max {
		// Runs of invalid bytes became one U+FFFD each, and the copy fits.
		if got != clean {
			t.Fatalf("Truncate(%.30q, %d) = %.30q, want the whole valid copy %.30q", s, max, got, clean)
		}
		return
	}
	if !strings.HasPrefix(clean, got) {
		t.Fatalf("Truncate(%.30q, %d) = %.30q, not a prefix", s, max, got)
	}
	if !utf8.ValidString(got) {
		t.Fatalf("Truncate(%.30q, %d) = %q, not valid UTF-8", s, max, got)
	}
	if n := Count(got); n > max {
		t.Fatalf("Truncate(%.30q, %d) has %d tokens", s, max, n)
	}
	// At a token boundary: the next token of the encoding would not fit,
	// so the result may fall short of max by the tokens of at most one
	// multi-token character, never by a whole word.
	if n := Count(got); max-n > 4 {
		t.Fatalf("Truncate(%.30q, %d) kept only %d tokens", s, max, n)
	}
}

func TestConcurrentCount(t *testing.T) {
	page := readPage(t)
	resetCache()
	want := countRaw(page)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				s := page
				if (g+i)%3 == 0 {
					s = fmt.Sprintf("step %d of goroutine %d\n%s", i, g, page)
				}
				n := Count(s)
				if s == page && n != want {
					t.Errorf("Count = %d, want %d", n, want)
				}
				_ = Truncate(s, 50+i)
			}
		})
	}
	wg.Wait()
}

func TestCacheBounded(t *testing.T) {
	resetCache()
	defer resetCache()
	// Fill the cache directly: encoding megabytes of text under -race
	// would take long and test nothing more.
	line := strings.Repeat("x", 1000)
	keep := "kept because it is used on every step\n"
	cache.mu.Lock()
	storeLocked(keep, 42)
	cache.mu.Unlock()
	for i := range 3 * cacheBytes / 1000 {
		cache.mu.Lock()
		storeLocked(fmt.Sprintf("%d %s", i, line), 1)
		cache.mu.Unlock()
		if i%1000 == 0 && countSegment(keep) != 42 {
			t.Fatalf("entry in use was evicted after %d stores", i)
		}
	}
	cache.mu.Lock()
	defer cache.mu.Unlock()
	total := cache.curBytes
	for k := range cache.old {
		total += len(k)
	}
	if total > 2*cacheBytes {
		t.Fatalf("cache holds %d bytes of text, bound is %d", total, 2*cacheBytes)
	}
	if len(cache.cur)+len(cache.old) >= 3*cacheBytes/1000 {
		t.Fatalf("cache never evicted: %d entries", len(cache.cur)+len(cache.old))
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range edgeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Count(s), countRaw(s); got != want {
			t.Fatalf("Count(%q) = %d, encoder says %d", s, got, want)
		}
	})
}

func FuzzTruncate(f *testing.F) {
	for i, s := range edgeCases {
		f.Add(s, i%7)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max > 1<<16 || max < -1<<16 {
			t.Skip()
		}
		checkTruncate(t, s, max, Truncate(s, max))
	})
}

func BenchmarkCount10KB(b *testing.B) {
	page := readPage(b)
	b.Run("cold", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			resetCache()
			b.StartTimer()
			Count(page)
		}
	})
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		Count(page)
		for b.Loop() {
			Count(page)
		}
	})
	b.Run("one-line-changed", func(b *testing.B) {
		// The next observation of the same page: one line differs.
		b.ReportAllocs()
		Count(page)
		i := 0
		for b.Loop() {
			i++
			Count(fmt.Sprintf("Focused: element %d\n%s", i, page))
		}
	})
	b.Run("encoder-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			countRaw(page)
		}
	})
}

func BenchmarkTruncate10KBTo2000(b *testing.B) {
	page := readPage(b)
	b.ReportAllocs()
	Count(page)
	for b.Loop() {
		Truncate(page, 2000)
	}
}
