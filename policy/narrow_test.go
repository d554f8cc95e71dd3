package policy

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
)

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }

var (
	propPatterns = []string{
		"*", "example.com", "*.example.com", "a.example.com", "example.org", "*.org",
		"localhost", "*.localhost", "127.0.0.1", "10.0.0.0/8", "::1", "0.0.0.0/0", "::/0",
		"example.com:8443", "example.com/docs/*", "https://example.com", "wss://*.example.com",
		"8.8.8.8", "[2606:4700::1111]", "printer.local", "evil.test",
	}
	propURLs = []string{
		"https://example.com/", "http://example.com:8443/x", "https://example.com/docs/a",
		"https://a.example.com/", "https://b.a.example.com/", "wss://a.example.com/s",
		"https://example.org/", "https://x.org/", "http://localhost:3000/", "http://app.localhost/",
		"http://127.0.0.1/", "http://2130706433/", "http://10.1.2.3/", "http://[::1]/",
		"http://8.8.8.8/", "https://[2606:4700::1111]/", "http://printer.local/", "https://evil.test/",
		"http://192.168.1.1/", "blob:https://example.com/uuid", "data:text/plain,x", "about:blank",
		"javascript:1", "https://allowed.com:pass@localhost:8080", "http://[::ffff:10.0.0.1]/",
	}
	propDials = []struct {
		host string
		port int
		addr string
	}{
		{"example.com", 443, "93.184.215.14"}, {"example.com", 443, "127.0.0.1"}, {"a.example.com", 8443, "10.0.0.1"},
		{"localhost", 80, "127.0.0.1"}, {"localhost", 80, "::1"}, {"8.8.8.8", 53, "8.8.8.8"},
		{"evil.test", 443, "1.2.3.4"}, {"example.org", 443, "fd00::1"}, {"10.1.1.1", 80, "10.1.1.1"},
	}
	propTools = []string{"click", "input_text", "upload_file", "scroll_down"}
)

func randRules(r *rand.Rand, max int) []HostRule {
	n := r.IntN(max + 1)
	var out []HostRule
	for range n {
		hr, err := ParseHostRule(propPatterns[r.IntN(len(propPatterns))])
		if err != nil {
			panic(err)
		}
		out = append(out, hr)
	}
	return out
}

func randActions(r *rand.Rand) []ActionRule {
	var out []ActionRule
	for range r.IntN(3) {
		a := ActionRule{Tools: []string{propTools[r.IntN(len(propTools))]}, Verdict: []Verdict{Deny, Ask}[r.IntN(2)]}
		if r.IntN(2) == 0 {
			a.Name = "(?i)buy"
		}
		if r.IntN(3) == 0 {
			a.Hosts = []HostRule{{Host: "*.example.com"}}
		}
		out = append(out, a)
	}
	return out
}

func randConfig(r *rand.Rand) Config {
	return Config{Allow: randRules(r, 4), Ask: randRules(r, 2), Deny: randRules(r, 2), Actions: randActions(r)}
}

// TestNarrowNeverWidens checks on random policies that Narrow is exactly
// the intersection, and that Restrict never allows what the base denies.
func TestNarrowNeverWidens(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		cp, cq := randConfig(r), randConfig(r)
		p, q := MustNew(cp), MustNew(cq)
		n := p.Narrow(q)
		rs, err := p.Restrict(Restriction{Allow: randRules(r, 3), Ask: randRules(r, 1), Deny: randRules(r, 2), Actions: randActions(r)})
		if err != nil {
			t.Fatal(err)
		}
		where := func() string { return fmt.Sprintf("case %d: P=%v Q=%v", i, cp, cq) }
		for _, u := range propURLs {
			for _, kind := range []Kind{Navigation, Request} {
				dp, dq, dn, dr := p.DecideURL(kind, u, ""), q.DecideURL(kind, u, ""), n.DecideURL(kind, u, ""), rs.DecideURL(kind, u, "")
				if want := strictest(dp.Verdict, dq.Verdict); dn.Verdict != want {
					t.Fatalf("%s: %s %s: P %s, Q %s, Narrow %s (%s), want %s", where(), kind, u, dp.Verdict, dq.Verdict, dn.Verdict, dn.Reason, want)
				}
				if stricter(dp.Verdict, dr.Verdict) {
					t.Fatalf("%s: %s %s: Restrict %s is laxer than P %s (%s)", where(), kind, u, dr.Verdict, dp.Verdict, dp.Reason)
				}
			}
		}
		for _, dl := range propDials {
			a := mustAddr(dl.addr)
			dp, dq, dn, dr := p.DecideDial(dl.host, dl.port, a), q.DecideDial(dl.host, dl.port, a), n.DecideDial(dl.host, dl.port, a), rs.DecideDial(dl.host, dl.port, a)
			if want := strictest(dp.Verdict, dq.Verdict); dn.Verdict != want {
				t.Fatalf("%s: dial %v: P %s, Q %s, Narrow %s, want %s", where(), dl, dp.Verdict, dq.Verdict, dn.Verdict, want)
			}
			if stricter(dp.Verdict, dr.Verdict) {
				t.Fatalf("%s: dial %v: Restrict %s is laxer than P %s", where(), dl, dr.Verdict, dp.Verdict)
			}
		}
		for _, tool := range propTools {
			for _, target := range []*Element{nil, {Role: "button", Name: "Buy now"}, {Role: "link", Name: "Home"}} {
				for _, page := range []string{"", "https://shop.example.com/", "https://example.org/"} {
					a := Action{Tool: tool, URL: page, Target: target}
					vp, vq, vn, vr := p.DecideAction(a).Verdict, q.DecideAction(a).Verdict, n.DecideAction(a).Verdict, rs.DecideAction(a).Verdict
					if want := strictest(vp, vq); vn != want {
						t.Fatalf("%s: action %+v: P %s, Q %s, Narrow %s, want %s", where(), a, vp, vq, vn, want)
					}
					if stricter(vp, vr) {
						t.Fatalf("%s: action %+v: Restrict %s is laxer than P %s", where(), a, vr, vp)
					}
				}
			}
		}
	}
}

func strictest(a, b Verdict) Verdict {
	if stricter(b, a) {
		return b
	}
	return a
}

func TestRestrict(t *testing.T) {
	base, err := New(Config{Allow: mustRules(t, "*", "127.0.0.1", "10.0.0.0/8")})
	if err != nil {
		t.Fatal(err)
	}
	// Extra denies only: the base's private allowances still hold.
	r, err := base.Restrict(Restriction{Deny: mustRules(t, "evil.test")})
	if err != nil {
		t.Fatal(err)
	}
	runURLCases(t, r, []urlCase{
		{Navigation, "http://127.0.0.1/", "", Allow, RuleAllow, ""},
		{Navigation, "http://10.9.9.9/", "", Allow, RuleAllow, ""},
		{Navigation, "https://example.com/", "", Allow, RuleAllow, ""},
		{Navigation, "https://evil.test/", "", Deny, RuleDeny, ""},
	})
	// An allow list intersects.
	r, err = base.Restrict(Restriction{Allow: mustRules(t, "127.0.0.1", "192.168.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	runURLCases(t, r, []urlCase{
		{Navigation, "http://127.0.0.1/", "", Allow, RuleAllow, ""},
		{Navigation, "http://192.168.0.1/", "", Deny, RulePrivateNetworks, ""},
		{Navigation, "https://example.com/", "", Deny, RuleAllow, ""},
	})
	// An empty restriction changes nothing.
	r, err = base.Restrict(Restriction{})
	if err != nil {
		t.Fatal(err)
	}
	runURLCases(t, r, []urlCase{
		{Navigation, "http://127.0.0.1/", "", Allow, RuleAllow, ""},
		{Navigation, "http://192.168.0.1/", "", Deny, RulePrivateNetworks, ""},
	})
	if _, err := base.Restrict(Restriction{Allow: []HostRule{{Host: "bad host"}}}); err == nil {
		t.Error("Restrict with a bad pattern succeeded")
	}
}
