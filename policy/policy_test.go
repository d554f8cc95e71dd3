package policy

import (
	"net/netip"
	"strings"
	"testing"
)

func mustRules(t testing.TB, pats ...string) []HostRule {
	t.Helper()
	var out []HostRule
	for _, p := range pats {
		r, err := ParseHostRule(p)
		if err != nil {
			t.Fatalf("ParseHostRule(%q): %v", p, err)
		}
		out = append(out, r)
	}
	return out
}

func mustPolicy(t testing.TB, allow, deny []string) *Policy {
	t.Helper()
	p, err := New(Config{Allow: mustRules(t, allow...), Deny: mustRules(t, deny...)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type urlCase struct {
	kind    Kind
	url     string
	base    string
	verdict Verdict
	rule    string
	host    string // expected Decision.Host when set
}

func runURLCases(t *testing.T, p *Policy, cases []urlCase) {
	t.Helper()
	for _, c := range cases {
		d := p.DecideURL(c.kind, c.url, c.base)
		if d.Verdict != c.verdict || (c.rule != "" && d.Rule != c.rule) {
			t.Errorf("DecideURL(%s, %+q, %q) = %s rule %q (%s), want %s rule %q",
				c.kind, c.url, c.base, d.Verdict, d.Rule, d.Reason, c.verdict, c.rule)
		}
		if c.host != "" && d.Host != c.host {
			t.Errorf("DecideURL(%s, %+q).Host = %q, want %q", c.kind, c.url, d.Host, c.host)
		}
		if !strings.Contains(d.Reason, "(rule "+d.Rule+")") && d.Verdict == Deny {
			t.Errorf("DecideURL(%s, %+q): reason %q does not name rule %q", c.kind, c.url, d.Reason, d.Rule)
		}
	}
}

func TestDefaultPolicy(t *testing.T) {
	p := MustNew(Config{})
	N, R := Navigation, Request
	runURLCases(t, p, []urlCase{
		{N, "https://example.com/", "", Allow, RuleAllow, "example.com"},
		{N, "HTTP://EXAMPLE.COM:80/x", "", Allow, RuleAllow, "example.com"},
		{N, "https://bücher.example/", "", Allow, RuleAllow, "xn--bcher-kva.example"},
		{N, "https://8.8.8.8/", "", Allow, RuleAllow, "8.8.8.8"},
		{N, "https://[2606:4700::1111]/", "", Allow, RuleAllow, "[2606:4700::1111]"},
		// Loopback in every form.
		{N, "http://127.0.0.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://2130706433/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://0x7f000001/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://0177.0.0.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://127.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://0x7f.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://127.0.0.1./", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://%31%32%37.0.0.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://１２７.０.０.１/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://[::ffff:127.0.0.1]/", "", Deny, RulePrivateNetworks, "[::ffff:7f00:1]"},
		{N, "http://[::1]/", "", Deny, RulePrivateNetworks, "[::1]"},
		{N, "http://[64:ff9b::10.0.0.1]/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://[2002:a9fe:a9fe::]/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://localhost:8080/", "", Deny, RulePrivateNetworks, "localhost"},
		{N, "http://LOCALHOST./", "", Deny, RulePrivateNetworks, "localhost."},
		{N, "http://app.localhost/", "", Deny, RulePrivateNetworks, "app.localhost"},
		{N, "http://ip6-localhost/", "", Deny, RulePrivateNetworks, "ip6-localhost"},
		{N, "http://printer.local/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://metadata.google.internal/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://169.254.169.254/latest/meta-data/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://[fd00:ec2::254]/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://10.1.2.3/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://192.168.1.1/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://172.31.0.1/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://100.64.0.1/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://0.0.0.0/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://0/", "", Deny, RulePrivateNetworks, "0.0.0.0"},
		{N, "http://255.255.255.255/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://224.0.0.1/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://[fe80::1]/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://[fc00::1]/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://[::]/", "", Deny, RulePrivateNetworks, ""},
		// CVE-2025-47241: the host is localhost, not allowed.com.
		{N, "https://allowed.com:pass@localhost:8080", "", Deny, RulePrivateNetworks, "localhost"},
		{N, "https://allowed.com@127.0.0.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http://a@b@127.0.0.1/", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "http:\\\\127.0.0.1\\x", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, " \thttp://127.0.\n0.1/ ", "", Deny, RulePrivateNetworks, "127.0.0.1"},
		// Schemes.
		{N, "about:blank", "", Allow, RuleSchemes, ""},
		{R, "about:srcdoc", "", Allow, RuleSchemes, ""},
		{N, "about:config", "", Deny, RuleSchemes, ""},
		{N, "data:text/html,<script>alert(1)</script>", "", Deny, RuleSchemes, ""},
		{R, "data:image/png;base64,AAAA", "", Allow, RuleSchemes, ""},
		{N, "javascript:alert(1)", "", Deny, RuleSchemes, ""},
		{R, "javascript:alert(1)", "", Deny, RuleSchemes, ""},
		{N, "file:///etc/passwd", "", Deny, RuleSchemes, ""},
		{R, "file:///etc/passwd", "", Deny, RuleSchemes, ""},
		{N, "chrome://settings", "", Deny, RuleSchemes, ""},
		{N, "view-source:https://example.com/", "", Deny, RuleSchemes, ""},
		{N, "ftp://example.com/", "", Deny, RuleSchemes, ""},
		{N, "wss://example.com/socket", "", Deny, RuleSchemes, ""},
		{R, "wss://example.com/socket", "", Allow, RuleAllow, ""},
		{R, "ws://127.0.0.1:9222/devtools", "", Deny, RulePrivateNetworks, ""},
		{N, "blob:https://example.com/5a0c", "", Allow, RuleAllow, ""},
		{R, "blob:http://localhost/5a0c", "", Deny, RulePrivateNetworks, ""},
		{N, "blob:null/5a0c", "", Deny, RuleSchemes, ""},
		{N, "filesystem:https://example.com/temporary/x", "", Deny, RuleSchemes, ""},
		// Relative URLs resolve like links on the base page.
		{N, "/admin", "http://127.0.0.1:8080/", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "//127.0.0.1/", "https://example.com/", Deny, RulePrivateNetworks, "127.0.0.1"},
		{N, "page.html", "https://example.com/dir/", Allow, RuleAllow, "example.com"},
		{N, "\\\\localhost\\x", "https://example.com/", Deny, RulePrivateNetworks, "localhost"},
		// Not URLs.
		{N, "", "", Deny, RuleURL, ""},
		{N, "/relative", "", Deny, RuleURL, ""},
		{N, "http://", "", Deny, RuleURL, ""},
		{N, "http://exa mple.com/", "", Deny, RuleURL, ""},
		{N, "http://999.1.1.1/", "", Deny, RuleURL, ""},
		{N, "http://[::1/", "", Deny, RuleURL, ""},
		{N, "x", "not a base", Deny, RuleURL, ""},
		// Chromium reads '*' differently.
		{R, "http://*.example.com/", "", Deny, RuleChromiumDivergence, ""},
	})
}

func TestAllowAndDenyLists(t *testing.T) {
	p := mustPolicy(t,
		[]string{"example.com", "*.example.org", "docs.example.net/guide/*", "api.example.net:8443", "https://secure.example.net", "bücher.example", "0x7f.1", "10.0.0.0/8", "[::1]"},
		[]string{"ads.example.org", "example.com/admin/*"})
	N, R := Navigation, Request
	runURLCases(t, p, []urlCase{
		{N, "https://example.com/", "", Allow, RuleAllow, ""},
		{N, "https://EXAMPLE.com./", "", Allow, RuleAllow, ""},
		{N, "https://www.example.com/", "", Deny, RuleAllow, ""},
		// *.example.org: subdomains, not the bare domain.
		{N, "https://a.example.org/", "", Allow, RuleAllow, ""},
		{N, "https://a.b.example.org/", "", Allow, RuleAllow, ""},
		{N, "https://example.org/", "", Deny, RuleAllow, ""},
		{N, "https://evilexample.org/", "", Deny, RuleAllow, ""},
		{N, "https://example.org.evil.test/", "", Deny, RuleAllow, ""},
		// Deny wins.
		{N, "https://ads.example.org/", "", Deny, RuleDeny, ""},
		{N, "https://ADS.example.org./x", "", Deny, RuleDeny, ""},
		{N, "https://example.com/admin/users", "", Deny, RuleDeny, ""},
		{N, "https://example.com/%61dmin/users", "", Deny, RuleDeny, ""},
		{N, "https://example.com/ADMIN/users", "", Deny, RuleDeny, ""},
		{N, "https://example.com/x/../admin/users", "", Deny, RuleDeny, ""},
		{N, "https://example.com/x/%2e%2e/admin/users", "", Deny, RuleDeny, ""},
		// Paths.
		{N, "https://docs.example.net/guide/intro", "", Allow, RuleAllow, ""},
		{N, "https://docs.example.net/guide/", "", Allow, RuleAllow, ""},
		{N, "https://docs.example.net/guide", "", Deny, RuleAllow, ""},
		{N, "https://docs.example.net/other", "", Deny, RuleAllow, ""},
		{N, "https://docs.example.net/guide/..%2fother", "", Deny, RuleAllow, ""},
		{N, "https://docs.example.net/guide/../other", "", Deny, RuleAllow, ""},
		// Ports.
		{N, "https://api.example.net:8443/", "", Allow, RuleAllow, ""},
		{N, "https://api.example.net/", "", Deny, RuleAllow, ""},
		// Schemes.
		{N, "https://secure.example.net/", "", Allow, RuleAllow, ""},
		{N, "http://secure.example.net/", "", Deny, RuleAllow, ""},
		{R, "wss://secure.example.net/", "", Deny, RuleAllow, ""},
		// IDN patterns are compared in punycode.
		{N, "https://xn--bcher-kva.example/", "", Allow, RuleAllow, ""},
		{N, "https://BÜCHER.example/", "", Allow, RuleAllow, ""},
		// IP entries allow private addresses in every spelling.
		{N, "http://127.0.0.1:3000/", "", Allow, RuleAllow, ""},
		{N, "http://2130706433/", "", Allow, RuleAllow, ""},
		{N, "http://[::ffff:7f00:1]/", "", Allow, RuleAllow, ""},
		{N, "http://127.0.0.2/", "", Deny, RulePrivateNetworks, ""},
		{N, "http://10.200.0.1/", "", Allow, RuleAllow, ""},
		{N, "http://[::1]:8080/", "", Allow, RuleAllow, ""},
		// An IP entry does not allow names.
		{N, "http://localhost/", "", Deny, RulePrivateNetworks, ""},
		// Not listed.
		{N, "https://evil.test/", "", Deny, RuleAllow, ""},
		{N, "https://8.8.8.8/", "", Deny, RuleAllow, ""},
	})
}

func TestAskList(t *testing.T) {
	p, err := New(Config{Allow: mustRules(t, "example.com"), Ask: mustRules(t, "*.bank.test", "192.168.1.1")})
	if err != nil {
		t.Fatal(err)
	}
	runURLCases(t, p, []urlCase{
		{Navigation, "https://example.com/", "", Allow, RuleAllow, ""},
		{Navigation, "https://www.bank.test/", "", Ask, RuleAsk, ""},
		{Request, "https://api.bank.test/", "", Ask, RuleAsk, ""},
		{Navigation, "http://192.168.1.1/", "", Ask, RuleAsk, ""},
		{Navigation, "https://evil.test/", "", Deny, RuleAllow, ""},
	})
	d := p.DecideURL(Navigation, "https://www.bank.test/", "")
	if want := `approval needed: www.bank.test matches ask rule "*.bank.test" (rule ask)`; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	if d := p.DecideDial("www.bank.test", 443, mustAddr("93.184.215.14")); d.Verdict != Ask {
		t.Errorf("DecideDial on an ask host = %s", d.Verdict)
	}
	// With no allow list, ask entries only add approval.
	p = MustNew(Config{Ask: mustRules(t, "*.bank.test")})
	runURLCases(t, p, []urlCase{
		{Navigation, "https://example.com/", "", Allow, RuleAllow, ""},
		{Navigation, "https://www.bank.test/", "", Ask, RuleAsk, ""},
	})
}

func TestWildcardAndLocalhost(t *testing.T) {
	// "*" is any public host; private still needs an explicit entry.
	p := mustPolicy(t, []string{"*", "localhost"}, nil)
	runURLCases(t, p, []urlCase{
		{Navigation, "https://anything.test/", "", Allow, RuleAllow, ""},
		{Navigation, "http://localhost:8080/", "", Allow, RuleAllow, ""},
		{Navigation, "http://localhost./", "", Allow, RuleAllow, ""},
		{Navigation, "http://app.localhost/", "", Deny, RulePrivateNetworks, ""},
		{Navigation, "http://127.0.0.1/", "", Deny, RulePrivateNetworks, ""},
	})
	p = mustPolicy(t, []string{"*.localhost"}, nil)
	runURLCases(t, p, []urlCase{
		{Navigation, "http://app.localhost/", "", Allow, RuleAllow, ""},
		{Navigation, "http://localhost/", "", Deny, RulePrivateNetworks, ""},
	})
}

func TestReasons(t *testing.T) {
	p := mustPolicy(t, []string{"example.com:443"}, nil)
	for _, c := range []struct{ url, want string }{
		{"https://evil.test/", "denied: evil.test is not in the allowlist (rule allow)"},
		{"http://127.0.0.1/", "denied: 127.0.0.1 is a private address (loopback) (rule private-networks)"},
		{"file:///etc/passwd", `denied: scheme "file" is not allowed for navigation (rule schemes)`},
		{"https://example.com:8443/", "denied: https://example.com:8443 is not in the allowlist: example.com is listed only for other ports, paths or schemes (rule allow)"},
	} {
		if got := p.DecideURL(Navigation, c.url, "").Reason; got != c.want {
			t.Errorf("reason for %s = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestDecideDial(t *testing.T) {
	p := mustPolicy(t, []string{"example.com", "localhost", "internal.example.com", "10.1.0.0/16", "*.cdn.test:443"}, []string{"203.0.113.0/24"})
	a := netip.MustParseAddr
	for _, c := range []struct {
		host    string
		port    int
		addr    netip.Addr
		verdict Verdict
		rule    string
	}{
		{"example.com", 443, a("93.184.215.14"), Allow, RuleAllow},
		{"EXAMPLE.COM.", 443, a("93.184.215.14"), Allow, RuleAllow},
		// DNS rebinding: an allowed name resolving to a private address.
		{"example.com", 443, a("127.0.0.1"), Deny, RulePrivateNetworks},
		{"example.com", 443, a("169.254.169.254"), Deny, RulePrivateNetworks},
		{"example.com", 443, a("::ffff:10.0.0.1"), Deny, RulePrivateNetworks},
		{"example.com", 443, a("fd00::1"), Deny, RulePrivateNetworks},
		// ...unless an IP entry covers the address.
		{"internal.example.com", 80, a("10.1.2.3"), Allow, RuleAllow},
		{"internal.example.com", 80, a("10.2.0.1"), Deny, RulePrivateNetworks},
		// A deny CIDR applies to the resolved address.
		{"example.com", 443, a("203.0.113.9"), Deny, RuleDeny},
		// localhost named in the allowlist may reach loopback, nothing else.
		{"localhost", 8080, a("127.0.0.1"), Allow, RuleAllow},
		{"localhost", 8080, a("::1"), Allow, RuleAllow},
		{"localhost", 8080, a("192.168.1.1"), Deny, RulePrivateNetworks},
		// IP hosts must dial their own address.
		{"10.1.0.5", 22, a("10.1.0.5"), Allow, RuleAllow},
		{"10.1.0.5", 22, a("10.1.0.6"), Deny, RuleURL},
		{"::ffff:10.1.0.5", 22, a("10.1.0.5"), Allow, RuleAllow},
		{"0x0a.1.0.5", 22, a("10.1.0.5"), Allow, RuleAllow},
		// Ports in rules apply.
		{"img.cdn.test", 443, a("198.51.101.1"), Allow, RuleAllow},
		{"img.cdn.test", 80, a("198.51.101.1"), Deny, RuleAllow},
		// Not listed, bad input.
		{"evil.test", 443, a("93.184.215.14"), Deny, RuleAllow},
		{"example.com", 0, a("93.184.215.14"), Deny, RuleURL},
		{"example.com", 443, netip.Addr{}, Deny, RuleURL},
		{"exa mple.com", 443, a("93.184.215.14"), Deny, RuleURL},
		{"*.example.com", 443, a("93.184.215.14"), Deny, RuleChromiumDivergence},
	} {
		d := p.DecideDial(c.host, c.port, c.addr)
		if d.Verdict != c.verdict || d.Rule != c.rule {
			t.Errorf("DecideDial(%q, %d, %v) = %s rule %q (%s), want %s rule %q", c.host, c.port, c.addr, d.Verdict, d.Rule, d.Reason, c.verdict, c.rule)
		}
	}
	// Deny rules limited to paths or schemes cannot be checked at dial
	// time and do not deny the whole host.
	q := mustPolicy(t, []string{"example.com"}, []string{"example.com/admin/*", "http://example.com"})
	if d := q.DecideDial("example.com", 443, a("93.184.215.14")); d.Verdict != Allow {
		t.Errorf("DecideDial with path/scheme deny rules = %s (%s)", d.Verdict, d.Reason)
	}
	if d := q.DecideURL(Navigation, "blob:https://example.com/uuid", ""); d.Verdict != Allow {
		t.Errorf("blob with a path deny rule = %s (%s)", d.Verdict, d.Reason)
	}
	if d := q.DecideURL(Navigation, "http://example.com/", ""); d.Verdict != Deny || d.Rule != RuleDeny {
		t.Errorf("scheme deny rule = %s (%s)", d.Verdict, d.Reason)
	}

	// The default policy: public only.
	def := MustNew(Config{})
	if d := def.DecideDial("example.com", 443, a("93.184.215.14")); d.Verdict != Allow {
		t.Errorf("default DecideDial public = %v (%s)", d.Verdict, d.Reason)
	}
	if d := def.DecideDial("example.com", 443, a("127.0.0.1")); d.Verdict != Deny || d.Rule != RulePrivateNetworks {
		t.Errorf("default DecideDial rebinding = %v %s (%s)", d.Verdict, d.Rule, d.Reason)
	}
	if d := def.DecideDial("localhost", 80, a("127.0.0.1")); d.Verdict != Deny {
		t.Errorf("default DecideDial localhost = %v (%s)", d.Verdict, d.Reason)
	}
}

func TestPrivateAddress(t *testing.T) {
	for _, c := range []struct {
		addr    string
		private bool
	}{
		{"127.0.0.1", true}, {"127.255.255.254", true}, {"10.0.0.1", true}, {"172.16.0.1", true},
		{"172.32.0.1", false}, {"192.168.0.1", true}, {"169.254.1.1", true}, {"169.254.169.254", true},
		{"100.64.0.1", true}, {"100.128.0.1", false}, {"0.0.0.0", true}, {"0.1.2.3", true},
		{"224.0.0.251", true}, {"255.255.255.255", true}, {"8.8.8.8", false}, {"1.1.1.1", false},
		{"::", true}, {"::1", true}, {"fe80::1", true}, {"fc00::1", true}, {"fd12:3456::1", true},
		{"fd00:ec2::254", true}, {"ff02::1", true}, {"2001:db8::1", true},
		{"::ffff:127.0.0.1", true}, {"::ffff:8.8.8.8", false}, {"64:ff9b::7f00:1", true},
		{"64:ff9b::808:808", false}, {"2002:7f00:1::", true}, {"2002:808:808::", false},
		{"::127.0.0.1", true}, {"2606:4700::1111", false}, {"fe80::1%eth0", true},
	} {
		_, got := PrivateAddress(netip.MustParseAddr(c.addr))
		if got != c.private {
			t.Errorf("PrivateAddress(%s) = %v, want %v", c.addr, got, c.private)
		}
	}
	if _, p := PrivateAddress(netip.Addr{}); !p {
		t.Error("PrivateAddress(invalid) = false, want true (fail closed)")
	}
}

func TestParseHostRule(t *testing.T) {
	for _, c := range []struct {
		in   string
		want HostRule
	}{
		{"example.com", HostRule{Host: "example.com"}},
		{"*", HostRule{Host: "*"}},
		{"*.example.com:8443/docs/*", HostRule{Host: "*.example.com", Ports: []int{8443}, Paths: []string{"/docs/*"}}},
		{"https://example.com", HostRule{Host: "example.com", Schemes: []string{"https"}}},
		{"10.0.0.0/8", HostRule{Host: "10.0.0.0/8"}},
		{"::1", HostRule{Host: "::1"}},
		{"[::1]:8080", HostRule{Host: "[::1]", Ports: []int{8080}}},
		{"127.0.0.1/x", HostRule{Host: "127.0.0.1", Paths: []string{"/x"}}},
	} {
		got, err := ParseHostRule(c.in)
		if err != nil {
			t.Errorf("ParseHostRule(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.want.String() {
			t.Errorf("ParseHostRule(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, bad := range []string{
		"", "exa mple.com", "user@example.com", "example.com:", "example.com:99999", "example.com:0",
		"ex*ample.com", "*example.com", "*.*.example.com", "example.com?q", "example.com#f",
		"ftp://example.com", "example.com/a*b", "[::1", "a,b", "*.10.0.0.1", "example.com:80x",
	} {
		if r, err := ParseHostRule(bad); err == nil {
			t.Errorf("ParseHostRule(%q) = %v, want error", bad, r)
		}
	}
}

func TestPatternNormalization(t *testing.T) {
	// Different spellings of one host compile to the same matcher.
	same := [][]string{
		{"127.0.0.1", "0x7f.1", "2130706433", "0177.0.0.1", "127.1", "[::ffff:127.0.0.1]", "::ffff:7f00:1"},
		{"xn--bcher-kva.example", "bücher.example", "BÜCHER.EXAMPLE", "xn--bcher-kva.example."},
		{"::1", "[::1]", "[0:0:0:0:0:0:0:1]"},
	}
	for _, group := range same {
		var first *hostMatcher
		for _, s := range group {
			r, err := ParseHostRule(s)
			if err != nil {
				t.Fatalf("ParseHostRule(%q): %v", s, err)
			}
			m, err := compileHostRule(r)
			if err != nil {
				t.Fatalf("compile %q: %v", s, err)
			}
			if first == nil {
				first = m
				continue
			}
			if m.domain != first.domain || m.prefix != first.prefix || m.isIP != first.isIP {
				t.Errorf("%q compiles to %+v, want the same as %q: %+v", s, m, group[0], first)
			}
		}
	}
}
