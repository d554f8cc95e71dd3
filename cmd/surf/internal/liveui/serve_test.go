package liveui_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// TestServe serves the live view on its own address: the token in the
// login address lets a person in, nothing else does, and a taken address
// is an error.
func TestServe(t *testing.T) {
	o := mcpserver.HTTPOptions{Token: mcpserver.GenerateToken()}
	s, err := liveui.Serve(context.Background(), "127.0.0.1:0", o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !strings.Contains(s.LoginURL, "?token="+o.Token) {
		t.Fatalf("login address %q lacks the token", s.LoginURL)
	}
	base := strings.SplitN(s.LoginURL, "?", 2)[0]
	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden {
		t.Errorf("without the token: %s, want refused", resp.Status)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err = (&http.Client{Jar: jar}).Get(s.LoginURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("with the token: %s, want 200", resp.Status)
	}
	host := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/")
	if _, err := liveui.Serve(context.Background(), host, o, nil); err == nil || !strings.Contains(err.Error(), "listening on") {
		t.Errorf("a taken address: got %v", err)
	}
	s.Close()
	if _, err := http.Get(base); err == nil {
		t.Error("the server still answers after Close")
	}
}
