package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sashabaranov/go-openai"
)

func init() {
	scriptCmds["filesmodel"] = cmdFilesModel
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		// the fixture pages' own files, for scripts to compare with
		root, err := filepath.Abs(filepath.Join("..", "..", "testdata", "sites"))
		env.Setenv("FIX_DIR", root)
		return err
	})
}

// filesModel is a fake model for a task that uploads a file and
// downloads one, on testdata/sites/actions/files.html. Stateless, it
// reads what it was shown: until the page says what was uploaded, it
// uploads the file the task names ("Upload NAME") into the input
// labelled Attachment; then it clicks "Get the data" until a download is
// reported; then it answers with what the page said it got.
type filesModel struct{}

var (
	filesUploadRE = regexp.MustCompile(`Upload (\S+),`)
	filesInputRE  = regexp.MustCompile(`(?m)^(\d+) \S+ "Attachment"`)
	filesLinkRE   = regexp.MustCompile(`(?m)^(\d+) link "Get the data"`)
	filesGotRE    = regexp.MustCompile(`uploaded: ([^\n"<]+)`)
)

func (filesModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		http.Error(w, "not a chat completion", http.StatusBadRequest)
		return
	}
	var all, last string
	for _, msg := range req.Messages {
		text := msg.Content
		for _, p := range msg.MultiContent {
			text += p.Text
		}
		if msg.Role == openai.ChatMessageRoleUser || msg.Role == openai.ChatMessageRoleTool {
			all += text + "\n"
			last = text
		}
	}
	call := openai.ToolCall{ID: fmt.Sprintf("call_%d", len(req.Messages)), Type: openai.ToolTypeFunction}
	got := filesGotRE.FindStringSubmatch(all)
	input, link := filesInputRE.FindStringSubmatch(last), filesLinkRE.FindStringSubmatch(last)
	name := filesUploadRE.FindStringSubmatch(all)
	switch {
	case got == nil && input != nil && name != nil:
		call.Function = openai.FunctionCall{Name: "upload_file", Arguments: fmt.Sprintf(`{"target_id": %s, "path": %q}`, input[1], name[1])}
	case got != nil && !strings.Contains(all, "downloaded") && link != nil:
		call.Function = openai.FunctionCall{Name: "click", Arguments: fmt.Sprintf(`{"target_id": %s}`, link[1])}
	default:
		answer := "the page said nothing"
		if got != nil {
			answer = "the page said: uploaded: " + strings.TrimSpace(got[1])
		}
		a, _ := json.Marshal(map[string]string{"answer": answer})
		call.Function = openai.FunctionCall{Name: "stop_action", Arguments: string(a)}
	}
	resp := openai.ChatCompletionResponse{
		ID: "files", Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{call}}, FinishReason: openai.FinishReasonToolCalls}},
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// cmdFilesModel: filesmodel starts a filesModel and points
// OPENAI_BASE_URL at it.
func cmdFilesModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: filesmodel")
	}
	u, stop, err := startFilesModel()
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv("OPENAI_BASE_URL", u)
	ts.Setenv("OPENAI_API_KEY", "fake-key")
}

// startFilesModel serves a filesModel on loopback and returns its base URL.
func startFilesModel() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: filesModel{}}
	go srv.Serve(ln)
	return fmt.Sprintf("http://%s/v1", ln.Addr()), func() { srv.Close() }, nil
}

// tsFile is what file.mjs prints.
type tsFile struct {
	IsError  bool   `json:"isError"`
	Text     string `json:"text"`
	Resource *struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType"`
		Text     string `json:"text"`
		Blob     string `json:"blob"`
	} `json:"resource"`
}

// TestBoardFileTypeScriptClient is acceptance 4 of issue 31 over MCP: a
// task with an attachment is run by a "surf work" process, which uploads
// the attachment and downloads a file; once that process has exited, a
// real MCP client written by others (the official TypeScript SDK) reads
// the download through "surf serve --board", byte-identical, and the
// attachment as text.
func TestBoardFileTypeScriptClient(t *testing.T) {
	node := needMCPClient(t)
	data, dir := t.TempDir(), t.TempDir()
	sites, err := filepath.Abs(filepath.Join("..", "..", "testdata", "sites"))
	if err != nil {
		t.Fatal(err)
	}
	fix := httptest.NewServer(http.FileServer(http.Dir(sites)))
	t.Cleanup(fix.Close)
	modelURL, stopModel, err := startFilesModel()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopModel)
	note := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(note, []byte("attached-42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := surfCmd(args...)
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		kill := time.AfterFunc(4*time.Minute, func() { cmd.Process.Kill() })
		defer kill.Stop()
		if err := cmd.Wait(); err != nil {
			t.Fatalf("surf %v: %v\n%s", args, err, out.String())
		}
		return out.String()
	}
	run("board", "add", "Upload note.txt, then get the data.", "--id", "files", "--data", data,
		"--start-url", fix.URL+"/actions/files.html", "--attach", note)
	out := run("work", "--idle", "2s", "--data", data, "--allow", strings.TrimPrefix(fix.URL, "http://"), "--model", "test-model")
	if !strings.Contains(out, "the page said: uploaded: attached-42") {
		t.Fatalf("surf work did not run the task with its attachment:\n%s", out)
	}

	const token = "board-file-client-token-0123456789"
	url, _ := startServeHTTP(t, token, true, "--image", "none", "--board", "--data", data)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	read := func(name string) tsFile {
		t.Helper()
		cmd := exec.CommandContext(ctx, node, "file.mjs", "--url", url, "--token", token, "--id", "files", "--name", name)
		cmd.Dir = mcpClientDir
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("node file.mjs: %v\n%s", err, errOut.String())
		}
		var f tsFile
		if err := json.Unmarshal(out.Bytes(), &f); err != nil {
			t.Fatalf("file.mjs printed no JSON: %v\n%s", err, out.String())
		}
		return f
	}
	want, err := os.ReadFile(filepath.Join(sites, "actions", "files-data.bin"))
	if err != nil {
		t.Fatal(err)
	}
	got := read("data.bin")
	if got.IsError || got.Resource == nil {
		t.Fatalf("board_file data.bin: %+v", got)
	}
	blob, err := base64.StdEncoding.DecodeString(got.Resource.Blob)
	if err != nil || !bytes.Equal(blob, want) {
		t.Errorf("the client read %d bytes (%v), not the %d downloaded", len(blob), err, len(want))
	}
	if got.Resource.URI != "surf-board:///files/attempt-1/downloads/data.bin" || got.Resource.MIMEType != "application/octet-stream" {
		t.Errorf("the resource is %s (%s)", got.Resource.URI, got.Resource.MIMEType)
	}
	if got := read("note.txt"); got.IsError || got.Resource == nil || got.Resource.Text != "attached-42\n" {
		t.Errorf("board_file note.txt: %+v", got)
	}
}
