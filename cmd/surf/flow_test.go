package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sashabaranov/go-openai"
)

func init() {
	scriptCmds["flowmodel"] = cmdFlowModel
}

// flowModel is a fake model for tasks that run after others. Stateless,
// it answers at once: "KEY saw TITLE", KEY being what the task says
// before its first colon and TITLE the page's title, followed, when the
// task was handed results of the tasks it runs after, by "after" and
// those results ("B=...; C=..."), read from the quoted block. When
// stop_action takes data it gives {"title": TITLE}. It writes the first
// user message of each run to DIR/KEY.txt, for the script to check what
// the model saw.
type flowModel struct{ dir string }

var (
	flowKeyRE    = regexp.MustCompile(`^Task: ([A-Za-z0-9_-]+):`)
	flowResultRE = regexp.MustCompile(`(?s)Task ([A-Za-z0-9_-]+) answered:\n<<<([0-9a-f]+)\n(.*?)\n([0-9a-f]+)>>>`)
)

func (m *flowModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) < 2 {
		http.Error(w, "not a chat completion", http.StatusBadRequest)
		return
	}
	text := func(msg openai.ChatCompletionMessage) string {
		t := msg.Content
		for _, p := range msg.MultiContent {
			t += p.Text
		}
		return t
	}
	first := text(req.Messages[1])
	key := "task"
	if k := flowKeyRE.FindStringSubmatch(first); k != nil {
		key = k[1]
	}
	title := ""
	for _, msg := range req.Messages {
		if t := titleRE.FindStringSubmatch(text(msg)); t != nil && msg.Role == openai.ChatMessageRoleUser {
			title = t[1]
		}
	}
	if err := os.WriteFile(filepath.Join(m.dir, key+".txt"), []byte(first), 0o644); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	answer := key + " saw " + title
	var got []string
	for _, res := range flowResultRE.FindAllStringSubmatch(first, -1) {
		if res[2] == res[4] {
			got = append(got, res[1]+"="+res[3])
		}
	}
	if len(got) > 0 {
		slices.Sort(got)
		answer += " after " + strings.Join(got, "; ")
	}
	args := map[string]any{"answer": answer}
	for _, t := range req.Tools {
		if t.Function != nil && t.Function.Name == "stop_action" {
			b, _ := json.Marshal(t.Function.Parameters)
			if strings.Contains(string(b), `"data"`) {
				args["data"] = map[string]string{"title": title}
			}
		}
	}
	a, _ := json.Marshal(args)
	resp := openai.ChatCompletionResponse{
		ID: "flow", Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "stop_action", Arguments: string(a)}}}}, FinishReason: openai.FinishReasonToolCalls}},
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// cmdFlowModel: flowmodel DIR starts a flowModel writing to DIR and
// points OPENAI_BASE_URL at it.
func cmdFlowModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: flowmodel DIR")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: &flowModel{dir: dir}}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("OPENAI_BASE_URL", fmt.Sprintf("http://%s/v1", ln.Addr()))
	ts.Setenv("OPENAI_API_KEY", "fake-key")
}
