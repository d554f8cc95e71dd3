package report_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// channelSecret has characters the form encoding Chromium writes, Go's
// URL escaping and encodeURIComponent each write their own way.
const channelSecret = `s3 cr*t~&+ü`

// secretLeaks lists the encodings of channelSecret found in b.
func secretLeaks(b []byte) []string {
	var out []string
	for _, f := range []string{
		channelSecret,
		"s3+cr*t",   // Chromium's form encoding
		"s3%20cr*t", // the same with %20, or encodeURIComponent
		"s3+cr%2At", // Go's QueryEscape
		"cr%2At%7E", "cr%2at%7e",
		"%7E%26%2B%C3%BC", "%7e%26%2b%c3%bc",
		base64.StdEncoding.EncodeToString([]byte(channelSecret)),
	} {
		if strings.Contains(string(b), f) {
			out = append(out, f)
		}
	}
	return out
}

// TestSecretEncodingsInEveryChannel submits a secret in a GET form (so
// the next page's URL holds it form-encoded, as Chromium writes it) and
// loads a binary resource that holds it (so the HAR stores it in
// base64); the observation text, the model's requests, the cassette, the
// journal, the report and the HAR hold none of its encodings.
func TestSecretEncodingsInEveryChannel(t *testing.T) {
	sites := browsertest.ServeSites(t)
	var received []string
	sites.Handle("/form", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Search</title><form action="/found" method="get"><input name="q" aria-label="Query"></form>`)
	})
	sites.Handle("/found", func(w http.ResponseWriter, r *http.Request) {
		received = append(received, r.URL.Query().Get("q"))
		fmt.Fprint(w, `<!doctype html><title>Found</title><p>results</p><img src="/blob.bin" alt="blob">`)
	})
	sites.Handle("/blob.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(append([]byte{0xff, 0xfe, 0, 1, 2}, "the key: "+channelSecret+"\x00\x01"...))
	})
	hostA := strings.TrimPrefix(sites.A, "http://")
	rule, err := policy.ParseHostRule(hostA)
	if err != nil {
		t.Fatal(err)
	}
	loop, _ := policy.ParseHostRule("127.0.0.1")
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{rule},
		Secrets: []policy.Secret{{Name: "PW", Value: channelSecret, Hosts: []policy.HostRule{loop}}},
	})
	script, err := fakeopenai.Parse([]byte(`
turns:
  - name: the form
    reply:
      tool_calls: [{name: input_text, arguments: '{"input_field_id": 1, "text_value": "<secret:PW>", "press_enter": true}'}]
  - name: the results
    expect:
      user_contains: ['q=<secret:PW>']
    reply:
      tool_calls: [{name: stop_action, arguments: '{"answer": "searched"}'}]
`))
	if err != nil {
		t.Fatal(err)
	}
	fake := fakeopenai.Start(t, script)
	dir := t.TempDir()
	cassette, jpath, har, out := filepath.Join(dir, "model.json"), filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "site.har"), filepath.Join(dir, "report.html")
	model, err := llm.New(context.Background(), llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model", Record: cassette, MaxRetryWait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: pol, RecordHAR: har})
	s, err := websurfer.New(context.Background(), websurfer.Config{Session: sess, Model: model})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j, err := journal.Open(jpath, pol.Redact)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for st, err := range s.Run(context.Background(), "Search for the key.", websurfer.RunOptions{StartURL: sites.A + "/form", Journal: j}) {
		if err != nil {
			t.Fatal(err)
		}
		if o := st.Observation; o != nil {
			texts = append(texts, o.Text(), o.URL, o.VisibleText)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	fake.Check(t)
	s.Close()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if len(received) != 1 || received[0] != channelSecret {
		t.Fatalf("the server received %q; want the secret", received)
	}
	if _, err := report.WriteFile(jpath, out, report.Options{}); err != nil {
		t.Fatal(err)
	}
	if l := secretLeaks([]byte(strings.Join(texts, "\n"))); len(l) > 0 {
		t.Errorf("the observations hold %q", l)
	}
	for _, r := range fake.Requests() {
		if l := secretLeaks(r.Body); len(l) > 0 {
			t.Errorf("model request %d holds %q", r.N, l)
		}
	}
	for what, path := range map[string]string{"the cassette": cassette, "the journal": jpath, "the report": out, "the HAR": har} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if l := secretLeaks(b); len(l) > 0 {
			t.Errorf("%s holds %q", what, l)
		}
		if what == "the HAR" && !strings.Contains(string(b), "blob.bin") {
			t.Errorf("the HAR does not record the binary resource")
		}
	}
}
