package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func secretPolicy(t testing.TB) *Policy {
	t.Helper()
	p, err := New(Config{Secrets: []Secret{
		{Name: "PASSWORD", Value: "hunter2", Hosts: mustRules(t, "login.example.com")},
		{Name: "TOKEN", Value: "tok/en+1 2", Hosts: mustRules(t, "*.api.example.com", "api.example.com", "bücher.example")},
		{Name: "LONG", Value: "hunter2hunter2", Hosts: mustRules(t, "x.test")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSubstitute(t *testing.T) {
	p := secretPolicy(t)
	for _, c := range []struct {
		text, host, want string
	}{
		{"<secret:PASSWORD>", "login.example.com", "hunter2"},
		{"user=me pass=<secret:PASSWORD>!", "LOGIN.example.com.", "user=me pass=hunter2!"},
		{"<secret:TOKEN><secret:TOKEN>", "v1.api.example.com", "tok/en+1 2tok/en+1 2"},
		{"<secret:TOKEN>", "xn--bcher-kva.example", "tok/en+1 2"},
		{"no placeholders here", "evil.test", "no placeholders here"},
		{"<secret:lowercase-not-a-name>", "evil.test", "<secret:lowercase-not-a-name>"},
	} {
		got, err := p.Substitute(c.text, c.host)
		if err != nil || got != c.want {
			t.Errorf("Substitute(%q, %q) = %q, %v; want %q", c.text, c.host, got, err, c.want)
		}
	}
	for _, c := range []struct {
		text, host, wantErr string
	}{
		{"<secret:PASSWORD>", "evil.test", "secret PASSWORD may not be used on evil.test"},
		{"<secret:PASSWORD>", "login.example.com.evil.test", "secret PASSWORD may not be used on login.example.com.evil.test"},
		{"<secret:PASSWORD>", "example.com", "secret PASSWORD may not be used on example.com"},
		{"ok then <secret:PASSWORD>", "127.0.0.1", "secret PASSWORD may not be used on 127.0.0.1"},
		{"<secret:TOKEN>", "bad host%", "secret TOKEN may not be used on an invalid host"},
		{"<secret:NOPE>", "login.example.com", "unknown secret NOPE"},
		// One bad placeholder fails the whole text: nothing is half-substituted.
		{"<secret:PASSWORD> <secret:TOKEN>", "login.example.com", "secret TOKEN may not be used on login.example.com"},
	} {
		got, err := p.Substitute(c.text, c.host)
		if err == nil {
			t.Errorf("Substitute(%q, %q) = %q, want error %q", c.text, c.host, got, c.wantErr)
			continue
		}
		if !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("Substitute(%q, %q) error = %q, want %q", c.text, c.host, err, c.wantErr)
		}
		if got != "" {
			t.Errorf("Substitute(%q, %q) returned %q with an error", c.text, c.host, got)
		}
		for _, v := range []string{"hunter2", "tok/en+1 2"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("error %q leaks a secret value", err)
			}
		}
		if !errors.Is(err, ErrDenied) {
			t.Errorf("error %v does not match ErrDenied", err)
		}
	}
	// A policy without secrets knows no placeholders.
	if _, err := MustNew(Config{}).Substitute("<secret:X>", "a.test"); err == nil {
		t.Error("Substitute with no secrets succeeded")
	}
}

func TestRedact(t *testing.T) {
	p := secretPolicy(t)
	for _, c := range []struct{ in, want string }{
		{"the password is hunter2.", "the password is <secret:PASSWORD>."},
		{"hunter2hunter2", "<secret:LONG>"},
		{"hunter2hunter2hunter2", "<secret:LONG><secret:PASSWORD>"},
		{"https://x.test/?t=tok%2Fen%2B1+2", "https://x.test/?t=<secret:TOKEN>"},
		{"/p/tok%2Fen+1%202", "/p/<secret:TOKEN>"},
		{"nothing secret", "nothing secret"},
		{"", ""},
	} {
		if got := p.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := MustNew(Config{}).Redact("hunter2"); got != "hunter2" {
		t.Errorf("Redact without secrets = %q", got)
	}
	if names := p.SecretNames(); strings.Join(names, ",") != "LONG,PASSWORD,TOKEN" {
		t.Errorf("SecretNames = %v", names)
	}
}

func TestSecretValidation(t *testing.T) {
	for _, s := range []Secret{
		{Name: "X", Hosts: mustRules(t, "a.test")},                                          // no value
		{Name: "X", Value: "v"},                                                             // no hosts
		{Name: "bad name", Value: "v", Hosts: mustRules(t, "a.test")},                       // bad name
		{Name: "X", Value: "v", Hosts: mustRules(t, "*")},                                   // any host
		{Name: "X", Value: "v", Hosts: mustRules(t, "a.test:443")},                          // port
		{Name: "X", Value: "v", Hosts: []HostRule{{Host: "a.test", Paths: []string{"/x"}}}}, // path
	} {
		if _, err := New(Config{Secrets: []Secret{s}}); err == nil {
			t.Errorf("New with secret %+v succeeded", s.Name)
		}
	}
	dup := []Secret{{Name: "X", Value: "a", Hosts: mustRules(t, "a.test")}, {Name: "X", Value: "b", Hosts: mustRules(t, "a.test")}}
	if _, err := New(Config{Secrets: dup}); err == nil {
		t.Error("New with a duplicate secret succeeded")
	}
}

func TestNarrowKeepsBaseSecrets(t *testing.T) {
	base := secretPolicy(t)
	other := MustNew(Config{Secrets: []Secret{{Name: "OTHER", Value: "zzz", Hosts: mustRules(t, "a.test")}}})
	n := base.Narrow(other)
	if got := strings.Join(n.SecretNames(), ","); got != "LONG,PASSWORD,TOKEN" {
		t.Errorf("narrowed secrets = %s", got)
	}
	r, err := base.Restrict(Restriction{Deny: mustRules(t, "evil.test")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Substitute("<secret:PASSWORD>", "login.example.com"); err != nil || got != "hunter2" {
		t.Errorf("restricted Substitute = %q, %v", got, err)
	}
}

func TestResolve(t *testing.T) {
	ctx := context.Background()
	ask := Decision{Verdict: Ask, Rule: "purchases", Reason: `approval needed: click on button "Buy" (rule purchases)`, Tool: "click"}
	d, err := Resolve(ctx, ask, nil)
	if err != nil || d.Verdict != Deny || d.Rule != "purchases" || !strings.Contains(d.Reason, "no approver") {
		t.Errorf("Resolve(nil approver) = %+v, %v", d, err)
	}
	d, err = Resolve(ctx, ask, AllowAll())
	if err != nil || d.Verdict != Allow || !strings.HasPrefix(d.Reason, "approved: ") {
		t.Errorf("Resolve(AllowAll) = %+v, %v", d, err)
	}
	d, err = Resolve(ctx, ask, DenyAll())
	if err != nil || d.Verdict != Deny || !strings.HasPrefix(d.Reason, "denied by the approver: ") {
		t.Errorf("Resolve(DenyAll) = %+v, %v", d, err)
	}
	if d.Err() == nil || !errors.Is(d.Err(), ErrDenied) {
		t.Errorf("Err() = %v, want an ErrDenied", d.Err())
	}
	var de *DeniedError
	if !errors.As(d.Err(), &de) || de.Rule != "purchases" {
		t.Errorf("Err() = %#v, want a *DeniedError with the rule", d.Err())
	}
	boom := errors.New("boom")
	d, err = Resolve(ctx, ask, ApproverFunc(func(context.Context, Decision) (bool, error) { return true, boom }))
	if !errors.Is(err, boom) || d.Verdict != Deny {
		t.Errorf("Resolve(failing approver) = %+v, %v", d, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	called := false
	d, err = Resolve(cctx, ask, ApproverFunc(func(context.Context, Decision) (bool, error) { called = true; return true, nil }))
	if !errors.Is(err, context.Canceled) || d.Verdict != Deny || called {
		t.Errorf("Resolve(cancelled) = %+v, %v (approver called %v)", d, err, called)
	}
	// Allow and Deny pass through without asking.
	for _, in := range []Decision{{Verdict: Allow}, {Verdict: Deny, Rule: "x"}} {
		out, err := Resolve(ctx, in, ApproverFunc(func(context.Context, Decision) (bool, error) {
			t.Error("approver called for a decided verdict")
			return false, nil
		}))
		if err != nil || out != in {
			t.Errorf("Resolve(%+v) = %+v, %v", in, out, err)
		}
	}
	// The zero Decision denies.
	if (Decision{}).Allowed() || (Decision{}).Err() == nil {
		t.Error("the zero Decision allows")
	}
}

func TestNilPolicyDenies(t *testing.T) {
	var p *Policy
	if d := p.DecideURL(Navigation, "https://example.com/", ""); d.Verdict != Deny || d.Rule != RulePolicy {
		t.Errorf("nil DecideURL = %+v", d)
	}
	if d := p.DecideAction(Action{Tool: "click"}); d.Verdict != Deny {
		t.Errorf("nil DecideAction = %+v", d)
	}
	if d := p.DecideDial("example.com", 443, mustAddr("93.184.215.14")); d.Verdict != Deny {
		t.Errorf("nil DecideDial = %+v", d)
	}
	if p.Narrow(MustNew(Config{})) != nil {
		t.Error("nil.Narrow is not nil")
	}
	// A Policy not made by New denies too, actions included.
	var zero Policy
	if d := zero.DecideAction(Action{Tool: "upload_file"}); d.Verdict != Deny || d.Rule != RulePolicy {
		t.Errorf("zero Policy DecideAction = %+v", d)
	}
	if d := zero.DecideURL(Navigation, "https://example.com/", ""); d.Verdict != Deny || d.Rule != RulePolicy {
		t.Errorf("zero Policy DecideURL = %+v", d)
	}
	if _, err := p.Substitute("<secret:X>", "a.test"); err == nil {
		t.Error("nil Substitute succeeded")
	}
}
