package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/policy"
)

// TestWriteRecordingRedactsEncodings: a recording holds a secret neither
// in a base64 body nor in the form encoding Chromium writes.
func TestWriteRecordingRedactsEncodings(t *testing.T) {
	const secret = `s3 cr*t~&+ü`
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{{Host: "a.test"}},
		Secrets: []policy.Secret{{Name: "pw", Value: secret, Hosts: []policy.HostRule{{Host: "a.test"}}}},
	})
	body := "<p>your password: " + secret + "</p>"
	b64 := map[string]any{"size": len(body), "mimeType": "application/octet-stream", "encoding": "base64",
		"text": base64.StdEncoding.EncodeToString([]byte(body))}
	form := "user=me&pw=s3+cr*t%7E%26%2B%C3%BC"
	post := withPost(entry("POST", "http://a.test/login", 200, nil, nil, text("ok")), form, "application/x-www-form-urlencoded")
	get := entry("GET", "http://a.test/search?pw=s3+cr*t%7E%26%2B%C3%BC", 200, nil, nil, b64)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "raw.har"), filepath.Join(dir, "site.har")
	if err := os.WriteFile(src, harJSON(t, post, get), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := writeRecording(dst, src, pol); err != nil {
		t.Fatal(err)
	}
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"cr*t", "%7E%26", base64.StdEncoding.EncodeToString([]byte(secret))[:8]} {
		if bytes.Contains(out, []byte(leak)) {
			t.Errorf("the recording holds %q:\n%s", leak, out)
		}
	}
	var doc struct {
		Log struct {
			Entries []struct {
				Request struct {
					URL      string `json:"url"`
					PostData struct {
						Text string `json:"text"`
					} `json:"postData"`
				} `json:"request"`
				Response struct {
					Content struct {
						Text     string `json:"text"`
						Encoding string `json:"encoding"`
					} `json:"content"`
				} `json:"response"`
			} `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || len(doc.Log.Entries) != 2 {
		t.Fatalf("recording: %v, %d entries\n%s", err, len(doc.Log.Entries), out)
	}
	if got := doc.Log.Entries[0].Request.PostData.Text; got != "user=me&pw=<secret:pw>" {
		t.Errorf("form body %q", got)
	}
	if got := doc.Log.Entries[1].Request.URL; !strings.HasSuffix(got, "?pw=<secret:pw>") {
		t.Errorf("URL %q", got)
	}
	c := doc.Log.Entries[1].Response.Content
	dec, err := base64.StdEncoding.DecodeString(c.Text)
	if c.Encoding != "base64" || err != nil || string(dec) != "<p>your password: <secret:pw></p>" {
		t.Errorf("base64 body %q (%s) decodes to %q, %v", c.Text, c.Encoding, dec, err)
	}
}
