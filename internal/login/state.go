package login

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/sandbox"
)

// PassphraseEnv is the environment variable that may hold a state file's
// passphrase instead of --state-passphrase-file.
const PassphraseEnv = "SURF_STATE_PASSPHRASE"

// StateFlags are the one way surf's commands (run, visit, open, shell,
// serve, login, state, work, board state) take a saved identity:
//
//	--state FILE                  the storage-state file (Playwright's JSON)
//	--state-passphrase-file FILE  its age passphrase, in a file
//	--state-identity FILE         its age identity file (age-keygen)
//
// SURF_STATE_PASSPHRASE may hold the passphrase instead of a file. The
// passphrase is never a flag's value: command lines are visible to every
// user of the machine (ps) and kept in shell histories.
type StateFlags struct {
	Path           string
	PassphraseFile string
	IdentityFile   string
}

// AddStateFlags registers --state and the key flags on fs.
func AddStateFlags(fs *pflag.FlagSet) *StateFlags {
	f := &StateFlags{}
	fs.StringVar(&f.Path, "state", "", "load cookies and local storage from `FILE` and save them back at the end")
	fs.StringVar(&f.PassphraseFile, "state-passphrase-file", "", "the state file's age passphrase is in `FILE` (or in $"+PassphraseEnv+")")
	fs.StringVar(&f.IdentityFile, "state-identity", "", "the state file is encrypted to the age identity `FILE` (age-keygen -o FILE)")
	return f
}

// UsageError is a mistake in the state flags' combination: the command
// line is wrong, not the files it names.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// HintError is an error with advice for the person who gave the flags.
type HintError struct {
	Err error
	Fix string
}

func (e *HintError) Error() string { return e.Err.Error() }
func (e *HintError) Unwrap() error { return e.Err }

// Hint is the advice.
func (e *HintError) Hint() string { return e.Fix }

// File is the sandbox.StateFile the flags describe: the zero value without
// --state (or for nil flags). Key flags without --state are a *UsageError
// (the environment variable alone is not: it may be set for every
// command). getenv reads PassphraseEnv; nil reads nothing.
func (f *StateFlags) File(getenv func(string) string) (sandbox.StateFile, error) {
	if f == nil {
		return sandbox.StateFile{}, nil
	}
	if f.Path == "" {
		if f.PassphraseFile != "" || f.IdentityFile != "" {
			return sandbox.StateFile{}, &UsageError{"--state-passphrase-file and --state-identity need --state FILE"}
		}
		return sandbox.StateFile{}, nil
	}
	return f.Key(f.Path, getenv)
}

// Key is the state file at path with the key the flags give: the
// passphrase in --state-passphrase-file, the identity file of
// --state-identity (which must exist), or else the passphrase in
// PassphraseEnv (none when it is empty).
func (f *StateFlags) Key(path string, getenv func(string) string) (sandbox.StateFile, error) {
	sf := sandbox.StateFile{Path: path, IdentityFile: f.IdentityFile}
	if f.PassphraseFile != "" && f.IdentityFile != "" {
		return sandbox.StateFile{}, &UsageError{"--state-passphrase-file and --state-identity exclude each other"}
	}
	switch {
	case f.PassphraseFile != "":
		b, err := os.ReadFile(f.PassphraseFile)
		if err != nil {
			return sandbox.StateFile{}, fmt.Errorf("reading the state passphrase: %w", err)
		}
		sf.Passphrase = strings.TrimRight(string(b), "\r\n")
		if sf.Passphrase == "" {
			return sandbox.StateFile{}, fmt.Errorf("--state-passphrase-file %s is empty", f.PassphraseFile)
		}
	case f.IdentityFile != "":
		if _, err := os.Stat(f.IdentityFile); err != nil {
			return sandbox.StateFile{}, &HintError{Err: fmt.Errorf("--state-identity: %w", err), Fix: "make one with 'age-keygen -o " + f.IdentityFile + "'"}
		}
	default:
		if getenv != nil {
			sf.Passphrase = getenv(PassphraseEnv)
		}
	}
	return sf, nil
}

// ServeFile is the StateFile of a server that keeps named states in dir
// (surf serve --state-dir): --state's file with the key, or, with only
// dir, no file but the key that opens the directory's files. dir is
// created (0700) when missing. Without dir it is File, with key flags
// that need --state or dir.
func (f *StateFlags) ServeFile(dir string, getenv func(string) string) (sandbox.StateFile, error) {
	if dir == "" {
		if f.Path == "" && (f.PassphraseFile != "" || f.IdentityFile != "") {
			return sandbox.StateFile{}, &UsageError{"--state-passphrase-file and --state-identity need --state FILE or --state-dir DIR"}
		}
		return f.File(getenv)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return sandbox.StateFile{}, fmt.Errorf("--state-dir: %w", err)
	}
	if f.Path != "" {
		return f.File(getenv)
	}
	return f.Key("", getenv)
}

// StateHint is advice for an error of loading or saving a state file:
// how to give its key, or that the key is the wrong one; "" for other
// errors.
func StateHint(err error) string {
	switch {
	case errors.Is(err, sandbox.ErrStateEncrypted):
		return "give its key: --state-passphrase-file FILE, $" + PassphraseEnv + " or --state-identity FILE"
	case errors.Is(err, sandbox.ErrStateKey):
		return "it was saved with another passphrase or identity; without that key it cannot be read (log in again into a new file)"
	}
	return ""
}
