package main

import (
	"github.com/spf13/pflag"

	"github.com/surfkit/surf/cmd/surf/internal/policycheck"
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
	return policycheck.SplitPatterns(flag, lists)
}

// policy builds the policy the flags describe. getenv resolves "env:"
// secrets of a policy file. Every error (a bad file, a bad pattern) is a
// bad policy: an *exitError with code 2, whose message names the file, the
// line and the problem.
func (f *policyFlags) policy(getenv func(string) string) (*policy.Policy, error) {
	p, err := policycheck.Build(f.file, f.allow, f.deny, getenv)
	if err != nil {
		return nil, &exitError{code: 2, err: withHint(err, "see 'surf help policy' for the policy file and pattern syntax")}
	}
	return p, nil
}

// hint returns advice for a denied decision (see policycheck.Hint).
func (f *policyFlags) hint(d policy.Decision) string {
	return policycheck.Hint(d, f.file, len(f.allow) > 0)
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
