package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
)

// Tokens never come as a flag's value: every user of the machine reads
// the command lines of every process (ps, /proc/PID/cmdline). They come
// from an environment variable or from a file only its owner can read.

// MaxTokenFile bounds a token file (and a principals file).
const MaxTokenFile = 1 << 20

// OpenFileError is a secret file that its group or others may read or
// write; Hint says how to fix it.
type OpenFileError struct {
	Path string
	Perm fs.FileMode
	err  error
}

func (e *OpenFileError) Error() string { return e.err.Error() }

// Hint is the command that closes the file to others.
func (e *OpenFileError) Hint() string { return "chmod 600 " + e.Path }

// readSecretFile reads a file that holds a secret, refusing one that is
// not a regular file or that its group or others may read or write. Its
// errors start with what (a flag's name).
func readSecretFile(what, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s is not a regular file", what, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, &OpenFileError{Path: path, Perm: perm,
			err: fmt.Errorf("%s: %s is readable or writable by its group or others (mode %04o): another user could take the token", what, path, perm)}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxTokenFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > MaxTokenFile {
		return nil, fmt.Errorf("%s: %s is over %d bytes", what, path, MaxTokenFile)
	}
	return b, nil
}

// ReadTokenFile reads one token, the only line of a file only its owner
// can read (else an *OpenFileError). Its errors start with what, such as
// the flag that named the file.
func ReadTokenFile(what, path string) (string, error) {
	b, err := readSecretFile(what, path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s: %s is empty", what, path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: %s holds more than one word; the token is its only line", what, path)
	}
	return tok, nil
}

// ReadPrincipals reads a principals file (surf serve --tokens), which
// only its owner may read: one principal a line, its name and its token
// separated by spaces; blank lines and lines starting with '#' are
// skipped. The principals are checked with CheckPrincipals.
func ReadPrincipals(what, path string) ([]Principal, error) {
	b, err := readSecretFile(what, path)
	if err != nil {
		return nil, err
	}
	var ps []Principal
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: %s:%d: want NAME TOKEN, got %d words", what, path, n, len(f))
		}
		ps = append(ps, Principal{Name: f[0], Token: f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: %s names no principal", what, path)
	}
	if err := CheckPrincipals(ps); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", what, path, err)
	}
	return ps, nil
}

// WriteTokenFile writes token to path with mode 0600, as its only line.
// An existing file there is replaced, never written through (it may be a
// link to another file); a file half written is removed.
func WriteTokenFile(path, token string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replacing the token file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("writing the token file: %w", err)
	}
	if _, err := io.WriteString(f, token+"\n"); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return fmt.Errorf("writing the token file: %w", err)
	}
	return nil
}
