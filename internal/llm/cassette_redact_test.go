package llm_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
)

// TestCassetteRedactsPolicySecrets: with Config.Redact set to a policy's
// Redact, a secret the model traffic holds in an encoding (here the form
// encoding Chromium writes, in the model's tool call and in a page text)
// is not in the cassette, and the cassette replays.
func TestCassetteRedactsPolicySecrets(t *testing.T) {
	const secret = `s3 cr*t~&+ü`
	const form = "s3+cr*t%7E%26%2B%C3%BC"
	pol := policy.MustNew(policy.Config{Secrets: []policy.Secret{{Name: "PW", Value: secret, Hosts: []policy.HostRule{{Host: "shop.test"}}}}})
	s := fakeopenai.Start(t, fakeopenai.NewScript(
		fakeopenai.Turn{Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{
			{Name: "visit_url", Arguments: `{"url":"https://shop.test/?q=` + form + `"}`},
		}}},
		fakeopenai.CallTool("click", `{"target_id": 7}`),
		fakeopenai.Say("done"),
	))
	path := filepath.Join(t.TempDir(), "run.cassette.json")
	c := newClient(t, llm.Config{BaseURL: s.URL(), APIKey: fakeKey, Record: path, Redact: pol.Redact})
	if _, err := agentRun(t, c, "url \"https://shop.test/?q="+form+"\""); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{form, "cr*t"} {
		if bytes.Contains(b, []byte(leak)) {
			t.Errorf("the cassette holds %q", leak)
		}
	}
	if !bytes.Contains(b, []byte(`q=\u003csecret:PW\u003e`)) {
		t.Errorf("the cassette shows no placeholder:\n%s", b)
	}
	rc := newClient(t, llm.Config{BaseURL: "http://127.0.0.1:1/v1", Replay: path, Redact: pol.Redact})
	if _, err := agentRun(t, rc, "url \"https://shop.test/?q="+form+"\""); err != nil {
		t.Fatalf("replaying: %v", err)
	}
}
