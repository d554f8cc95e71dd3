package policy

import (
	"sort"
	"strings"
	"sync"
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
// Tab, Enter), keeping it. Whitespace-separated words of at least four
// characters are redacted on their own too, since a page may echo one.
type Redactions struct {
	mu      sync.RWMutex
	kept    []string // values redacted, oldest first
	run     []rune   // the current run of typing
	version int
	// cache is the replacer for version cached; nil when stale.
	cache  *strings.Replacer
	cached int
	forms  []string // every form of every value, longest first
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
// for secrets, with TypedPlaceholder.
func (r *Redactions) Redact(text string) string {
	if r == nil || text == "" {
		return text
	}
	rep, forms := r.replacer()
	if rep == nil {
		return text
	}
	// Cheap test first: most text holds none of the values.
	for _, f := range forms {
		if strings.Contains(text, f) {
			return rep.Replace(text)
		}
	}
	return text
}

// Contains reports whether text holds a value of the set in any of the
// forms Redact replaces.
func (r *Redactions) Contains(text string) bool {
	if r == nil || text == "" {
		return false
	}
	_, forms := r.replacer()
	for _, f := range forms {
		if strings.Contains(text, f) {
			return true
		}
	}
	return false
}

// empty reports whether the set redacts nothing.
func (r *Redactions) empty() bool { return r.Len() == 0 }

// replacer returns the replacer of the set's current values and their
// forms, longest first.
func (r *Redactions) replacer() (*strings.Replacer, []string) {
	r.mu.RLock()
	if r.cache != nil && r.cached == r.version {
		defer r.mu.RUnlock()
		return r.cache, r.forms
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
	if len(forms) == 0 {
		return nil, nil
	}
	sort.SliceStable(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	args := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		args = append(args, f, TypedPlaceholder)
	}
	rep := strings.NewReplacer(args...)
	r.mu.Lock()
	if r.version == version {
		r.cache, r.cached, r.forms = rep, version, forms
	}
	r.mu.Unlock()
	return rep, forms
}

// splitTyped returns the values a typed text redacts: the text (trimmed)
// and its words of at least four characters, each at least MinRedacted
// long.
func splitTyped(text string) []string {
	var out []string
	t := strings.TrimSpace(text)
	if utf8.RuneCountInString(t) >= MinRedacted {
		out = append(out, t)
	}
	for _, w := range strings.Fields(t) {
		if w != t && utf8.RuneCountInString(w) >= 4 && !containsString(out, w) {
			out = append(out, w)
		}
	}
	return out
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
