package policy

import (
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// TypedPlaceholder stands for text a person typed into the browser (see
// Redactions) wherever surf would otherwise show or store it.
const TypedPlaceholder = "<typed-by-user>"

// MinRedacted is the shortest typed text (in characters) a Redactions set
// redacts: shorter runs would blank out ordinary words and letters
// everywhere, and say little on their own.
const MinRedacted = 3

// maxRedactions bounds the values a set keeps; the oldest go first.
const maxRedactions = 512

// Redactions is a session's set of strings that surf learns at run time
// and must never show the model or store: the text a person typed into the
// page during a takeover. A policy that consults it (WithRedactions)
// replaces each value, in every encoding Redact knows for secrets, with
// TypedPlaceholder in Redact, RedactBase64 and ContainsSecret; so do the
// journal, the HAR recording and the model's observations, which all
// redact with that policy. It is safe for concurrent use; the zero value
// is an empty set.
//
// Keystrokes arrive one at a time: Type adds to the current run of
// typing, which is redacted as it grows; Break ends the run (a click, a
// Tab, Enter), keeping it.
//
// Only what the person typed is hidden, nothing else: a value is replaced
// where it stands on its own, not where its characters are part of a
// longer word ("wid" typed hides "wid", not the start of "widgets"), and
// a run of several words is hidden whole, not word by word (typing "blue
// lamp" does not hide every "lamp" of every page).
type Redactions struct {
	mu      sync.RWMutex
	kept    []string // values redacted, oldest first
	run     []rune   // the current run of typing
	version int
	// forms are every form of every value, longest first, for version
	// cached; nil when stale.
	forms  []string
	cached int
}

// NewRedactions returns an empty set.
func NewRedactions() *Redactions { return &Redactions{} }

// Add redacts value from now on. Values shorter than MinRedacted are
// ignored.
func (r *Redactions) Add(value string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addLocked(value)
}

func (r *Redactions) addLocked(value string) {
	for _, v := range splitTyped(value) {
		if containsString(r.kept, v) {
			continue
		}
		r.kept = append(r.kept, v)
		if len(r.kept) > maxRedactions {
			r.kept = r.kept[len(r.kept)-maxRedactions:]
		}
		r.version++
	}
}

// CopyFrom adds o's values (its current run of typing included) to r:
// for a session that replaces o's (a relaunched browser).
func (r *Redactions) CopyFrom(o *Redactions) {
	if r == nil || o == nil || r == o {
		return
	}
	o.mu.RLock()
	values := append([]string(nil), o.kept...)
	if len(o.run) > 0 {
		values = append(values, string(o.run))
	}
	o.mu.RUnlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		r.addLocked(v)
	}
}

// Type adds keystroke text to the current run of typing. The run so far
// is redacted at once.
func (r *Redactions) Type(text string) {
	if r == nil || text == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.run = append(r.run, []rune(text)...)
	if len(r.run) > 4096 {
		r.run = r.run[len(r.run)-4096:]
	}
	r.version++
}

// Backspace removes the last character of the current run: the person
// corrected a typo. What was redacted before stays redacted only while
// it is part of the run.
func (r *Redactions) Backspace() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.run) > 0 {
		r.run = r.run[:len(r.run)-1]
		r.version++
	}
}

// Break ends the current run of typing: it stays redacted, and the next
// keystroke starts a new run.
func (r *Redactions) Break() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.run) > 0 {
		r.addLocked(string(r.run))
		r.run = nil
		r.version++
	}
}

// Len reports how many values the set redacts, the current run included.
func (r *Redactions) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	n := len(r.kept)
	if len(r.run) > 0 {
		n += len(splitTyped(string(r.run)))
	}
	return n
}

// Redact replaces every value of the set, in every encoding Redact knows
// for secrets, with TypedPlaceholder, where it stands on its own (see
// Redactions).
func (r *Redactions) Redact(text string) string {
	if r == nil || text == "" {
		return text
	}
	forms := r.present(text)
	if len(forms) == 0 {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		if f := matchAt(text, i, forms); f != "" {
			b.WriteString(text[last:i])
			b.WriteString(TypedPlaceholder)
			i += len(f)
			last = i
			continue
		}
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// Contains reports whether text holds a value of the set in any of the
// forms Redact replaces, where Redact replaces it.
func (r *Redactions) Contains(text string) bool {
	if r == nil || text == "" {
		return false
	}
	forms := r.present(text)
	for _, f := range forms {
		for off := 0; ; {
			j := strings.Index(text[off:], f)
			if j < 0 {
				break
			}
			if alone(text, off+j, off+j+len(f)) {
				return true
			}
			off += j + 1
		}
	}
	return false
}

// present returns the forms of the set's values that text holds
// somewhere, longest first: most text holds none.
func (r *Redactions) present(text string) []string {
	var out []string
	for _, f := range r.allForms() {
		if strings.Contains(text, f) {
			out = append(out, f)
		}
	}
	return out
}

// matchAt returns the longest of forms that starts at text[i] and stands
// on its own there, or "".
func matchAt(text string, i int, forms []string) string {
	for _, f := range forms {
		if strings.HasPrefix(text[i:], f) && alone(text, i, i+len(f)) {
			return f
		}
	}
	return ""
}

// alone reports whether text[i:j] stands on its own: neither end runs on
// into a word (a letter or digit on both sides of the edge). An escape
// just before it (%2F, \u0022, \n) ends the word before it.
func alone(text string, i, j int) bool {
	first, _ := utf8.DecodeRuneInString(text[i:j])
	if i > 0 && isWordRune(first) && !escapeBefore(text, i) {
		if prev, _ := utf8.DecodeLastRuneInString(text[:i]); isWordRune(prev) {
			return false
		}
	}
	lastR, _ := utf8.DecodeLastRuneInString(text[i:j])
	if j < len(text) && isWordRune(lastR) {
		if next, _ := utf8.DecodeRuneInString(text[j:]); isWordRune(next) {
			return false
		}
	}
	return true
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// escapeBefore reports whether text[:i] ends with a percent escape (%3D),
// a JSON \u escape or a one-letter backslash escape (\n, \t).
func escapeBefore(text string, i int) bool {
	hex := func(s string) bool {
		for _, c := range []byte(s) {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
		return true
	}
	switch {
	case i >= 3 && text[i-3] == '%' && hex(text[i-2:i]):
		return true
	case i >= 6 && text[i-6] == '\\' && text[i-5] == 'u' && hex(text[i-4:i]):
		return true
	case i >= 2 && text[i-2] == '\\' && strings.IndexByte("nrtbf", text[i-1]) >= 0:
		return true
	}
	return false
}

// empty reports whether the set redacts nothing.
func (r *Redactions) empty() bool { return r.Len() == 0 }

// allForms returns the forms of the set's current values, longest
// first.
func (r *Redactions) allForms() []string {
	r.mu.RLock()
	if r.forms != nil && r.cached == r.version {
		defer r.mu.RUnlock()
		return r.forms
	}
	values := append([]string(nil), r.kept...)
	if len(r.run) > 0 {
		values = append(values, splitTyped(string(r.run))...)
	}
	version := r.version
	r.mu.RUnlock()

	seen := map[string]bool{}
	var forms []string
	for _, v := range values {
		for _, f := range secretForms(v) {
			if !seen[f] && utf8.RuneCountInString(f) >= MinRedacted {
				seen[f] = true
				forms = append(forms, f)
			}
		}
	}
	if forms == nil {
		forms = []string{} // cached as empty
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	r.mu.Lock()
	if r.version == version {
		r.forms, r.cached = forms, version
	}
	r.mu.Unlock()
	return forms
}

// splitTyped returns the values a typed text redacts: the text, trimmed,
// if it is at least MinRedacted long. (Not its words one by one: they
// are the person's only together.)
func splitTyped(text string) []string {
	t := strings.TrimSpace(text)
	if utf8.RuneCountInString(t) >= MinRedacted {
		return []string{t}
	}
	return nil
}

// WithRedactions returns p consulting r: Redact, RedactBase64 and
// ContainsSecret also cover r's values. Narrow and Restrict keep it.
func (p *Policy) WithRedactions(r *Redactions) *Policy {
	if p.unusable() {
		return p
	}
	out := *p
	out.redactions = r
	return &out
}

// Redactions returns the run-time redaction set p consults, or nil.
func (p *Policy) Redactions() *Redactions {
	if p == nil {
		return nil
	}
	return p.redactions
}

// Redacts reports whether Redact may change text at all: p has secrets,
// or its redaction set has values.
func (p *Policy) Redacts() bool {
	return p != nil && (len(p.secrets) > 0 || !p.redactions.empty())
}
