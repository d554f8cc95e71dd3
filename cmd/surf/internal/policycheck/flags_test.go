package policycheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/policy"
)

func TestBuild(t *testing.T) {
	getenv := func(string) string { return "" }
	verdict := func(p *policy.Policy, u string) string { return p.DecideURL(policy.Navigation, u, "").Verdict.String() }

	p, err := Build("", nil, nil, getenv)
	if err != nil || verdict(p, "https://example.com/") != "allow" || verdict(p, "http://127.0.0.1/") != "deny" {
		t.Fatalf("the default policy: %v", err)
	}
	p, err = Build("", []string{"127.0.0.1, example.com"}, []string{"example.com"}, getenv)
	if err != nil || verdict(p, "http://127.0.0.1/") != "allow" || verdict(p, "https://example.com/") != "deny" || verdict(p, "https://other.test/") != "deny" {
		t.Fatalf("--allow and --deny: %v", err)
	}
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("allow:\n  - a.example\n  - b.example\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = Build(file, []string{"a.example", "c.example"}, nil, getenv)
	if err != nil || verdict(p, "https://a.example/") != "allow" || verdict(p, "https://b.example/") != "deny" || verdict(p, "https://c.example/") != "deny" {
		t.Fatalf("--allow narrows the file, never widens it: %v", err)
	}
	for name, lists := range map[string][2][]string{"an empty list": {{" , "}, nil}, "a bad pattern": {nil, {"exa mple.com"}}} {
		if _, err := Build("", lists[0], lists[1], getenv); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := Build(filepath.Join(t.TempDir(), "missing.yaml"), nil, nil, getenv); err == nil {
		t.Error("a missing file: no error")
	}
}

func TestHint(t *testing.T) {
	p, err := Build("", nil, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	d := p.DecideURL(policy.Navigation, "http://127.0.0.1:8080/", "")
	if h := Hint(d, "", false); !strings.Contains(h, "--allow 127.0.0.1") || !strings.Contains(h, "'*'") {
		t.Errorf("a private address, no flags: %q", h)
	}
	if h := Hint(d, "policy.yaml", false); !strings.Contains(h, "allow list in policy.yaml") {
		t.Errorf("with a policy file: %q", h)
	}
	if h := Hint(p.DecideURL(policy.Navigation, "https://example.com/", ""), "", false); h != "" {
		t.Errorf("an allowed URL: %q", h)
	}
}
