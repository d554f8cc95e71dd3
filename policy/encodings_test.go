package policy

import (
	"encoding/base64"
	"strings"
	"testing"
)

// encodedSecret has characters that every encoding writes its own way.
const encodedSecret = `s3 cr*t~&+ü"x`

func encodedSecretPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := New(Config{Secrets: []Secret{{Name: "PW", Value: encodedSecret, Hosts: mustRules(t, "login.test")}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRedactEncodings(t *testing.T) {
	p := encodedSecretPolicy(t)
	for _, c := range []struct{ what, in string }{
		{"plain", `pw=s3 cr*t~&+ü"x;`},
		{"Chromium form, + for space", `user=me&pw=s3+cr*t%7E%26%2B%C3%BC%22x&go=1`},
		{"form, %20 for space", `pw=s3%20cr*t%7E%26%2B%C3%BC%22x&go=1`},
		{"form, lower-case hex", `pw=s3+cr*t%7e%26%2b%c3%bc%22x&go=1`},
		{"Go QueryEscape", `pw=s3+cr%2At~%26%2B%C3%BC%22x&go=1`},
		{"encodeURIComponent", `pw=s3%20cr*t~%26%2B%C3%BC%22x&go=1`},
		{"URL query as parsed", `https://login.test/?pw=s3%20cr*t~&+%C3%BC%22x&go=1`},
		{"every byte", `pw=s3%20cr%2At%7E%26%2B%C3%BC%22x&go=1`},
		{"JSON", `{"pw":"s3 cr*t~\u0026+ü\"x"}`},
		{"JSON without HTML escaping", `{"pw":"s3 cr*t~&+ü\"x"}`},
		{"HTML", `<input value="s3 cr*t~&amp;+ü&#34;x">`},
		{"base64", "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(encodedSecret))},
		{"base64 inside a body, offset 1", base64.StdEncoding.EncodeToString([]byte("a" + encodedSecret + "tail of the body"))},
		{"base64 inside a body, offset 2", base64.StdEncoding.EncodeToString([]byte("ab" + encodedSecret + "tail of the body"))},
		{"base64url inside a body, offset 0", base64.URLEncoding.EncodeToString([]byte("abc" + encodedSecret + "tail of the body"))},
	} {
		got := p.Redact(c.in)
		if !strings.Contains(got, "<secret:PW>") {
			t.Errorf("%s: Redact(%q) = %q, no placeholder", c.what, c.in, got)
		}
		if strings.Contains(got, "cr*t") || strings.Contains(got, "cr%2At") {
			t.Errorf("%s: Redact(%q) = %q still shows the value", c.what, c.in, got)
		}
	}
	// Unrelated text is untouched.
	for _, in := range []string{"s3 cr", "*t~&+", "c3Mg", "hunter2", base64.StdEncoding.EncodeToString([]byte("a different body, long enough"))} {
		if got := p.Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
		}
	}
}

func TestRedactBase64(t *testing.T) {
	p := encodedSecretPolicy(t)
	body := "<p>the password is " + encodedSecret + ", keep it</p>"
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		got := p.RedactBase64(enc.EncodeToString([]byte(body)))
		dec, err := enc.DecodeString(got)
		if err != nil {
			t.Fatalf("RedactBase64 = %q, not base64: %v", got, err)
		}
		if want := "<p>the password is <secret:PW>, keep it</p>"; string(dec) != want {
			t.Errorf("RedactBase64 decodes to %q, want %q", dec, want)
		}
	}
	clean := base64.StdEncoding.EncodeToString([]byte("nothing to hide"))
	if got := p.RedactBase64(clean); got != clean {
		t.Errorf("RedactBase64(%q) = %q, want it unchanged", clean, got)
	}
	if got := p.RedactBase64("not base64 but " + encodedSecret); got != "not base64 but <secret:PW>" {
		t.Errorf("RedactBase64 of plain text = %q", got)
	}
}
