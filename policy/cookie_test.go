package policy

import "testing"

func TestDecideCookie(t *testing.T) {
	p := mustPolicy(t, []string{"app.example.com", "127.0.0.1:8080", "*.shop.test", "news.test"}, []string{"ads.news.test", "news.test:9000"})
	for _, c := range []struct {
		domain string
		want   Verdict
	}{
		{"app.example.com", Allow},
		{".app.example.com", Allow},
		{".example.com", Allow}, // sent to app.example.com, which is allowed
		{"example.com", Deny},   // host-only: sent to example.com alone
		{"evil.test", Deny},
		{".evil.test", Deny},
		{"127.0.0.1", Allow}, // allowed on one port, and cookies ignore ports
		{"127.0.0.2", Deny},
		{"a.shop.test", Allow},
		{".shop.test", Allow}, // covers hosts the wildcard allows
		{"shop.test", Deny},
		{"news.test", Allow}, // a deny rule for one port does not deny the host
		{"ads.news.test", Deny},
		{".ads.news.test", Deny},
		{"", Deny},
		{".", Deny},
		{"exa mple.com", Deny},
	} {
		d := p.DecideCookie(c.domain)
		if d.Verdict != c.want {
			t.Errorf("DecideCookie(%q) = %v (%s), want %v", c.domain, d.Verdict, d.Reason, c.want)
		}
		if d.Reason == "" {
			t.Errorf("DecideCookie(%q) has no reason", c.domain)
		}
	}
	var nilPol *Policy
	if d := nilPol.DecideCookie("example.com"); d.Verdict != Deny {
		t.Errorf("a nil policy allowed a cookie: %+v", d)
	}
}

func FuzzDecideCookie(f *testing.F) {
	p := mustPolicy(f, []string{"app.example.com", "*.shop.test"}, []string{"x.shop.test"})
	for _, s := range []string{"app.example.com", ".example.com", ".shop.test", "", ".", "..", "[::1]", "xn--", ".*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, domain string) {
		d := p.DecideCookie(domain)
		if d.Reason == "" {
			t.Fatalf("no reason for %q", domain)
		}
	})
}
