package main

import (
	"errors"
	"io"

	"github.com/spf13/pflag"
)

// newFlags returns a flag set for c. Flags may come before or after
// positional arguments ("surf visit URL --json").
func newFlags(c *command) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(true)
	return fs
}

// parseFlags parses args into fs and turns a parse failure into a usage
// error for c. "-h"/"--help" is reported as errHelp, which commands return
// as is.
func parseFlags(c *command, fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return &usageError{cmd: c, msg: helpRequested}
		}
		if ue := unknownFlagError(c, fs, err); ue != nil {
			return ue
		}
		return usagef(c, "%v", err)
	}
	return nil
}
