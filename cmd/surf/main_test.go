package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets testscript run the surf binary in-process: scripts under
// testdata/script call "surf" and get this package's Main.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"surf": func() { os.Exit(Main()) },
	})
}

func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams(t))
}

// scriptParams is shared by the script tests; setup hooks that need a
// browser or fixture servers add themselves in scriptSetups.
func scriptParams(t *testing.T) testscript.Params {
	return testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: false,
		Setup: func(env *testscript.Env) error {
			for _, s := range scriptSetups {
				if err := s(env); err != nil {
					return err
				}
			}
			return nil
		},
		Cmds: scriptCmds,
	}
}

// scriptSetups and scriptCmds are extended from other _test.go files' init
// functions, so that each command's tests can add what they need.
var (
	scriptSetups []func(*testscript.Env) error
	scriptCmds   = map[string]func(ts *testscript.TestScript, neg bool, args []string){}
)
