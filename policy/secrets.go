package policy

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Placeholder returns the text the model uses for the secret name:
// "<secret:NAME>".
func Placeholder(name string) string { return "<secret:" + name + ">" }

var placeholderRE = regexp.MustCompile(`<secret:([A-Za-z_][A-Za-z0-9_]*)>`)

type secret struct {
	name  string
	value string
	forms []string // the value's encodings, see secretForms
	hosts []*hostMatcher
}

func compileSecret(s Secret) (*secret, error) {
	if !secretName.MatchString(s.Name) {
		return nil, fmt.Errorf("%q is not a valid secret name (letters, digits and '_', not starting with a digit)", s.Name)
	}
	if s.Value == "" {
		return nil, fmt.Errorf("secret %s has no value", s.Name)
	}
	if len(s.Hosts) == 0 {
		return nil, fmt.Errorf("secret %s needs hosts (where it may be used)", s.Name)
	}
	cs := &secret{name: s.Name, value: string(s.Value), forms: secretForms(string(s.Value))}
	for i, h := range s.Hosts {
		m, err := compileHostRule(h)
		if err != nil {
			return nil, fmt.Errorf("secret %s: hosts[%d]: %w", s.Name, i, err)
		}
		if m.any {
			return nil, fmt.Errorf("secret %s: hosts[%d]: a secret needs named hosts, not \"*\"", s.Name, i)
		}
		if len(m.ports) > 0 || len(m.paths) > 0 || len(m.schemes) > 0 {
			return nil, fmt.Errorf("secret %s: hosts[%d]: secret hosts take a host only, no port, path or scheme", s.Name, i)
		}
		cs.hosts = append(cs.hosts, m)
	}
	return cs, nil
}

// HasPlaceholder reports whether text holds a secret placeholder, so that
// typing it would type a secret's value.
func HasPlaceholder(text string) bool { return placeholderRE.MatchString(text) }

// SecretNames returns the names of the policy's secrets, sorted, for
// telling the model which placeholders exist.
func (p *Policy) SecretNames() []string {
	if p == nil {
		return nil
	}
	return p.secretNames()
}

func (p Policy) secretNames() []string {
	var names []string
	for _, s := range p.secrets {
		names = append(names, s.name)
	}
	sort.Strings(names)
	return names
}

// SecretError reports a placeholder that may not be substituted. It never
// holds the secret's value.
type SecretError struct {
	Name   string
	Host   string
	Reason string
}

func (e *SecretError) Error() string { return e.Reason }

// Is makes errors.Is(err, ErrDenied) hold.
func (e *SecretError) Is(target error) bool { return target == ErrDenied }

// Substitute replaces each <secret:NAME> placeholder in text with the
// secret's value, but only if host (where the text will be typed or sent)
// matches the secret's host patterns. Otherwise it returns an error naming
// the secret and the host, and no value. Text without placeholders is
// returned unchanged.
func (p *Policy) Substitute(text, host string) (string, error) {
	matches := placeholderRE.FindAllStringSubmatchIndex(text, -1)
	if len(matches) == 0 {
		return text, nil
	}
	var ref hostRef
	hostOK := false
	if h, err := ParseHost(host); err == nil && h.ChromiumAmbiguous() == "" &&
		(h.Kind() == HostDomain || h.Kind() == HostIPv4 || h.Kind() == HostIPv6) {
		ref, hostOK = refFromHost(h), true
		host = h.String()
	}
	var sb strings.Builder
	last := 0
	for _, m := range matches {
		name := text[m[2]:m[3]]
		var s *secret
		if p != nil {
			for _, c := range p.secrets {
				if c.name == name {
					s = c
					break
				}
			}
		}
		if s == nil {
			return "", &SecretError{Name: name, Host: host, Reason: fmt.Sprintf("unknown secret %s (known: %s)", name, strings.Join(p.SecretNames(), ", "))}
		}
		ok := false
		if hostOK {
			for _, hm := range s.hosts {
				if hm.matchName(ref) {
					ok = true
					break
				}
			}
		}
		if !ok {
			shown := host
			if !hostOK {
				shown = "an invalid host " + quoteInput(host)
			}
			return "", &SecretError{Name: name, Host: host, Reason: fmt.Sprintf("secret %s may not be used on %s", name, shown)}
		}
		sb.WriteString(text[last:m[0]])
		sb.WriteString(s.value)
		last = m[1]
	}
	sb.WriteString(text[last:])
	return sb.String(), nil
}

// Redact replaces every occurrence of a secret's value in text (also in
// its JSON, HTML, URL, form and base64 encodings, see secretForms) with the
// secret's placeholder, and the values of the policy's redaction set (see
// WithRedactions) with TypedPlaceholder. Use it on everything the model or
// the journal sees.
func (p *Policy) Redact(text string) string {
	if p == nil || text == "" {
		return text
	}
	return p.redactions.Redact(p.RedactSecrets(text))
}

// RedactSecrets is Redact without the redaction set: the secrets' values
// are replaced, what a person typed is left alone. It is for text the
// model wrote (a request for help), whose words are its own: the model
// never saw what a person typed, so a word of it that a person also
// typed is the model's.
func (p *Policy) RedactSecrets(text string) string {
	if p == nil || text == "" || len(p.secrets) == 0 {
		return text
	}
	type pair struct{ value, placeholder string }
	var pairs []pair
	for _, s := range p.secrets {
		ph := Placeholder(s.name)
		for _, f := range s.forms {
			pairs = append(pairs, pair{f, ph})
		}
	}
	// Longest first, so a value that contains another is replaced whole.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].value) > len(pairs[j].value) })
	args := make([]string, 0, 2*len(pairs))
	for _, pr := range pairs {
		args = append(args, pr.value, pr.placeholder)
	}
	return strings.NewReplacer(args...).Replace(text)
}
