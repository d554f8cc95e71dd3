package policy

import (
	"net/netip"
	"sync"
	"testing"
	"time"
)

// TestApprovals: an approval opens exactly the approved host of an ask
// entry, in navigation, request and dial decisions; other hosts of the
// same entry, deny entries, private addresses the entry does not name and
// ports outside it stay as they were; it expires; narrowing keeps it.
func TestApprovals(t *testing.T) {
	base, err := New(Config{
		Allow: mustRules(t, "127.0.0.1"),
		Ask:   mustRules(t, "127.0.0.2", "127.0.0.3", "*.bank.example", "shop.example:8443"),
		Deny:  mustRules(t, "evil.bank.example"),
	})
	if err != nil {
		t.Fatal(err)
	}
	a := NewApprovals()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a.now = func() time.Time { return now }
	p := base.WithApprovals(a)

	verdict := func(raw string) Verdict { return p.DecideURL(Navigation, raw, "").Verdict }
	dial := func(host string, port int, addr string) Verdict {
		return p.DecideDial(host, port, netip.MustParseAddr(addr)).Verdict
	}
	if v := verdict("http://127.0.0.2:8080/"); v != Ask {
		t.Fatalf("before any approval: %s, want ask", v)
	}
	for _, h := range []string{"127.0.0.2", "a.bank.example", "evil.bank.example", "shop.example"} {
		if err := a.Approve(h, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		url  string
		want Verdict
	}{
		{"http://127.0.0.2:8080/page", Allow},
		{"https://127.0.0.2/", Allow},
		{"http://127.0.0.3:8080/", Ask},            // same kind of entry, not approved
		{"https://a.bank.example/", Allow},         // approved
		{"https://A.Bank.Example./x", Allow},       // the same host
		{"https://b.bank.example/", Ask},           // same ask entry, not approved
		{"https://evil.bank.example/", Deny},       // deny wins over an approval
		{"https://shop.example:8443/", Allow},      // approved, on the entry's port
		{"https://shop.example/", Deny},            // the entry does not cover 443
		{"http://127.0.0.1:8080/", Allow},          // allowed anyway
		{"http://127.0.0.4/", Deny},                // private, named by no entry
		{"http://localhost:8080/", Deny},           // a loopback name, named by no entry
		{"ws://127.0.0.2:8080/socket", Deny},       // ws is for requests only
		{"blob:http://127.0.0.2:8080/uuid", Allow}, // a blob of the approved origin
	} {
		if v := verdict(c.url); v != c.want {
			d := p.DecideURL(Navigation, c.url, "")
			t.Errorf("%s: %s (%s), want %s", c.url, v, d.Reason, c.want)
		}
	}
	if d := p.DecideURL(Request, "http://127.0.0.2:8080/img.png", ""); d.Verdict != Allow || d.Rule != RuleApproval {
		t.Errorf("a request to the approved host: %s rule %s (%s)", d.Verdict, d.Rule, d.Reason)
	}
	// The egress proxy's dials: the approved loopback address, and the
	// approved name resolving to a public address; never a private one.
	if v := dial("127.0.0.2", 8080, "127.0.0.2"); v != Allow {
		t.Errorf("dial of the approved address: %s", v)
	}
	if v := dial("127.0.0.3", 8080, "127.0.0.3"); v != Ask {
		t.Errorf("dial of an address not approved: %s, want ask", v)
	}
	if v := dial("a.bank.example", 443, "93.184.216.34"); v != Allow {
		t.Errorf("dial of the approved name: %s", v)
	}
	if v := dial("a.bank.example", 443, "10.0.0.7"); v != Deny {
		t.Errorf("the approved name resolving to a private address: %s, want deny", v)
	}
	// Without the approvals, the same policy still asks.
	if v := base.DecideURL(Navigation, "http://127.0.0.2:8080/", "").Verdict; v != Ask {
		t.Errorf("the policy without approvals: %s, want ask", v)
	}
	// Narrowing keeps the approvals, and still narrows.
	narrow, err := p.Restrict(Restriction{Deny: mustRules(t, "a.bank.example")})
	if err != nil {
		t.Fatal(err)
	}
	if v := narrow.DecideURL(Navigation, "http://127.0.0.2:8080/", "").Verdict; v != Allow {
		t.Errorf("restricted policy, approved host: %s", v)
	}
	if v := narrow.DecideURL(Navigation, "https://a.bank.example/", "").Verdict; v != Deny {
		t.Errorf("restricted policy, denied host: %s", v)
	}
	if v := MustNew(Config{Allow: mustRules(t, "127.0.0.0/8")}).Narrow(p).DecideURL(Navigation, "http://127.0.0.2:8080/", "").Verdict; v != Allow {
		t.Errorf("narrowed by the approving policy: %s", v)
	}

	// Expiry: an approval with a time limit ends; revoking ends one at once.
	if err := a.Approve("127.0.0.3", time.Minute); err != nil {
		t.Fatal(err)
	}
	if v := verdict("http://127.0.0.3:8080/"); v != Allow {
		t.Errorf("within its time: %s", v)
	}
	now = now.Add(time.Minute)
	if v := verdict("http://127.0.0.3:8080/"); v != Ask {
		t.Errorf("after its time: %s, want ask", v)
	}
	a.Revoke("127.0.0.2")
	if v := verdict("http://127.0.0.2:8080/"); v != Ask {
		t.Errorf("after revoking: %s, want ask", v)
	}
	if err := a.Approve("http://x/", 0); err == nil {
		t.Error("approving a URL instead of a host: no error")
	}
	if err := a.Approve("", 0); err == nil {
		t.Error("approving an empty host: no error")
	}
	if err := a.Approve("::1", 0); err != nil || !a.Approved("[::1]") {
		t.Errorf("an IPv6 host without brackets: %v, approved %v", err, a.Approved("[::1]"))
	}
}

// TestApprovalsConcurrent: decisions and approvals from many goroutines
// (run with -race).
func TestApprovalsConcurrent(t *testing.T) {
	a := NewApprovals()
	p := MustNew(Config{Ask: mustRules(t, "*.example")}).WithApprovals(a)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 100 {
				host := string(rune('a'+i)) + ".example"
				if j == 50 {
					a.Approve(host, time.Hour)
				}
				d := p.DecideURL(Request, "https://"+host+"/", "")
				if j > 50 && d.Verdict != Allow {
					t.Errorf("%s after approval: %s", host, d.Verdict)
					return
				}
				a.Hosts()
			}
		}()
	}
	wg.Wait()
}
