package mcpserver

import (
	"bytes"
	"context"
	"mime"
	"net/url"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/tools"
)

// board_file gives a client a task's file: what its run downloaded, or a
// file attached to it. It is a tool rather than MCP resources: a task's
// files come and go with its runs, and a tool call goes through what
// every board call does (the caller's principal owns the task, the call
// timeout, the client leaving), which resources/read would bypass. The
// file comes back as an embedded resource (text for text, else a base64
// blob) after its description in JSON, up to MaxBoardFileBytes.

// BoardFileTool is the name of the tool that reads a task's file.
const BoardFileTool = "board_file"

// MaxBoardFileBytes is the largest file board_file returns; a larger one
// is an error that says how to get it ('surf board get').
const MaxBoardFileBytes = 8 << 20

// boardFileCap is MaxBoardFileBytes, lowered by tests.
var boardFileCap int64 = MaxBoardFileBytes

// BoardFileArgs is the input of board_file.
type BoardFileArgs struct {
	ID   string `json:"id" jsonschema:"The task's id." schema:"minLength=1,maxLength=64"`
	Name string `json:"name" jsonschema:"The file's name, as board_result lists it under downloads or attachments." schema:"minLength=1,maxLength=300"`
}

// fileOutKey carries where board_file puts the file it read, for
// boardHandler to embed in the MCP result.
type fileOutKey struct{}

// boardFileOut is a file board_file read.
type boardFileOut struct {
	res *mcp.ResourceContents
}

// BoardFileInfo is the JSON text of board_file's result.
type BoardFileInfo struct {
	Task string `json:"task"`
	Kind string `json:"kind"` // download or attachment
	board.File
	MIMEType string `json:"mime_type"`
	URI      string `json:"uri"`
}

func (s *Server) boardFile(ctx context.Context, in BoardFileArgs) (*tools.Result, error) {
	r, err := s.boardGet(ctx, in.ID)
	if err != nil {
		return nil, boardError(ctx, "reading the board", err)
	}
	f, err := r.FindFile(in.Name)
	if err != nil {
		return nil, tools.Errorf("%v", err)
	}
	if f.Size > boardFileCap {
		return nil, tools.Errorf("%s is %d bytes, more than board_file gives (%d); get it with 'surf board get %s %s -o FILE' where the board is reachable", f.Name, f.Size, boardFileCap, r.Task.ID, f.Name)
	}
	var buf bytes.Buffer
	if err := s.cfg.Board.ReadFile(ctx, f, &buf); err != nil {
		return nil, boardError(ctx, "reading "+f.Name, err)
	}
	info := BoardFileInfo{Task: r.Task.ID, Kind: "attachment", File: f, MIMEType: fileMIME(f.Name, buf.Bytes()),
		URI: "surf-board:///" + (&url.URL{Path: f.Path}).EscapedPath()}
	if r.Result != nil {
		for _, d := range r.Result.Downloads {
			if d == f {
				info.Kind = "download"
			}
		}
	}
	rc := &mcp.ResourceContents{URI: info.URI, MIMEType: info.MIMEType}
	if strings.HasPrefix(info.MIMEType, "text/") {
		rc.Text = buf.String()
	} else {
		rc.Blob = buf.Bytes()
	}
	if out, ok := ctx.Value(fileOutKey{}).(*boardFileOut); ok {
		out.res = rc
	}
	return jsonResult(info)
}

// fileMIME is a file's media type: by its extension, else text/plain
// for UTF-8 text without NULs, else application/octet-stream.
func fileMIME(name string, data []byte) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		if strings.HasPrefix(t, "text/") && !utf8.Valid(data) {
			return "application/octet-stream"
		}
		return t
	}
	if utf8.Valid(data) && !bytes.ContainsRune(data, 0) {
		return "text/plain; charset=utf-8"
	}
	return "application/octet-stream"
}

// withFile adds the file board_file read to its MCP result.
func withFile(res *mcp.CallToolResult, out *boardFileOut) *mcp.CallToolResult {
	if out.res != nil && !res.IsError {
		res.Content = append(res.Content, &mcp.EmbeddedResource{Resource: out.res})
	}
	return res
}
