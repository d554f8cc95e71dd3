package mcpserver

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/board"
)

// fixtureDownload is what the board fixture's "download" tasks download:
// every byte value, so that nothing is lost to a text encoding.
var fixtureDownload = func() []byte {
	b := make([]byte, 3000)
	for i := range b {
		b[i] = byte(i * 13)
	}
	return b
}()

// TestBoardFile: an MCP client reads what a task downloaded (a blob,
// byte-identical) and a file attached to it (text); board_result lists
// both; an unknown name or a file over the cap is a tool error that says
// what to do. (TestPrincipalsKeepApart: another principal's task is no
// task.)
func TestBoardFile(t *testing.T) {
	bf := newBoardFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	task := board.Task{ID: "dl", Instruction: "download"}
	task.Attach("note.txt", func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("attached-42\n")), nil })
	if _, err := bf.b.Add(ctx, task); err != nil {
		t.Fatal(err)
	}
	if recs, err := bf.b.Wait(ctx, "dl"); err != nil || recs[0].State != board.Done {
		t.Fatalf("the task: %+v %v", recs, err)
	}
	s := newServer(t, serveFixture(t), func(c *Config) { c.Board = bf.b })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)

	rec := decodeResult[BoardRecord](t, mustCall(t, cs, BoardResultTool, jsonArgs(`{"id":"dl"}`)))
	if len(rec.Downloads) != 1 || rec.Downloads[0].Name != "data.bin" || len(rec.Attachments) != 1 || rec.Attachments[0].Name != "note.txt" {
		t.Fatalf("board_result lists downloads %+v, attachments %+v", rec.Downloads, rec.Attachments)
	}

	res := mustCall(t, cs, BoardFileTool, jsonArgs(`{"id":"dl","name":"data.bin"}`))
	info := structured[BoardFileInfo](t, listedSchemas(t, cs), BoardFileTool, res)
	blob := embedded(t, res)
	if info.Kind != "download" || info.Size != int64(len(fixtureDownload)) || blob.MIMEType != "application/octet-stream" || blob.URI != "surf-board:///dl/attempt-1/downloads/data.bin" {
		t.Errorf("the download: %+v, resource %s %s", info, blob.URI, blob.MIMEType)
	}
	if !bytes.Equal(blob.Blob, fixtureDownload) {
		t.Errorf("the client read %d bytes, not the %d downloaded", len(blob.Blob), len(fixtureDownload))
	}

	res = mustCall(t, cs, BoardFileTool, jsonArgs(`{"id":"dl","name":"note.txt"}`))
	if txt := embedded(t, res); txt.Text != "attached-42\n" || !strings.HasPrefix(txt.MIMEType, "text/plain") || len(txt.Blob) != 0 {
		t.Errorf("the attachment: %q %s", txt.Text, txt.MIMEType)
	}

	res = call(t, cs, BoardFileTool, jsonArgs(`{"id":"dl","name":"../../etc/passwd"}`))
	if !res.IsError || !strings.Contains(text(res), "has no file") || !strings.Contains(text(res), "data.bin, note.txt") {
		t.Errorf("an unknown name: %s", text(res))
	}
	res = call(t, cs, BoardFileTool, jsonArgs(`{"id":"nope","name":"data.bin"}`))
	if !res.IsError || !strings.Contains(text(res), "no such task") {
		t.Errorf("an unknown task: %s", text(res))
	}
	boardFileCap = 1000
	t.Cleanup(func() { boardFileCap = MaxBoardFileBytes })
	res = call(t, cs, BoardFileTool, jsonArgs(`{"id":"dl","name":"data.bin"}`))
	if !res.IsError || !strings.Contains(text(res), "is 3000 bytes, more than board_file gives (1000)") || !strings.Contains(text(res), "surf board get dl data.bin") {
		t.Errorf("a file over the cap: %s", text(res))
	}
	if len(res.Content) != 1 {
		t.Errorf("an error result carries %d contents", len(res.Content))
	}
}

// embedded is the embedded resource of a tool result.
func embedded(t *testing.T, res *mcp.CallToolResult) *mcp.ResourceContents {
	t.Helper()
	for _, c := range res.Content {
		if e, ok := c.(*mcp.EmbeddedResource); ok && e.Resource != nil {
			return e.Resource
		}
	}
	t.Fatalf("no embedded resource in %s", text(res))
	return nil
}
