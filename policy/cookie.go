package policy

import "strings"

// anyPort is a target port that stands for every port: a cookie is sent
// to all ports of its host.
const anyPort = -1

// DecideCookie judges a cookie's domain as a browser would use it: a
// cookie is sent to every port and scheme of its host, and a domain
// cookie (".example.com") to every host under its domain too. It is
// allowed when the browser could send it to some host the policy allows:
// its own host on some port, or, for a domain cookie, a host under the
// domain that an allow rule names. Anything else (a host the policy
// denies, an invalid domain) is denied, with the reason.
func (p *Policy) DecideCookie(domain string) Decision {
	if p.unusable() {
		return nilPolicy()
	}
	sub := strings.HasPrefix(domain, ".")
	name := strings.TrimPrefix(domain, ".")
	h, err := ParseHost(name)
	if err != nil || name == "" {
		return Decision{Verdict: Deny, Rule: RuleURL, Host: name,
			Reason: "denied: the cookie domain " + quoteInput(domain) + " is not a valid host (rule url)"}
	}
	d := p.decideHost(h)
	if d.Verdict == Allow || !sub || h.Kind() != HostDomain {
		return d
	}
	for _, c := range p.namedUnder(canonicalDomain(h.String())) {
		ch, err := ParseHost(c)
		if err != nil {
			continue
		}
		if cd := p.decideHost(ch); cd.Verdict == Allow {
			cd.Reason = "allowed: the cookie's domain " + quoteInput(domain) + " covers " + c + ", which " + strings.TrimPrefix(cd.Reason, "allowed: ")
			return cd
		}
	}
	return d
}

// decideHost judges a host on any port and scheme.
func (p *Policy) decideHost(h Host) Decision {
	t := target{display: h.String(), host: h, port: anyPort}
	return p.decideTarget(Decision{Host: h.String()}, t)
}

// namedUnder lists hosts at or under domain that some allow rule covers:
// the domains it names, and a name under each wildcard that reaches into
// domain.
func (p *Policy) namedUnder(domain string) []string {
	var out []string
	under := func(s string) bool { return s == domain || strings.HasSuffix(s, "."+domain) }
	for _, l := range p.layers {
		for _, m := range l.allow {
			switch {
			case m.any:
				out = append(out, "www."+domain)
			case m.isIP:
			case m.suffix != "":
				if x := strings.TrimPrefix(m.suffix, "."); under(x) || strings.HasSuffix("."+domain, m.suffix) {
					out = append(out, "www"+m.suffix)
					if !under(x) {
						out = append(out, "www."+domain)
					}
				}
			case under(m.domain):
				out = append(out, m.domain)
			}
		}
	}
	return out
}
