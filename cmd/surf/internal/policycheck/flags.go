package policycheck

import (
	"fmt"
	"strings"

	"github.com/surfkit/surf/policy"
)

// SplitPatterns splits the comma-separated LISTs of a flag (--allow,
// --deny) into host rules. A LIST with no pattern is an error.
func SplitPatterns(flag string, lists []string) ([]policy.HostRule, error) {
	var out []policy.HostRule
	for _, list := range lists {
		n := 0
		for _, s := range strings.Split(list, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			r, err := policy.ParseHostRule(s)
			if err != nil {
				return nil, fmt.Errorf("--%s: %v", flag, err)
			}
			out = append(out, r)
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("--%s %q: no host patterns", flag, list)
		}
	}
	return out, nil
}

// Build builds the policy of the policy flags: with no file, exactly the
// allow and deny lists (with neither, the default); with a file, its
// policy narrowed by them. getenv resolves "env:" secrets of the file.
func Build(file string, allowLists, denyLists []string, getenv func(string) string) (*policy.Policy, error) {
	allow, err := SplitPatterns("allow", allowLists)
	if err != nil {
		return nil, err
	}
	deny, err := SplitPatterns("deny", denyLists)
	if err != nil {
		return nil, err
	}
	if file == "" {
		return policy.New(policy.Config{Allow: allow, Deny: deny})
	}
	cfg, err := policy.Load(file, policy.LoadOptions{Getenv: getenv})
	if err != nil {
		return nil, err
	}
	base, err := policy.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(allow) == 0 && len(deny) == 0 {
		return base, nil
	}
	return base.Restrict(policy.Restriction{Allow: allow, Deny: deny})
}

// Hint returns advice for a denied decision, for "surf: hint:" lines, or
// "" when there is nothing the user can do with flags. file is the
// --policy file ("" without one) and allowGiven whether --allow was; with
// a policy file, the advice is to edit the file: flags can only narrow it.
func Hint(d policy.Decision, file string, allowGiven bool) string {
	if d.Verdict == policy.Allow || d.Host == "" {
		return ""
	}
	pattern := strings.TrimSuffix(strings.TrimPrefix(d.Host, "["), "]")
	if d.Addr.IsValid() && d.Rule == policy.RulePrivateNetworks {
		pattern = d.Addr.String() // a dialled address
	}
	switch d.Rule {
	case policy.RulePrivateNetworks, policy.RuleAllow:
	case policy.RuleAsk:
		return "this host needs approval; run with an approver, or move it to the allow list"
	case policy.RuleDeny:
		if file != "" {
			return fmt.Sprintf("%s is on a deny list (in %s or a --deny flag)", d.Host, file)
		}
		return fmt.Sprintf("%s is on the --deny list", d.Host)
	default:
		return ""
	}
	if file != "" {
		return fmt.Sprintf("add %s to the allow list in %s (--allow can only narrow a policy file)", pattern, file)
	}
	if !allowGiven && d.Rule == policy.RulePrivateNetworks {
		return fmt.Sprintf("add --allow %s to reach it (and --allow '*' to keep the public web)", pattern)
	}
	return fmt.Sprintf("add --allow %s", pattern)
}
