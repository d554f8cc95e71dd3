package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
)

// mcpClientDir holds the TypeScript MCP client (package.json pinning the
// official SDK, board.mjs); make setup installs its node_modules.
var mcpClientDir = filepath.Join("..", "..", "testdata", "mcpclient")

// needMCPClient returns node's path, when node and the client's
// node_modules are there. Without them the test fails in CI (CI=true) and
// is skipped elsewhere, saying to run make setup.
func needMCPClient(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(mcpClientDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	}
	if err != nil {
		msg := "the TypeScript MCP client is not installed (" + err.Error() + "): run make setup (it runs npm ci --prefix testdata/mcpclient; surf install --with-deps installs node and npm)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node
}

// tsSummary is what board.mjs prints.
type tsSummary struct {
	Tools []string `json:"tools"`
	Cycle struct {
		IsError bool   `json:"isError"`
		Text    string `json:"text"`
	} `json:"cycle"`
	Added []struct {
		ID    string   `json:"id"`
		State string   `json:"state"`
		After []string `json:"after"`
	} `json:"added"`
	Progress []struct {
		Progress float64 `json:"progress"`
		Message  string  `json:"message"`
	} `json:"progress"`
	Wait struct {
		IsError bool `json:"isError"`
		Tasks   []struct {
			ID     string `json:"id"`
			State  string `json:"state"`
			Answer string `json:"answer"`
		} `json:"tasks"`
	} `json:"wait"`
	Results map[string]struct {
		ID        string    `json:"id"`
		State     string    `json:"state"`
		Answer    string    `json:"answer"`
		EndReason string    `json:"end_reason"`
		Steps     int       `json:"steps"`
		Attempts  int       `json:"attempts"`
		Worker    string    `json:"worker"`
		Journal   string    `json:"journal"`
		Started   time.Time `json:"started"`
		Finished  time.Time `json:"finished"`
	} `json:"results"`
}

// TestBoardTypeScriptClient is acceptance 6 of the task board: a real MCP
// client written by others (the official TypeScript SDK, from npm) adds a
// diamond of tasks through "surf serve --board", waits for them with
// progress notifications, and reads their results. The tasks are run by
// a "surf work" process on the same board, in a real browser.
func TestBoardTypeScriptClient(t *testing.T) {
	node := needMCPClient(t)
	data := t.TempDir()
	const token = "board-ts-client-token-0123456789"

	url, _ := startServeHTTP(t, token, true, "--image", "none", "--board", "--data", data)

	// The workers: a "surf work" process on the same board (surf serve
	// started its embedded server over data), with a fake model that
	// reads the start page and answers its title.
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopModel)
	work := surfCmd("work", "--workers", "2", "--name", "ts-work", "--data", data, "--allow", site.Host, "--model", "test-model")
	work.Env = append(work.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
	var workOut syncBuffer
	work.Stdout, work.Stderr = &workOut, &workOut
	if err := work.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		work.Process.Signal(os.Interrupt)
		if err := work.Wait(); err != nil {
			t.Errorf("surf work: %v", err)
		}
		if t.Failed() {
			t.Logf("surf work's output:\n%s", workOut.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := board.Open(ctx, board.Config{Dir: data})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })

	run := exec.CommandContext(ctx, node, "board.mjs", "--url", url, "--token", token, "--timeout", "3m", "--start-url", site.URL+"/")
	run.Dir = mcpClientDir
	var out, errOut bytes.Buffer
	run.Stdout, run.Stderr = &out, &errOut
	if err := run.Run(); err != nil {
		t.Fatalf("node board.mjs: %v\nstderr:\n%s\nstdout:\n%s", err, errOut.String(), out.String())
	}
	var sum tsSummary
	if err := json.Unmarshal(out.Bytes(), &sum); err != nil {
		t.Fatalf("board.mjs printed no JSON summary: %v\n%s", err, out.String())
	}

	for _, n := range []string{"board_add", "board_status", "board_wait", "board_result", "board_cancel"} {
		if !slices.Contains(sum.Tools, n) {
			t.Errorf("the TypeScript client does not see %s: %v", n, sum.Tools)
		}
	}
	if !sum.Cycle.IsError || !strings.Contains(sum.Cycle.Text, "cycle") {
		t.Errorf("a cycle was not refused: %+v", sum.Cycle)
	}
	if _, err := b.Get(ctx, "X"); !errors.Is(err, board.ErrNotFound) {
		t.Errorf("the refused cycle left X on the board: %v", err)
	}
	if len(sum.Added) != 4 {
		t.Fatalf("added: %+v", sum.Added)
	}
	if sum.Wait.IsError || len(sum.Wait.Tasks) != 4 {
		t.Fatalf("board_wait: %+v", sum.Wait)
	}
	for _, tk := range sum.Wait.Tasks {
		if tk.State != "done" || !strings.HasPrefix(tk.Answer, "seen: ") || len(tk.Answer) == len("seen: ") {
			t.Errorf("waited %s: %+v", tk.ID, tk)
		}
	}
	for _, p := range sum.Progress {
		t.Logf("progress %v: %s", p.Progress, p.Message)
	}
	if len(sum.Progress) == 0 {
		t.Error("the client received no progress notifications")
	}
	for i := 1; i < len(sum.Progress); i++ {
		if sum.Progress[i].Progress <= sum.Progress[i-1].Progress {
			t.Errorf("progress did not rise: %+v", sum.Progress)
			break
		}
	}
	r := sum.Results
	for _, id := range []string{"A", "B", "C", "D"} {
		rec, ok := r[id]
		if !ok || rec.State != "done" || rec.Attempts != 1 || rec.EndReason != "answered" || rec.Journal == "" || rec.Started.IsZero() || rec.Finished.IsZero() {
			t.Fatalf("result of %s: %+v", id, rec)
		}
	}
	// A valid order: B and C after A, D after B and C.
	if r["B"].Started.Before(r["A"].Finished) || r["C"].Started.Before(r["A"].Finished) {
		t.Errorf("B or C started before A ended: %+v", r)
	}
	if r["D"].Started.Before(r["B"].Finished) || r["D"].Started.Before(r["C"].Finished) {
		t.Errorf("D started before B and C ended: %+v", r)
	}
}

// TestServeBoardFlags: the board flags without --board, and a board that
// cannot be opened, are refused with a clear error before any browser
// starts.
func TestServeBoardFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve", "--data", t.TempDir()}, 2, "--data, --nats, --creds, --tls-* and --nkey name the task board of --board"},
		{[]string{"serve", "--nats", "nats://127.0.0.1:1"}, 2, "task board of --board"},
		{[]string{"serve", "--board", "--nats", "nats://127.0.0.1:1"}, 1, "opening the board"},
		{[]string{"serve", "--board", "--creds", filepath.Join(t.TempDir(), "none.creds")}, 2, "--creds, --tls-ca, --tls-cert, --tls-key and --nkey are for a NATS server named with --nats"},
	} {
		cmd := surfCmd(c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != c.code {
			t.Errorf("surf %v: %v, want exit code %d\n%s", c.args, err, c.code, stderr.String())
			continue
		}
		if !strings.Contains(stderr.String(), c.want) {
			t.Errorf("surf %v: stderr lacks %q:\n%s", c.args, c.want, stderr.String())
		}
		if strings.Contains(stderr.String(), "serving MCP") {
			t.Errorf("surf %v started serving", c.args)
		}
	}
}
