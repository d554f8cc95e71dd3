package main

import (
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/surfkit/surf/internal/demosite"
	"github.com/surfkit/surf/internal/fakeopenai"
	"github.com/surfkit/surf/sandbox"
)

// The agent's scripts run on the bundled demo site with a scripted model:
// $DEMO_URL and $DEMO_HOST name the site, and "fakeopenai start FILE"
// points OPENAI_BASE_URL at a fake endpoint.
func init() {
	scriptCmds["fakeopenai"] = fakeopenai.TestscriptCmd()
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		site, err := demosite.Start()
		if err != nil {
			return err
		}
		env.Defer(site.Close)
		env.Setenv("DEMO_URL", site.URL)
		env.Setenv("DEMO_HOST", site.Host)
		// testscript hides the real home: name the driver the tests use.
		if os.Getenv("PLAYWRIGHT_DRIVER_PATH") == "" {
			dir, err := sandbox.DefaultDriverDir()
			if err != nil {
				return err
			}
			env.Setenv("PLAYWRIGHT_DRIVER_PATH", dir)
		}
		return nil
	})
}
