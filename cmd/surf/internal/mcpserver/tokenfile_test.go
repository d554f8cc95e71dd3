package mcpserver_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

func TestTokenFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if tok, err := mcpserver.ReadTokenFile("--token-file", write("ok", "  s3cret-token\n", 0o600)); err != nil || tok != "s3cret-token" {
		t.Errorf("ReadTokenFile = %q, %v", tok, err)
	}
	open := write("open", "tok\n", 0o644)
	_, err := mcpserver.ReadTokenFile("--token-file", open)
	var oe *mcpserver.OpenFileError
	if !errors.As(err, &oe) || oe.Hint() != "chmod 600 "+open || !strings.Contains(err.Error(), "--token-file: "+open+" is readable or writable by its group or others (mode 0644)") {
		t.Errorf("a 0644 token file: %v", err)
	}
	for name, text := range map[string]string{"empty": " \n", "two": "a b\n"} {
		if _, err := mcpserver.ReadTokenFile("--token-file", write(name, text, 0o600)); err == nil {
			t.Errorf("token file %q was taken", text)
		}
	}
	if _, err := mcpserver.ReadTokenFile("--token-file", dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as token file: %v", err)
	}

	ps, err := mcpserver.ReadPrincipals("--tokens", write("principals", "# who\nalice aaaaaaaaaaaaaaaaaaaaaaaa\n\nbob bbbbbbbbbbbbbbbbbbbbbbbb\n", 0o600))
	if err != nil || len(ps) != 2 || ps[0].Name != "alice" || ps[1].Token != "bbbbbbbbbbbbbbbbbbbbbbbb" {
		t.Errorf("ReadPrincipals = %+v, %v", ps, err)
	}
	for _, text := range []string{"# none\n", "alice\n", "alice tok extra\n"} {
		if _, err := mcpserver.ReadPrincipals("--tokens", write("bad", text, 0o600)); err == nil {
			t.Errorf("principals %q were taken", text)
		}
	}
}

// TestWriteTokenFile checks that the token file is replaced, not written
// through a link planted at its path, and is its owner's only.
func TestWriteTokenFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "serve.token")
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
	if err := mcpserver.WriteTokenFile(p, "tok"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, %v", fi.Mode(), err)
	}
	if tok, err := mcpserver.ReadTokenFile("--token-file", p); err != nil || tok != "tok" {
		t.Errorf("read back %q, %v", tok, err)
	}
}
