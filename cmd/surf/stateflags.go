package main

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/surfkit/surf/internal/login"
	"github.com/surfkit/surf/sandbox"
)

// stateFlags are the --state flags (login.StateFlags) with the CLI's exit
// codes and hints on their errors.
type stateFlags struct{ *login.StateFlags }

// addStateFlags registers --state and the key flags on fs.
func addStateFlags(fs *pflag.FlagSet) *stateFlags {
	return &stateFlags{login.AddStateFlags(fs)}
}

// file is the sandbox.StateFile the flags describe (login.StateFlags.File);
// nil flags describe none.
func (f *stateFlags) file(getenv func(string) string) (sandbox.StateFile, error) {
	if f == nil {
		return sandbox.StateFile{}, nil
	}
	sf, err := f.File(getenv)
	return sf, stateFlagsError(err)
}

// key is the state file at path with the key the flags give.
func (f *stateFlags) key(path string, getenv func(string) string) (sandbox.StateFile, error) {
	sf, err := f.Key(path, getenv)
	return sf, stateFlagsError(err)
}

// serveFile is serve's StateFile (login.StateFlags.ServeFile).
func (f *stateFlags) serveFile(dir string, getenv func(string) string) (sandbox.StateFile, error) {
	sf, err := f.ServeFile(dir, getenv)
	return sf, stateFlagsError(err)
}

// stateFlagsError gives a mistake in the state flags exit code 2 and
// carries the hint of a missing identity file.
func stateFlagsError(err error) error {
	var ue *login.UsageError
	var he *login.HintError
	switch {
	case errors.As(err, &ue):
		return &exitError{code: 2, err: err}
	case errors.As(err, &he):
		return withHint(err, he.Fix)
	}
	return err
}

// stateError adds advice to an error of loading or saving a state file.
func stateError(err error) error {
	if hint := login.StateHint(err); hint != "" {
		return withHint(err, hint)
	}
	return err
}

func plural(n int, what string) string {
	return fmt.Sprintf("%d %s", n, pluralWord(n, what, what+"s"))
}
