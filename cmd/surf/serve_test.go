package main

import (
	"bytes"
	"context"
	"image/jpeg"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/sandbox"
)

// TestServeStdio runs "surf serve" as a child process (this test binary,
// which testscript.Main turns into surf when argv[0] is "surf") and drives
// the demo site through it over stdio with the go-sdk client. When the
// client goes away, the server exits and its browser with it.
func TestServeStdio(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	cmd := surfCmd("serve", "--allow", site.Host, "--image", "som")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 20 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting surf serve: %v\n%s", err, stderr.String())
	}
	defer func() {
		if t.Failed() {
			t.Logf("surf serve's stderr:\n%s", stderr.String())
		}
	}()
	pid := cmd.Process.Pid

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var imgs []*mcp.ImageContent
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			text += c.Text
		case *mcp.ImageContent:
			imgs = append(imgs, c)
		}
	}
	if res.IsError || !strings.Contains(text, `title "Riverside Library"`) || !strings.Contains(text, `textbox "Search"`) {
		t.Errorf("visit_url: IsError=%v\n%s", res.IsError, text)
	}
	if len(imgs) != 1 || imgs[0].MIMEType != "image/jpeg" {
		t.Errorf("want one set-of-mark JPEG, got %d images", len(imgs))
	} else if _, err := jpeg.DecodeConfig(bytes.NewReader(imgs[0].Data)); err != nil {
		t.Errorf("the image is not a JPEG: %v", err)
	}

	// The policy of the flags: a host it leaves out is a tool error.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": "http://127.0.0.2:9/"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "denied") {
		t.Errorf("a denied URL: IsError=%v %q", res.IsError, resultText(res))
	}
	// No model configured: the websurfer tool says so.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "websurfer", Arguments: map[string]any{"instruction": "anything"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(resultText(res), "needs a model") {
		t.Errorf("websurfer without a model: IsError=%v %q", res.IsError, resultText(res))
	}
	if browsers := ownedBy(pid); len(browsers) == 0 {
		t.Errorf("no browser process of surf serve (pid %d) found while it runs", pid)
	}

	// The client goes away: stdin closes, the server exits cleanly and its
	// browser goes with it.
	t0 := time.Now()
	if err := cs.Close(); err != nil {
		t.Logf("closing the client: %v", err)
	}
	if d := time.Since(t0); d > 15*time.Second {
		t.Errorf("surf serve took %s to exit after stdin closed (the transport sends SIGTERM after 20s)", d)
	}
	if cmd.ProcessState == nil {
		t.Fatal("surf serve did not exit after the client left")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("surf serve exited with %d, want 0", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ownedBy(pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := ownedBy(pid); len(left) > 0 {
		t.Errorf("browser processes outlived surf serve: %v", left)
	}
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ownedBy lists the processes that the sandbox of process pid started
// (they carry sandbox.OwnerEnv=pid).
func ownedBy(pid int) []int {
	mark := []byte(sandbox.OwnerEnv + "=" + strconv.Itoa(pid) + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		if p, err := strconv.Atoi(filepath.Base(d)); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestServeUnsafeBindExitCode: an unsafe bind is bad usage (exit 2), and
// no browser starts.
func TestServeUnsafeBindExitCode(t *testing.T) {
	var out, errb bytes.Buffer
	cli := &CLI{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	if code := cli.Run(context.Background(), []string{"serve", "--http", "0.0.0.0:8931"}); code != 2 {
		t.Errorf("exit code %d, want 2; stderr:\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "--allow-remote") {
		t.Errorf("stderr does not name --allow-remote:\n%s", errb.String())
	}
}
