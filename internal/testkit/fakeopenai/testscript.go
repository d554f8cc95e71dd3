package fakeopenai

import (
	"fmt"
	"strconv"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestscriptCmd returns a testscript command, to be registered as
// "fakeopenai" in testscript.Params.Cmds, that runs a fake model server
// inside the test process for one script:
//
//	fakeopenai start SCRIPT   start a server for the script file (relative
//	                          to $WORK) and set OPENAI_BASE_URL to it, and
//	                          OPENAI_API_KEY to "fake-key" if unset
//	fakeopenai check          fail if a request broke an expectation or did
//	                          not match, or a turn was not requested
//	fakeopenai requests N     fail unless exactly N requests arrived
//
// The server is closed when the script ends. "! fakeopenai check" passes
// when check would fail, for tests of failure reporting.
func TestscriptCmd() func(ts *testscript.TestScript, neg bool, args []string) {
	var mu sync.Mutex
	servers := map[*testscript.TestScript]*Server{}
	get := func(ts *testscript.TestScript) *Server {
		mu.Lock()
		defer mu.Unlock()
		s := servers[ts]
		if s == nil {
			ts.Fatalf("fakeopenai: no server; run fakeopenai start SCRIPT first")
		}
		return s
	}
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) == 0 {
			ts.Fatalf("usage: fakeopenai start SCRIPT | check | requests N")
		}
		switch args[0] {
		case "start":
			if neg || len(args) != 2 {
				ts.Fatalf("usage: fakeopenai start SCRIPT")
			}
			script, err := Load(ts.MkAbs(args[1]))
			ts.Check(err)
			s, err := Listen("127.0.0.1:0", script)
			ts.Check(err)
			mu.Lock()
			if old := servers[ts]; old != nil {
				old.Close()
			}
			servers[ts] = s
			mu.Unlock()
			ts.Defer(func() {
				s.Close()
				mu.Lock()
				delete(servers, ts)
				mu.Unlock()
			})
			ts.Setenv("OPENAI_BASE_URL", s.URL())
			if ts.Getenv("OPENAI_API_KEY") == "" {
				ts.Setenv("OPENAI_API_KEY", "fake-key")
			}
		case "check":
			err := get(ts).Err()
			switch {
			case err != nil && !neg:
				ts.Fatalf("%v", err)
			case err == nil && neg:
				ts.Fatalf("fakeopenai: no failures, want some")
			}
		case "requests":
			if len(args) != 2 {
				ts.Fatalf("usage: fakeopenai requests N")
			}
			want, err := strconv.Atoi(args[1])
			ts.Check(err)
			got := len(get(ts).Requests())
			if (got == want) == neg {
				ts.Fatalf("fakeopenai: %d requests, want %s%d", got, map[bool]string{true: "not ", false: ""}[neg], want)
			}
		default:
			ts.Fatalf("fakeopenai: unknown subcommand %q", fmt.Sprint(args[0]))
		}
	}
}
