package policy_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/surfkit/surf/policy"
)

func ExamplePolicy_DecideURL() {
	p, err := policy.New(policy.Config{
		Allow: []policy.HostRule{{Host: "example.com"}, {Host: "*.example.com"}, {Host: "127.0.0.1"}},
		Deny:  []policy.HostRule{{Host: "ads.example.com"}},
	})
	if err != nil {
		panic(err)
	}
	for _, u := range []string{
		"https://www.example.com/",
		"https://ads.example.com/banner.js",
		"https://evil.test/",
		"https://allowed.com:pass@localhost:8080", // the host is localhost
		"http://0x7f000001:3000/",                 // 127.0.0.1, allowed by IP
		"file:///etc/passwd",
	} {
		d := p.DecideURL(policy.Navigation, u, "")
		fmt.Printf("%-5s %s\n", d.Verdict, d.Reason)
	}
	// Output:
	// allow allowed: www.example.com matches allow rule "*.example.com"
	// deny  denied: ads.example.com matches deny rule "ads.example.com" (rule deny)
	// deny  denied: evil.test is not in the allowlist (rule allow)
	// deny  denied: localhost is a private host (loopback name) (rule private-networks)
	// allow allowed: 127.0.0.1:3000 matches allow rule "127.0.0.1"
	// deny  denied: scheme "file" is not allowed for navigation (rule schemes)
}

func ExamplePolicy_Decide() {
	p, _ := policy.New(policy.Config{}) // the default: public hosts only
	base, _ := policy.ParseURL("https://example.com/app/", nil)
	for _, href := range []string{"page2.html", "//169.254.169.254/latest/meta-data/", "\\\\localhost\\admin"} {
		u, err := policy.ParseURL(href, base)
		if err != nil {
			panic(err)
		}
		d := p.Decide(policy.Request, u)
		fmt.Println(d.Verdict, d.Host, d.Rule)
	}
	// Output:
	// allow example.com allow
	// deny 169.254.169.254 private-networks
	// deny localhost private-networks
}

func ExamplePolicy_DecideDial() {
	p, _ := policy.New(policy.Config{Allow: []policy.HostRule{{Host: "api.example.com"}}})
	// The egress proxy resolved api.example.com itself; a rebinding to a
	// private address is denied.
	for _, addr := range []string{"93.184.215.14", "10.0.0.7"} {
		d := p.DecideDial("api.example.com", 443, mustParseAddr(addr))
		fmt.Println(d.Verdict, d.Reason)
	}
	// Output:
	// allow allowed: api.example.com:443 matches allow rule "api.example.com"
	// deny denied: api.example.com resolved to 10.0.0.7, a private address (private network (RFC 1918)) (rule private-networks)
}

func ExamplePolicy_DecideAction() {
	p, _ := policy.New(policy.Config{Actions: []policy.ActionRule{
		{Rule: "no-uploads", Tools: []string{"upload_file"}, Verdict: policy.Deny},
		{Rule: "purchases", Tools: []string{"click"}, Name: `(?i)\b(buy|pay|checkout)\b`, Verdict: policy.Ask},
	}})
	d := p.DecideAction(policy.Action{Tool: "click", URL: "https://shop.example/", Target: &policy.Element{Role: "button", Name: "Buy now"}})
	fmt.Println(d.Reason)
	d, _ = policy.Resolve(context.Background(), d, policy.DenyAll())
	fmt.Println(d.Verdict, d.Reason)
	// Output:
	// approval needed: click on button "Buy now" (rule purchases)
	// deny denied by the approver: click on button "Buy now" (rule purchases)
}

func ExamplePolicy_Substitute() {
	p, _ := policy.New(policy.Config{Secrets: []policy.Secret{
		{Name: "PASSWORD", Value: "hunter2", Hosts: []policy.HostRule{{Host: "login.example.com"}}},
	}})
	typed, err := p.Substitute("<secret:PASSWORD>", "login.example.com")
	fmt.Println(typed, err)
	_, err = p.Substitute("<secret:PASSWORD>", "evil.test")
	fmt.Println(err)
	fmt.Println(p.Redact("the page says: wrong password hunter2"))
	// Output:
	// hunter2 <nil>
	// secret PASSWORD may not be used on evil.test
	// the page says: wrong password <secret:PASSWORD>
}

func ExampleParseURL() {
	u, _ := policy.ParseURL("HTTPS://user:pw@Bücher.EXAMPLE:443/a/../b?q#f", nil)
	fmt.Println(u.String())
	fmt.Println(u.Hostname(), u.HostKind(), u.Port() == "", u.Origin())
	v, _ := policy.ParseURL("http://0x7f.1:8080/", nil)
	fmt.Println(v.Hostname(), v.HostKind(), v.Addr(), v.Port())
	// Output:
	// https://user:pw@xn--bcher-kva.example/b?q#f
	// xn--bcher-kva.example domain true https://xn--bcher-kva.example
	// 127.0.0.1 ipv4 127.0.0.1 8080
}

func mustParseAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
