package main

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/surfkit/surf/policy"
)

// policyFlags is the one way every browser command (visit, shell, run,
// serve, open, demo, bench, policy check) takes its policy:
//
//	--policy FILE   a YAML policy file (see "go doc github.com/surfkit/surf/policy")
//	--allow LIST    hosts that may be reached, comma-separated; repeatable
//	--deny LIST     hosts that may never be reached, comma-separated; repeatable
//
// With no flags: public hosts allowed, private networks denied. With only
// --allow/--deny: exactly that list (an empty --allow means any public
// host). With --policy FILE, --allow and --deny NARROW the file's policy:
// --allow intersects it, --deny adds denials; neither can widen it. A URL
// named on the command line never widens the policy either: commands judge
// it like any other URL and, when it is denied, print hintFor's advice.
type policyFlags struct {
	file  string
	allow []string
	deny  []string
}

// addPolicyFlags registers --policy, --allow and --deny on fs.
func addPolicyFlags(fs *pflag.FlagSet) *policyFlags {
	f := &policyFlags{}
	fs.StringVar(&f.file, "policy", "", "policy `FILE` (YAML); --allow and --deny narrow it")
	fs.StringArrayVar(&f.allow, "allow", nil, "hosts that may be reached, comma-separated `LIST` (\"*\" = any public host; a private address needs its IP or CIDR, e.g. 127.0.0.1)")
	fs.StringArrayVar(&f.deny, "deny", nil, "hosts that may never be reached, comma-separated `LIST`")
	return f
}

// splitPatterns splits comma-separated LISTs into host rules.
func splitPatterns(flag string, lists []string) ([]policy.HostRule, error) {
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

// policy builds the policy the flags describe. getenv resolves "env:"
// secrets of a policy file. Every error (a bad file, a bad pattern) is a
// bad policy: an *exitError with code 2, whose message names the file, the
// line and the problem.
func (f *policyFlags) policy(getenv func(string) string) (*policy.Policy, error) {
	bad := func(err error) error {
		return &exitError{code: 2, err: withHint(err, "see 'surf help policy' for the policy file and pattern syntax")}
	}
	allow, err := splitPatterns("allow", f.allow)
	if err != nil {
		return nil, bad(err)
	}
	deny, err := splitPatterns("deny", f.deny)
	if err != nil {
		return nil, bad(err)
	}
	if f.file == "" {
		p, err := policy.New(policy.Config{Allow: allow, Deny: deny})
		if err != nil {
			return nil, bad(err)
		}
		return p, nil
	}
	cfg, err := policy.Load(f.file, policy.LoadOptions{Getenv: getenv})
	if err != nil {
		return nil, bad(err)
	}
	base, err := policy.New(cfg)
	if err != nil {
		return nil, bad(fmt.Errorf("%s: %w", f.file, err))
	}
	if len(allow) == 0 && len(deny) == 0 {
		return base, nil
	}
	p, err := base.Restrict(policy.Restriction{Allow: allow, Deny: deny})
	if err != nil {
		return nil, bad(err)
	}
	return p, nil
}

// hint returns advice for a denied decision, for "surf: hint:" lines, or ""
// when there is nothing the user can do with flags. With a policy file, the
// advice is to edit the file: flags can only narrow it.
func (f *policyFlags) hint(d policy.Decision) string {
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
		if f.file != "" {
			return fmt.Sprintf("%s is on a deny list (in %s or a --deny flag)", d.Host, f.file)
		}
		return fmt.Sprintf("%s is on the --deny list", d.Host)
	default:
		return ""
	}
	if f.file != "" {
		return fmt.Sprintf("add %s to the allow list in %s (--allow can only narrow a policy file)", pattern, f.file)
	}
	if len(f.allow) == 0 && d.Rule == policy.RulePrivateNetworks {
		return fmt.Sprintf("add --allow %s to reach it (and --allow '*' to keep the public web)", pattern)
	}
	return fmt.Sprintf("add --allow %s", pattern)
}

// deniedError turns a denied decision into an error with the hint, for
// commands that stop on a denied URL.
func (f *policyFlags) deniedError(d policy.Decision) error {
	err := d.Err()
	if err == nil {
		return nil
	}
	if h := f.hint(d); h != "" {
		return withHint(err, h)
	}
	return err
}
