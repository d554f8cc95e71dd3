package main

import "github.com/surfkit/surf/internal/testkit/fakeopenai"

// The agent's scripts run on the bundled demo site ($DEMO_URL, $DEMO_HOST)
// with a scripted model: "fakeopenai start FILE" points OPENAI_BASE_URL at
// a fake endpoint.
func init() {
	scriptCmds["fakeopenai"] = fakeopenai.TestscriptCmd()
}
