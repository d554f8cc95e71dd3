package mcpserver

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	aliceToken = "alice-token-0123456789abcdef0123"
	bobToken   = "bob-token-fedcba9876543210fedcba"
)

// TestPrincipalsKeepApart serves two principals (HTTPOptions.Principals):
// each one's board tasks and saved states are its own. Bob does not see,
// wait for, read, cancel or run after Alice's task, and cannot forge the
// principal label; Alice's named session saves its state under her
// directory, and Bob's under his.
func TestPrincipalsKeepApart(t *testing.T) {
	f := serveFixture(t)
	bf := newBoardFixture(t)
	dir := t.TempDir()
	s := newServer(t, f, func(c *Config) { c.Board = bf.b; c.StateDir = dir })
	endpoint := serveHTTP(t, s, HTTPOptions{Principals: []Principal{{Name: "alice", Token: aliceToken}, {Name: "bob", Token: bobToken}}})
	alice := connect(t, endpoint, nil, &http.Client{Transport: bearer{aliceToken}})
	bob := connect(t, endpoint, nil, &http.Client{Transport: bearer{bobToken}})

	mustCall(t, alice, BoardAddTool, map[string]any{"tasks": []map[string]any{{"id": "a1", "instruction": "block"}}})
	if got := text(mustCall(t, alice, BoardStatusTool, nil)); !strings.Contains(got, `"a1"`) {
		t.Fatalf("alice's board_status does not list her task: %s", got)
	}
	if got := text(mustCall(t, bob, BoardStatusTool, nil)); strings.Contains(got, "a1") {
		t.Errorf("bob's board_status lists alice's task: %s", got)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{BoardStatusTool, map[string]any{"ids": []string{"a1"}}},
		{BoardResultTool, map[string]any{"id": "a1"}},
		{BoardWaitTool, map[string]any{"ids": []string{"a1"}, "timeout": "1s"}},
		{BoardCancelTool, map[string]any{"id": "a1"}},
		{BoardFileTool, map[string]any{"id": "a1", "name": "journal.jsonl"}},
		{BoardAddTool, map[string]any{"tasks": []map[string]any{{"id": "b1", "instruction": "x", "after": []string{"a1"}}}}},
		{BoardAddTool, map[string]any{"tasks": []map[string]any{{"id": "b2", "instruction": "x", "labels": map[string]string{PrincipalLabel: "alice"}}}}},
	} {
		res := call(t, bob, c.tool, c.args)
		if !res.IsError {
			t.Errorf("bob's %s(%v) succeeded: %s", c.tool, c.args, text(res))
		} else if strings.Contains(text(res), "block") {
			t.Errorf("bob's %s(%v) shows alice's task: %s", c.tool, c.args, text(res))
		}
	}
	// Alice's task was not cancelled by bob.
	if got := text(mustCall(t, alice, BoardStatusTool, map[string]any{"ids": []string{"a1"}})); strings.Contains(got, "cancelled") {
		t.Errorf("alice's task after bob's board_cancel: %s", got)
	}
	mustCall(t, alice, BoardCancelTool, map[string]any{"id": "a1"})

	// Saved states: the same state name is a different file for each.
	for _, p := range []struct {
		cs   *mcp.ClientSession
		name string
	}{{alice, "alice"}, {bob, "bob"}} {
		cs := p.cs
		mustCall(t, cs, "session_open", map[string]any{"name": "w", "state": "mail"})
		mustCall(t, cs, "visit_url", inSession("w", map[string]any{"url": f.URL + "/cookie?set=" + p.name}))
		mustCall(t, cs, "session_save", map[string]any{"name": "w"})
		mustCall(t, cs, "session_close", map[string]any{"name": "w"})
		if _, err := os.Stat(filepath.Join(dir, p.name, "mail.json")); err != nil {
			t.Errorf("%s's state: %v", p.name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mail.json")); !os.IsNotExist(err) {
		t.Errorf("a principal's state was saved in the shared directory: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "bob", "mail.json"))
	if strings.Contains(string(b), "alice") {
		t.Errorf("bob's state holds alice's cookie")
	}
}
