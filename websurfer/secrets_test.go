package websurfer

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// TestSecretsNeverShow signs in with a secret placeholder: the value
// reaches the allowed host's server, and appears in no observation, no
// model request and no journal line; the placeholder is refused on another
// host.
func TestSecretsNeverShow(t *testing.T) {
	const value = "hunter2-s3cr3t"
	sites := browsertest.ServeSites(t)
	var got []string
	sites.Handle("/login", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		got = append(got, r.PostForm.Get("password"), r.PostForm.Get("code"))
		fmt.Fprintf(w, "<title>Signed in</title><p>Welcome, %s</p>", htmlEscape(r.PostForm.Get("username")))
	})
	hostA := strings.TrimPrefix(sites.A, "http://")
	ruleA, _ := policy.ParseHostRule("127.0.0.1")
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{mustHostRule(t, hostA), mustHostRule(t, strings.TrimPrefix(sites.B, "http://"))},
		Secrets: []policy.Secret{{Name: "PASSWORD", Value: value, Hosts: []policy.HostRule{ruleA}}},
	})
	fake := fakeopenai.Start(t, loadScript(t, "login.yaml", map[string]string{"B": sites.B}))
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	s := newSurfer(t, Config{Session: sess, Model: newModel(t, fake)})
	jpath := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(jpath, s.Policy().Redact)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for st, err := range s.Run(context.Background(), "Sign in as ada.", RunOptions{StartURL: sites.A + "/actions/login.html", Journal: j}) {
		if err != nil {
			t.Fatal(err)
		}
		if st.Observation != nil {
			texts = append(texts, st.Observation.Text(), st.Observation.VisibleText)
			for _, e := range st.Observation.Elements {
				texts = append(texts, e.Value, e.Name)
			}
		}
		if st.Done && st.Answer != "signed in" {
			t.Fatalf("ended %q (%q)", st.EndReason, st.Answer)
		}
	}
	j.Close()
	fake.Check(t)
	if len(got) != 2 || got[0] != value || got[1] != value {
		t.Fatalf("the server received %q; want the secret's value in both fields", got)
	}
	for _, txt := range texts {
		if strings.Contains(txt, value) {
			t.Fatalf("an observation shows the secret: %q", txt)
		}
	}
	for _, r := range fake.Requests() {
		if strings.Contains(string(r.Body), value) {
			t.Fatalf("model request %d holds the secret", r.N)
		}
	}
	b, err := os.ReadFile(jpath)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), value) {
		t.Fatal("the journal holds the secret")
	}
	if !strings.Contains(string(b), "secret PASSWORD may not be used") {
		t.Error("the journal does not record the refusal on the other host")
	}
}

func mustHostRule(t *testing.T, s string) policy.HostRule {
	t.Helper()
	r, err := policy.ParseHostRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
