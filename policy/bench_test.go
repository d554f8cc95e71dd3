package policy

import (
	"net/netip"
	"testing"
)

// The gate runs on every request of every page: these benchmarks track its
// cost (no timing assertions in tests).

func BenchmarkParseURL(b *testing.B) {
	for _, c := range []struct{ name, url string }{
		{"ascii", "https://user:pass@www.example.com:8080/a/b/c?q=1#frag"},
		{"idn", "https://bücher.example/x"},
		{"ipv4", "http://0x7f.1:3000/"},
		{"ipv6", "http://[2001:db8::1]/"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseURL(c.url, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkDecideURL(b *testing.B) {
	p, err := New(Config{
		Allow: mustRules(b, "example.com", "*.example.com", "cdn.test:443", "docs.example.org/guide/*", "127.0.0.1", "10.0.0.0/8"),
		Deny:  mustRules(b, "ads.example.com", "*.tracker.test"),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		p.DecideURL(Request, "https://img.example.com/a/b.png?x=1", "https://www.example.com/page")
	}
}

func BenchmarkDecideDial(b *testing.B) {
	p := MustNew(Config{Allow: mustRules(b, "example.com", "*.example.com")})
	addr := netip.MustParseAddr("93.184.215.14")
	b.ReportAllocs()
	for b.Loop() {
		p.DecideDial("www.example.com", 443, addr)
	}
}
