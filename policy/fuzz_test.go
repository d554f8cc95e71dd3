package policy

import (
	"net/netip"
	"testing"
)

// The fuzz targets run alone in CI, e.g.
//	go test -run='^$' -fuzz=FuzzParseURL -fuzztime=15s ./policy
// Their seed corpora are the URL vectors in testdata/.

func addURLSeeds(f *testing.F) {
	var hs []hostVector
	loadJSON(f, "whatwg-hosts.json", &hs)
	for _, v := range hs {
		f.Add(v.Input, deref2(v.Base))
	}
	var is []idnaVector
	loadJSON(f, "whatwg-idna-hosts.json", &is)
	for _, v := range is {
		f.Add(v.URL, "")
	}
	var ds []divergence
	loadJSON(f, "chromium-divergences.json", &ds)
	for _, v := range ds {
		f.Add(v.Input, deref2(v.Base))
	}
}

// FuzzParseURL checks that parsing never panics, that what parses
// serializes to an href that parses back to the same href and hostname,
// and that deciding on it never panics and never allows an unparsable or
// ambiguous URL.
func FuzzParseURL(f *testing.F) {
	addURLSeeds(f)
	p := permissive(f)
	f.Fuzz(func(t *testing.T, input, base string) {
		var b *URL
		if base != "" {
			b, _ = ParseURL(base, nil)
		}
		u, err := ParseURL(input, b)
		if err != nil {
			if d := p.DecideURL(Request, input, base); d.Verdict == Allow {
				t.Fatalf("DecideURL allowed %q (base %q) that does not parse", input, base)
			}
			return
		}
		href := u.String()
		u2, err := ParseURL(href, nil)
		if err != nil {
			t.Fatalf("ParseURL(%q) = %q, which does not parse: %v", input, href, err)
		}
		if got := u2.String(); got != href {
			t.Fatalf("ParseURL(%q) = %q, reparsed as %q", input, href, got)
		}
		if u2.Hostname() != u.Hostname() || u2.HostKind() != u.HostKind() {
			t.Fatalf("ParseURL(%q): hostname %q (%s), reparsed %q (%s)", input, u.Hostname(), u.HostKind(), u2.Hostname(), u2.HostKind())
		}
		for _, kind := range []Kind{Navigation, Request} {
			d := p.Decide(kind, u)
			if d.Verdict == Allow && u.HostInfo().ChromiumAmbiguous() != "" {
				t.Fatalf("Decide allowed %q with a Chromium-ambiguous host", href)
			}
			// The serialized form of an ambiguous host is plain ASCII
			// punycode, so only unambiguous URLs must decide the same.
			if d2 := p.Decide(kind, u2); d2.Verdict != d.Verdict && u.HostInfo().ChromiumAmbiguous() == "" {
				t.Fatalf("Decide(%q) = %s but Decide(reparsed) = %s", href, d.Verdict, d2.Verdict)
			}
		}
	})
}

// FuzzHost checks that the host parser never panics and that a parsed
// host serializes to a string that parses to the same host.
func FuzzHost(f *testing.F) {
	var is []idnaVector
	loadJSON(f, "whatwg-idna-hosts.json", &is)
	for _, v := range is {
		f.Add(v.Input)
	}
	for _, s := range []string{"127.1", "0x7f.0.0.1", "[::ffff:127.0.0.1]", "[1:0::]", "%31%32%37.0.0.1", "xn--", "a..b.", "0X7F.1.", "4294967295", "4294967296"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		h, err := ParseHost(input)
		if err != nil {
			return
		}
		s := h.String()
		h2, err := ParseHost(s)
		if err != nil {
			t.Fatalf("ParseHost(%q) = %q, which does not parse: %v", input, s, err)
		}
		if h2.String() != s || h2.Kind() != h.Kind() || h2.Addr() != h.Addr() {
			t.Fatalf("ParseHost(%q) = %q (%s), reparsed %q (%s)", input, s, h.Kind(), h2.String(), h2.Kind())
		}
		if (h.Kind() == HostIPv4 || h.Kind() == HostIPv6) != h.Addr().IsValid() {
			t.Fatalf("ParseHost(%q): kind %s with addr %v", input, h.Kind(), h.Addr())
		}
		// The host parses the same inside a URL.
		if u, err := ParseURL("http://"+s+"/", nil); err != nil || u.Hostname() != s {
			t.Fatalf("http://%s/ parses to hostname %v, %v", s, u, err)
		}
		// DecideDial agrees with the host parser and never panics.
		addr := h.Addr()
		if !addr.IsValid() {
			addr = netip.MustParseAddr("93.184.215.14")
		}
		_ = MustNew(Config{}).DecideDial(input, 443, addr)
	})
}

// FuzzParseHostRule checks that patterns never panic and that a pattern
// that parses compiles, and prints to a pattern that parses.
func FuzzParseHostRule(f *testing.F) {
	for _, s := range propPatterns {
		f.Add(s)
	}
	for _, s := range []string{"*.bücher.example:8443/docs/*", "https://[::1]:1/x", "0x7f.1", "10.0.0.0/8", "::ffff:0:0/96"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseHostRule(s)
		if err != nil {
			return
		}
		if _, err := compileHostRule(r); err != nil {
			t.Fatalf("ParseHostRule(%q) = %+v, which does not compile: %v", s, r, err)
		}
		if _, err := ParseHostRule(r.String()); err != nil {
			t.Fatalf("ParseHostRule(%q).String() = %q, which does not parse: %v", s, r.String(), err)
		}
	})
}

// FuzzLoadBytes checks that no policy file makes the loader panic.
func FuzzLoadBytes(f *testing.F) {
	f.Add([]byte("allow:\n  - example.com\n  - host: a.test\n    ports: [1]\ndeny: ['*.x']\nactions:\n  - tool: click\n    name: 'buy'\n    verdict: ask\n"))
	f.Add([]byte("secrets:\n  - name: A\n    value: v\n    hosts: [a.test]\n"))
	f.Add([]byte("{allow: [a], deny: [b], actions: [{tool: [x, y], verdict: deny, hosts: c}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := LoadBytes("fuzz.yaml", data, LoadOptions{Getenv: func(string) string { return "v" }})
		if err != nil {
			return
		}
		if _, err := New(cfg); err != nil {
			t.Fatalf("LoadBytes accepted a config New rejects: %v", err)
		}
	})
}
