package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// Tokens never come as a flag's value: every user of the machine reads
// the command lines of every process (ps, /proc/PID/cmdline). They come
// from an environment variable or from a file only its owner can read.

// maxTokenFile bounds a token file (and a --tokens file).
const maxTokenFile = 1 << 20

// readSecretFile reads a file that holds a secret, refusing one that is
// not a regular file or that its group or others may read or write.
func readSecretFile(flag, path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %s is not a regular file", flag, path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, withHint(fmt.Errorf("%s: %s is readable or writable by its group or others (mode %04o): another user could take the token", flag, path, perm),
			"chmod 600 "+path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(b) > maxTokenFile {
		return nil, fmt.Errorf("%s: %s is over %d bytes", flag, path, maxTokenFile)
	}
	return b, nil
}

// readTokenFile reads one token from a file only its owner can read.
func readTokenFile(flag, path string) (string, error) {
	b, err := readSecretFile(flag, path)
	if err != nil {
		return "", err
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("%s: %s is empty", flag, path)
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("%s: %s holds more than one word; the token is its only line", flag, path)
	}
	return tok, nil
}

// readPrincipals reads a --tokens file: one principal a line, its name
// and its token separated by spaces; blank lines and lines starting with
// '#' are skipped.
func readPrincipals(flag, path string) ([]mcpserver.Principal, error) {
	b, err := readSecretFile(flag, path)
	if err != nil {
		return nil, err
	}
	var ps []mcpserver.Principal
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("%s: %s:%d: want NAME TOKEN, got %d words", flag, path, n, len(f))
		}
		ps = append(ps, mcpserver.Principal{Name: f[0], Token: f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("%s: %s names no principal", flag, path)
	}
	if err := mcpserver.CheckPrincipals(ps); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", flag, path, err)
	}
	return ps, nil
}

// errTokenFlag is the error of a flag that used to take a token as its
// value.
func errTokenFlag(c *command, flag, instead string) error {
	return usagef(c, "%s no longer takes a token: a flag's value shows in ps, where every local user can read it; %s", flag, instead)
}
