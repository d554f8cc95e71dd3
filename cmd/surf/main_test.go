package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/sandbox"
)

// TestMain lets testscript run the surf binary in-process: scripts under
// testdata/script call "surf" and get this package's Main.
func TestMain(m *testing.M) {
	sandbox.RunLauncher()
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
			if err := baseSetup(env); err != nil {
				return err
			}
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

// baseSetup gives every script the machine's browser settings (scripts run
// with HOME=/no-home, so the driver directory is named explicitly) and the
// bundled demo site on loopback ($DEMO_URL, $DEMO_HOST).
func baseSetup(env *testscript.Env) error {
	for _, k := range []string{"SURF_CHROMIUM", "PLAYWRIGHT_NODEJS_PATH", "SURF_BWRAP", "npm_config_registry", "SURF_DEBUG"} {
		if v := os.Getenv(k); v != "" && env.Getenv(k) == "" {
			env.Setenv(k, v)
		}
	}
	if env.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
		d := os.Getenv("PLAYWRIGHT_DRIVER_PATH")
		if d == "" {
			var err error
			if d, err = sandbox.DefaultDriverDir(); err != nil {
				return err
			}
		}
		env.Setenv("PLAYWRIGHT_DRIVER_PATH", d)
	}
	site, err := demosite.Start()
	if err != nil {
		return err
	}
	env.Defer(site.Close)
	env.Setenv("DEMO_URL", site.URL)
	env.Setenv("DEMO_HOST", site.Host)
	return nil
}

// scriptSetups and scriptCmds are extended from other _test.go files' init
// functions, so that each command's tests can add what they need.
var (
	scriptSetups []func(*testscript.Env) error
	scriptCmds   = map[string]func(ts *testscript.TestScript, neg bool, args []string){}
)
