package shell_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/surfkit/surf/cmd/surf/internal/shell"
)

func TestSplitWords(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  string
	}{
		{line: "", want: nil},
		{line: "  \t ", want: nil},
		{line: "click 12", want: []string{"click", "12"}},
		{line: "input_text 7 \"hello world\" --press_enter=false", want: []string{"input_text", "7", "hello world", "--press_enter=false"}},
		{line: `a 'it''s' b`, want: []string{"a", "its", "b"}},
		{line: `a "say \"hi\"" 'no \escape'`, want: []string{"a", `say "hi"`, `no \escape`}},
		{line: `a\ b c`, want: []string{"a b", "c"}},
		{line: `""`, want: []string{""}},
		{line: `x ''`, want: []string{"x", ""}},
		{line: "keypress\tControl+A   Backspace", want: []string{"keypress", "Control+A", "Backspace"}},
		{line: `a "open`, err: `unclosed " quote`},
		{line: `a 'open`, err: `unclosed ' quote`},
		{line: `a b\`, err: "cannot end with a backslash"},
	} {
		got, err := shell.SplitWords(tc.line)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SplitWords(%q) = %q, %v; want an error with %q", tc.line, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q", tc.line, got, err, tc.want)
		}
	}
}

// TestQuoteRoundTrip checks that a word Quote quotes comes back whole from
// SplitWords: surf shell URL runs "visit_url "+Quote(URL), the URL the
// policy checked. strconv.Quote's escapes (\t, \x7f, \u2028) came back as
// other text.
func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{
		"http://example.com/",
		"",
		"it's",
		`a "b" \c`,
		"http://example.com/a\tb",
		"http://example.com/\x7f",
		"http://example.com/\u2028x",
		"é ü 日本",
		"''",
	} {
		checkRoundTrip(t, s)
	}
}

func checkRoundTrip(t *testing.T, s string) {
	t.Helper()
	words, err := shell.SplitWords("visit_url " + shell.Quote(s))
	if err != nil || len(words) != 2 || words[1] != s {
		t.Errorf("SplitWords(%q) = %q, %v; want [visit_url %q]", "visit_url "+shell.Quote(s), words, err, s)
	}
}

func FuzzQuoteRoundTrip(f *testing.F) {
	for _, s := range []string{"http://example.com/", "it's", "a\tb", `\`, `"`, "'\\''"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			t.Skip("a line is text")
		}
		checkRoundTrip(t, s)
	})
}

// FuzzSplitWords checks that any line splits or errs without a panic, and
// that words quoted again and joined split into the same words.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"click 12", `input_text 7 "a b" --press_enter=false`, `a\ b 'c'"d"`, `"`, `\`, "\t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := shell.SplitWords(line)
		if err != nil || !utf8.ValidString(line) {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = shell.Quote(w)
		}
		again, err := shell.SplitWords(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, words) {
			t.Errorf("%q split into %q; quoted and split again: %q, %v", line, words, again, err)
		}
		// ToolArgs takes any words without a panic.
		if len(words) > 0 {
			shell.ToolArgs("input_text", words)
			shell.ToolArgs("keypress", words)
		}
	})
}

func TestToolArgs(t *testing.T) {
	for _, tc := range []struct {
		tool  string
		words []string
		want  string
		err   string
	}{
		{tool: "click", words: []string{"12"}, want: `{"target_id":12}`},
		{tool: "input_text", words: []string{"7", "hello world", "--press_enter=false"}, want: `{"input_field_id":7,"press_enter":false,"text_value":"hello world"}`},
		{tool: "input_text", words: []string{"--text_value", "x", "--delete_existing_text", "7"}, want: `{"delete_existing_text":true,"input_field_id":7,"text_value":"x"}`},
		{tool: "keypress", words: []string{"Control+A", "Backspace"}, want: `{"keys":["Control+A","Backspace"]}`},
		{tool: "click", words: []string{"12", "--reasoning=the link"}, want: `{"reasoning":"the link","target_id":12}`},
		{tool: "click", words: []string{"x"}, err: `target_id must be a whole number, not "x"`},
		{tool: "click", words: []string{"1", "2"}, err: `click takes 1 arguments; "2" is one too many`},
		{tool: "click", words: []string{"--nope=1"}, err: `click has no argument "nope"`},
		{tool: "click", words: []string{"--target_id"}, err: "--target_id needs a value"},
		{tool: "input_text", words: []string{"1", "a", "--press_enter=maybe"}, err: `press_enter must be true or false, not "maybe"`},
		{tool: "teleport", words: nil, err: `unknown action "teleport"`},
	} {
		got, err := shell.ToolArgs(tc.tool, tc.words)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ToolArgs(%s, %q) = %s, %v; want error %q", tc.tool, tc.words, got, err, tc.err)
			}
			continue
		}
		if err != nil || !jsonEqual(t, got, tc.want) {
			t.Errorf("ToolArgs(%s, %q) = %s, %v; want %s", tc.tool, tc.words, got, err, tc.want)
		}
	}
}

func jsonEqual(t *testing.T, a json.RawMessage, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}
