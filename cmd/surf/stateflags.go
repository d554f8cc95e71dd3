package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/surfkit/surf/sandbox"
)

// passphraseEnv is the environment variable that may hold a state file's
// passphrase instead of --state-passphrase-file.
const passphraseEnv = "SURF_STATE_PASSPHRASE"

// stateFlags is the one way commands (run, visit, open, shell, serve,
// login, state) take a saved identity:
//
//	--state FILE                  the storage-state file (Playwright's JSON)
//	--state-passphrase-file FILE  its age passphrase, in a file
//	--state-identity FILE         its age identity file (age-keygen)
//
// SURF_STATE_PASSPHRASE may hold the passphrase instead of a file. The
// passphrase is never a flag's value: command lines are visible to every
// user of the machine (ps) and kept in shell histories.
type stateFlags struct {
	path     string
	passFile string
	identity string
}

// addStateFlags registers --state and the key flags on fs.
func addStateFlags(fs *pflag.FlagSet) *stateFlags {
	f := &stateFlags{}
	fs.StringVar(&f.path, "state", "", "load cookies and local storage from `FILE` and save them back at the end")
	fs.StringVar(&f.passFile, "state-passphrase-file", "", "the state file's age passphrase is in `FILE` (or in $"+passphraseEnv+")")
	fs.StringVar(&f.identity, "state-identity", "", "the state file is encrypted to the age identity `FILE` (age-keygen -o FILE)")
	return f
}

// stateFlagsHelp is the usage text of the state flags.
var stateFlagsHelp = helpText("state-flags")

// file is the sandbox.StateFile the flags describe: the zero value without
// --state. Key flags without --state are bad usage (the environment
// variable alone is not: it may be set for every command).
func (f *stateFlags) file(getenv func(string) string) (sandbox.StateFile, error) {
	if f == nil {
		return sandbox.StateFile{}, nil
	}
	if f.path == "" {
		if f.passFile != "" || f.identity != "" {
			return sandbox.StateFile{}, &exitError{code: 2, err: errors.New("--state-passphrase-file and --state-identity need --state FILE")}
		}
		return sandbox.StateFile{}, nil
	}
	return f.key(f.path, getenv)
}

// key is the state file at path with the key the flags give.
func (f *stateFlags) key(path string, getenv func(string) string) (sandbox.StateFile, error) {
	sf := sandbox.StateFile{Path: path, IdentityFile: f.identity}
	if f.passFile != "" && f.identity != "" {
		return sandbox.StateFile{}, &exitError{code: 2, err: errors.New("--state-passphrase-file and --state-identity exclude each other")}
	}
	switch {
	case f.passFile != "":
		b, err := os.ReadFile(f.passFile)
		if err != nil {
			return sandbox.StateFile{}, fmt.Errorf("reading the state passphrase: %w", err)
		}
		sf.Passphrase = strings.TrimRight(string(b), "\r\n")
		if sf.Passphrase == "" {
			return sandbox.StateFile{}, fmt.Errorf("--state-passphrase-file %s is empty", f.passFile)
		}
	case f.identity != "":
		if _, err := os.Stat(f.identity); err != nil {
			return sandbox.StateFile{}, withHint(fmt.Errorf("--state-identity: %w", err), "make one with 'age-keygen -o "+f.identity+"'")
		}
	default:
		sf.Passphrase = getenv(passphraseEnv)
	}
	return sf, nil
}

// serveFile is serve's StateFile: --state's file with the key, or, with
// only --state-dir, no file but the key that opens the directory's files.
// The directory is created (0700) when missing.
func (f *stateFlags) serveFile(dir string, getenv func(string) string) (sandbox.StateFile, error) {
	if dir == "" {
		if f.path == "" && (f.passFile != "" || f.identity != "") {
			return sandbox.StateFile{}, &exitError{code: 2, err: errors.New("--state-passphrase-file and --state-identity need --state FILE or --state-dir DIR")}
		}
		return f.file(getenv)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sandbox.StateFile{}, fmt.Errorf("--state-dir: %w", err)
	}
	if f.path != "" {
		return f.file(getenv)
	}
	return f.key("", getenv)
}

// stateError adds advice to an error of loading or saving a state file.
func stateError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sandbox.ErrStateEncrypted):
		return withHint(err, "give its key: --state-passphrase-file FILE, $"+passphraseEnv+" or --state-identity FILE")
	case errors.Is(err, sandbox.ErrStateKey):
		return withHint(err, "it was saved with another passphrase or identity; without that key it cannot be read (log in again into a new file)")
	}
	return err
}

func plural(n int, what string) string {
	return fmt.Sprintf("%d %s", n, pluralWord(n, what, what+"s"))
}
