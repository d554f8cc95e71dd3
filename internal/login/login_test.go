package login_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/surfkit/surf/internal/login"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

func TestPolicyAddsTheLoginHost(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/login")
	p, err := login.Policy(u)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"http://127.0.0.1:9999/", "https://sso.example.com/"} {
		if d := p.DecideURL(policy.Navigation, raw, ""); d.Verdict != policy.Allow {
			t.Errorf("%s: %s (%s), want allow", raw, d.Verdict, d.Rule)
		}
	}
	if d := p.DecideURL(policy.Navigation, "http://10.0.0.1/", ""); d.Verdict == policy.Allow {
		t.Errorf("another private host is allowed")
	}
}

func TestRunNeedsAStateFile(t *testing.T) {
	_, err := login.Run(context.Background(), login.Config{State: sandbox.StateFile{}}, "http://127.0.0.1/")
	if err == nil {
		t.Fatal("a login without a state file ran")
	}
}
