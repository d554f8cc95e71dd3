package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// startServeHTTP starts "surf serve --http 127.0.0.1:0 ARGS..." with the
// bearer token and returns its MCP endpoint and process. At cleanup it is
// interrupted; with cleanExit its exit must be clean; when the test failed,
// its stderr is logged.
func startServeHTTP(t *testing.T, token string, cleanExit bool, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := surfCmd(append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logMu sync.Mutex
	var logs bytes.Buffer
	endpoint := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "surf: serving MCP (streamable HTTP) at "); ok {
				endpoint <- rest
			}
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if err := cmd.Wait(); err != nil && cleanExit {
			t.Errorf("surf serve: %v", err)
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("surf serve's stderr:\n%s", logs.String())
			logMu.Unlock()
		}
	})
	select {
	case url := <-endpoint:
		return url, cmd
	case <-time.After(2 * time.Minute):
		t.Fatal("surf serve did not start")
	}
	return "", nil
}
