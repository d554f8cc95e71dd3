package main

import (
	"context"
	"errors"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
)

// The session client lives in cmd/surf/internal/session (client.go); main
// registers its flags and turns its errors into the CLI's.

// addSessionFlag registers --session on fs; its default is $SURF_SESSION
// or "default".
func addSessionFlag(fs *pflag.FlagSet, cli *CLI) *string {
	def := cli.Getenv("SURF_SESSION")
	if def == "" {
		def = session.DefaultName
	}
	return fs.String("session", def, "the session's name")
}

// sessionError turns an error of the session client into the CLI's: a
// daemon's failed response, or the client's own error with its hint and
// exit code.
func sessionError(err error) error {
	var re *daemon.ResponseError
	var he *daemon.HintError
	switch {
	case errors.As(err, &re):
		return responseError(&re.Response)
	case errors.As(err, &he):
		e := he.Err
		if he.Hint != "" {
			e = withHint(e, he.Hint)
		}
		if he.Code != 0 {
			e = &exitError{code: he.Code, err: e}
		}
		return e
	}
	return err
}

// callSession sends one request to the daemon of session name and returns
// its response; a failed response is returned as an error carrying the
// daemon's message, hint and exit code.
func callSession(ctx context.Context, cli *CLI, name string, req daemon.Request) (*daemon.Response, error) {
	resp, err := session.Call(ctx, cli.Getenv, name, req)
	return resp, sessionError(err)
}

// responseError turns a failed response into the CLI's error.
func responseError(resp *daemon.Response) error {
	var err error = errors.New(resp.Error)
	if resp.Hint != "" {
		err = withHint(err, resp.Hint)
	}
	code := resp.ExitCode
	if code == 0 {
		code = 1
	}
	return &exitError{code: code, err: err}
}

// openFlagNames are the flags "surf open" hands to the daemon: the browser
// flags and --idle. Only "surf open" takes them; they are fixed for the
// session's life.
func openFlagNames() map[string]bool {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	addBrowserFlags(fs)
	addStateFlags(fs)
	names := map[string]bool{"idle": true}
	fs.VisitAll(func(f *pflag.Flag) { names[f.Name] = true })
	return names
}
