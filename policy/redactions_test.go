package policy_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/surfkit/surf/policy"
)

func TestRedactionsTyping(t *testing.T) {
	r := policy.NewRedactions()
	pol := policy.MustNew(policy.Config{}).WithRedactions(r)
	for _, c := range "plumvx" {
		r.Type(string(c))
	}
	if got := pol.Redact("q=plumvx"); got != "q="+policy.TypedPlaceholder {
		t.Errorf("the run so far: %q", got)
	}
	r.Backspace()
	for _, c := range "iolet42" {
		r.Type(string(c))
	}
	r.Break()
	r.Type("ok") // a run too short to redact
	cases := map[string]string{
		"You searched for plumviolet42.":      "You searched for " + policy.TypedPlaceholder + ".",
		"/result?q=plumviolet42&x=1":          "/result?q=" + policy.TypedPlaceholder + "&x=1",
		"plumvx is gone from the run":         "plumvx is gone from the run",
		"ok stays ok":                         "ok stays ok",
		"base64 " + "cGx1bXZpb2xldDQy" + " !": "base64 " + policy.TypedPlaceholder + " !",
	}
	for in, want := range cases {
		if got := pol.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
	if !pol.ContainsSecret("xx plumviolet42 xx") || pol.ContainsSecret("nothing here") {
		t.Error("ContainsSecret does not know the typed text")
	}
	if !pol.Redacts() || policy.MustNew(policy.Config{}).Redacts() {
		t.Error("Redacts() is wrong")
	}
}

func TestRedactionsForms(t *testing.T) {
	r := policy.NewRedactions()
	r.Add("Quokka Harbour 7781")
	r.Add("ab")       // too short: ignored
	if r.Len() != 1 { // the text, whole
		t.Errorf("Len() = %d; want 1", r.Len())
	}
	for _, in := range []string{"p=Quokka+Harbour+7781", "Quokka%20Harbour%207781", "&quot;Quokka Harbour 7781&quot;",
		"next=%2Fsearch%3Fp%3DQuokka%20Harbour%207781", `{"v":"\u0022Quokka Harbour 7781\u0022"}`, `a\nQuokka Harbour 7781`} {
		if got := r.Redact(in); strings.Contains(got, "Harbour") {
			t.Errorf("Redact(%q) = %q", in, got)
		}
	}
	if got := r.Redact("ab cd"); got != "ab cd" {
		t.Errorf("a too short value was redacted: %q", got)
	}
}

// TestRedactionsOnlyWhatWasTyped: what a person typed is hidden where it
// stands on its own, and nothing else is touched: not a longer word that
// starts with it, not one word of several typed together.
func TestRedactionsOnlyWhatWasTyped(t *testing.T) {
	r := policy.NewRedactions()
	pol := policy.MustNew(policy.Config{}).WithRedactions(r)
	for _, c := range "wid" {
		r.Type(string(c))
	}
	r.Break()
	r.Add("blue gadget")
	cases := map[string]string{
		"We sell widgets":                 "We sell widgets",
		"I need help finding the gadget.": "I need help finding the gadget.",
		"Search: wid":                     "Search: " + policy.TypedPlaceholder,
		"q=wid&x=1":                       "q=" + policy.TypedPlaceholder + "&x=1",
		"a blue gadget, bluegadget":       "a " + policy.TypedPlaceholder + ", bluegadget",
		"q=blue+gadget":                   "q=" + policy.TypedPlaceholder,
		"kidwid widkid 2wid wid2":         "kidwid widkid 2wid wid2",
		"(wid)":                           "(" + policy.TypedPlaceholder + ")",
	}
	for in, want := range cases {
		if got := pol.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q; want %q", in, got, want)
		}
	}
	if pol.ContainsSecret("We sell widgets") || !pol.ContainsSecret("widgets or wid") {
		t.Error("ContainsSecret does not match what Redact replaces")
	}
}

func TestRedactionsCarriedByNarrowAndRestrict(t *testing.T) {
	r := policy.NewRedactions()
	r.Add("plumviolet42")
	sec := policy.MustNew(policy.Config{Secrets: []policy.Secret{{Name: "pw", Value: "hunter2-secret", Hosts: []policy.HostRule{{Host: "example.com"}}}}})
	base := sec.WithRedactions(r)
	narrowed := base.Narrow(policy.MustNew(policy.Config{}))
	other := policy.MustNew(policy.Config{}).Narrow(base)
	restricted, err := base.Restrict(policy.Restriction{Deny: []policy.HostRule{{Host: "bad.example"}}})
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]*policy.Policy{"base": base, "narrowed": narrowed, "narrowing": other, "restricted": restricted} {
		if got := p.Redact("plumviolet42"); got != policy.TypedPlaceholder {
			t.Errorf("%s: Redact = %q", name, got)
		}
		if p.Redactions() != r {
			t.Errorf("%s: Redactions() is not the set", name)
		}
	}
	if got := base.Redact("hunter2-secret plumviolet42"); got != "<secret:pw> "+policy.TypedPlaceholder {
		t.Errorf("secrets and typed text: %q", got)
	}
	c := policy.NewRedactions()
	c.CopyFrom(r)
	if c.Redact("plumviolet42") != policy.TypedPlaceholder {
		t.Error("CopyFrom lost a value")
	}
	var nilSet *policy.Redactions
	nilSet.Add("x")
	nilSet.Type("abc")
	if nilSet.Redact("abc") != "abc" || nilSet.Len() != 0 {
		t.Error("a nil set is not empty")
	}
}

func TestRedactionsConcurrent(t *testing.T) {
	r := policy.NewRedactions()
	pol := policy.MustNew(policy.Config{}).WithRedactions(r)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				r.Type("a")
				if j%20 == 0 {
					r.Break()
				}
			}
		}()
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				pol.Redact("aaaa bbbb")
			}
		}()
	}
	wg.Wait()
}
