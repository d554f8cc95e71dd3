package mcpserver_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// TestReadTokens: the token sources of an HTTP server, in their order,
// the ones that exclude each other, and a token made on loopback only.
func TestReadTokens(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "tok")
	if err := os.WriteFile(tokFile, []byte("file-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	princ := filepath.Join(dir, "principals")
	if err := os.WriteFile(princ, []byte("alice alice-token-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "new.token")
	const loop, remote = "127.0.0.1:8931", "192.0.2.1:8931"

	for _, bad := range []mcpserver.TokenSources{
		{PrincipalsFile: princ, Env: "env-token-0123456789abcdef"},
		{PrincipalsFile: princ, File: tokFile},
		{PrincipalsFile: princ, NoToken: true},
		{NoToken: true, Env: "env-token-0123456789abcdef"},
		{NoToken: true, File: tokFile},
	} {
		if _, err := mcpserver.ReadTokens(bad, loop); !errors.Is(err, mcpserver.ErrTokenSources) {
			t.Errorf("ReadTokens(%+v) = %v, want ErrTokenSources", bad, err)
		}
	}

	check := func(name string, src mcpserver.TokenSources, addr string, token string, made bool, file string) {
		t.Helper()
		got, err := mcpserver.ReadTokens(src, addr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if token != "*" && got.Options.Token != token || token == "*" && len(got.Options.Token) < mcpserver.MinTokenLength {
			t.Errorf("%s: token %q, want %q", name, got.Options.Token, token)
		}
		if got.Made != made || got.File != file {
			t.Errorf("%s: made %v file %q, want %v %q", name, got.Made, got.File, made, file)
		}
	}
	check("env over file", mcpserver.TokenSources{Env: " env-token-0123456789abcdef\n", File: tokFile}, loop, "env-token-0123456789abcdef", false, "")
	check("existing file", mcpserver.TokenSources{File: tokFile}, remote, "file-token-0123456789abcdef", false, "")
	check("missing file", mcpserver.TokenSources{File: missing}, remote, "*", true, missing)
	check("loopback", mcpserver.TokenSources{}, loop, "*", true, "")
	check("remote", mcpserver.TokenSources{}, remote, "", false, "")
	if _, err := os.Stat(missing); err == nil {
		t.Error("ReadTokens wrote the token file it made: the server writes it once it listens")
	}

	got, err := mcpserver.ReadTokens(mcpserver.TokenSources{PrincipalsFile: princ}, loop)
	if err != nil || len(got.Options.Principals) != 1 || got.Options.Principals[0].Name != "alice" || got.Options.Token != "" || got.Made {
		t.Errorf("principals: %+v %v", got, err)
	}
	got, err = mcpserver.ReadTokens(mcpserver.TokenSources{NoToken: true}, loop)
	if err != nil || !got.Options.NoToken || got.Options.Token != "" || got.Made {
		t.Errorf("no token: %+v %v", got, err)
	}
	open := filepath.Join(dir, "open")
	os.WriteFile(open, []byte("tok\n"), 0o644)
	os.Chmod(open, 0o644)
	if _, err := mcpserver.ReadTokens(mcpserver.TokenSources{File: open, FileWhat: "--token-file"}, loop); err == nil || !strings.HasPrefix(err.Error(), "--token-file: ") {
		t.Errorf("a token file others can read: %v", err)
	}

	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8931}
	if p := mcpserver.DefaultTokenFile("/run/user/1/surf", addr); p != "/run/user/1/surf/serve-8931.token" {
		t.Errorf("DefaultTokenFile = %q", p)
	}
}
