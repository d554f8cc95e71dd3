package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"

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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: filesModel{}}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("OPENAI_BASE_URL", fmt.Sprintf("http://%s/v1", ln.Addr()))
	ts.Setenv("OPENAI_API_KEY", "fake-key")
}
