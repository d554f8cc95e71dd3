package main

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/bench"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/tools"
)

// oversize is the size of the argument the tests send: 10 MB.
const oversize = 10_000_000

// maxGrowthKB bounds how far surf's peak resident memory may rise above
// its baseline while it refuses the oversized argument: 200 MB.
const maxGrowthKB = 200 * 1024

// surfCmd is "surf ARGS..." run as a child process (this test binary,
// which testscript.Main turns into surf when argv[0] is "surf"), without
// the caller's model settings.
func surfCmd(args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "surf"
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "SURF_MODEL=") && !strings.HasPrefix(kv, "SURF_MCP_TOKEN=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// procKBOf reads a "Key: N kB" line of /proc/PID/status.
func procKBOf(t *testing.T, pid int, key string) int64 {
	t.Helper()
	kb := bench.ProcKB(pid, "status", key+":")
	if kb == 0 {
		t.Fatalf("no %s for pid %d", key, pid)
	}
	return kb
}

// resetPeak sets a process's VmHWM back to its VmRSS and returns that
// baseline, in KiB.
func resetPeak(t *testing.T, pid int) int64 {
	t.Helper()
	if err := os.WriteFile("/proc/"+strconv.Itoa(pid)+"/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak RSS: %v", err)
	}
	return procKBOf(t, pid, "VmRSS")
}

// TestOversizedArgumentMCP sends a 10 MB tool argument to "surf serve
// --http": it is refused unread with an error naming the limit (and not
// quoting the argument), surf's peak RSS stays within 200 MB of where it
// was, and the server goes on serving.
func TestOversizedArgumentMCP(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	const token = "0123456789abcdef0123456789abcdef"
	url, cmd := startServeHTTP(t, token, false, "--allow", site.Host, "--image", "none")
	pid := cmd.Process.Pid
	hc := &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	session := func() *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	visit := func(cs *mcp.ClientSession) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
		if err != nil || res.IsError {
			t.Fatalf("visit_url: %v %+v", err, res)
		}
	}
	cs := session()
	visit(cs) // the session's browser context is open: the baseline is a working server

	base := resetPeak(t, pid)
	huge := strings.Repeat("x", oversize)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "input_text", Arguments: map[string]any{"input_field_id": 1, "text_value": huge}})
	var msg string
	switch {
	case err != nil:
		msg = err.Error()
	case res.IsError:
		msg = bench.FirstText(res)
	default:
		t.Fatal("a 10 MB argument was accepted")
	}
	peak := procKBOf(t, pid, "VmHWM")
	t.Logf("refused: %s", msg)
	t.Logf("baseline RSS %d MB, peak %d MB", base/1024, peak/1024)
	if !strings.Contains(msg, strconv.Itoa(mcpserver.MaxRequestBytes)) {
		t.Errorf("the error does not name the limit (%d bytes): %s", mcpserver.MaxRequestBytes, msg)
	}
	if strings.Contains(msg, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx") {
		t.Errorf("the error quotes the argument: %.300s", msg)
	}
	if peak-base > maxGrowthKB {
		t.Errorf("peak RSS rose %d MB above the baseline, want under %d MB", (peak-base)/1024, maxGrowthKB/1024)
	}
	visit(session()) // still serving
}

// TestOversizedArgumentModel has the model answer with a 10 MB tool
// argument in "surf run": the call is refused with an error naming the
// limit, which the model gets as the tool's result; the run goes on to
// answer; the journal never holds the argument; and surf's peak RSS
// stays within 200 MB of where it was when the model was asked.
func TestOversizedArgumentModel(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	args := `{"url": "` + strings.Repeat("x", oversize) + `"}`
	limit := strconv.Itoa(tools.DefaultMaxArgBytes)
	fake := fakeopenai.Start(t, &fakeopenai.Script{Turns: []fakeopenai.Turn{
		{
			Name: "an oversized call",
			// The delays let the test read surf's memory while it waits.
			Reply: fakeopenai.Reply{Delay: time.Second, Usage: &fakeopenai.Usage{PromptTokens: 100, CompletionTokens: 100},
				ToolCalls: []fakeopenai.ToolCall{{Name: "visit_url", Arguments: args}}},
		},
		{
			Name:   "the refusal comes back",
			Expect: fakeopenai.Expect{ToolContains: fakeopenai.Strings{"at most " + limit + " allowed per tool call"}},
			Reply: fakeopenai.Reply{Delay: time.Second,
				ToolCalls: []fakeopenai.ToolCall{{Name: "stop_action", Arguments: `{"answer": "refused"}`}}},
		},
	}})
	journal := filepath.Join(t.TempDir(), "journal.jsonl")
	cmd := surfCmd("run", "open the page", "--model", "m", "--start-url", site.URL+"/", "--allow", site.Host, "--journal", journal, "--approve", "deny")
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+fake.URL(), "OPENAI_API_KEY=fake-key")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	pid := cmd.Process.Pid
	// waitRequests waits for the model's n-th request; surf is then
	// waiting for the reply (and alive).
	waitRequests := func(n int) {
		t.Helper()
		for len(fake.Requests()) < n {
			select {
			case err := <-exited:
				t.Fatalf("surf run ended early (%v):\n%s\n%s", err, stdout.String(), stderr.String())
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	waitRequests(1)
	base := resetPeak(t, pid)
	waitRequests(2)
	peak := procKBOf(t, pid, "VmHWM")
	if err := <-exited; err != nil {
		t.Fatalf("surf run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("baseline RSS %d MB, peak %d MB", base/1024, peak/1024)
	if peak-base > maxGrowthKB {
		t.Errorf("peak RSS rose %d MB above the baseline, want under %d MB", (peak-base)/1024, maxGrowthKB/1024)
	}
	if !strings.Contains(stdout.String(), "refused") {
		t.Errorf("the run did not answer:\n%s", stdout.String())
	}
	fi, err := os.Stat(journal)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<20 {
		t.Errorf("the journal is %d bytes: it holds the oversized argument", fi.Size())
	}
	j, _ := os.ReadFile(journal)
	if !bytes.Contains(j, []byte("at most "+limit+" allowed per tool call")) {
		t.Errorf("the journal does not record the refusal:\n%.2000s", j)
	}
}

// TestOversizedLineStdio sends "surf serve" on stdio a tool call line of
// 10 MB: the MCP SDK stops reading it at the limit and ends the
// connection, and surf says why, naming the limit.
func TestOversizedLineStdio(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	cmd := surfCmd("serve", "--allow", site.Host, "--image", "none")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	out := bufio.NewReader(stdout)
	stdin.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"))
	if line, err := out.ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q %v\n%s", line, err, stderr.String())
	}
	stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
	go func() {
		stdin.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"visit_url","arguments":{"url":"` + strings.Repeat("x", oversize) + `"}}}` + "\n"))
		stdin.Close()
	}()
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("surf serve exited without an error")
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("surf serve did not end the connection")
	}
	want := "the client sent a message over " + strconv.Itoa(mcpserver.MaxRequestBytes) + " bytes, the limit"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
	}
}
