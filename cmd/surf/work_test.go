package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/sandbox"
)

func init() {
	scriptCmds["workmodel"] = cmdWorkModel
	scriptCmds["board-add"] = cmdBoardAdd
	scriptCmds["board-records"] = cmdBoardRecords
	scriptCmds["board-file"] = cmdBoardFile
}

// workModel is a fake OpenAI-compatible model for board tasks, stateless
// so that any number of runs, in any order, on any process, get the same
// replies: at step N (counted from the assistant turns of the request)
// it reads the page or reopens the start URL, in turn, and at step steps
// it answers with the title of the page it was shown last. Each reply
// waits delay first.
type workModel struct {
	steps int
	delay time.Duration

	mu       sync.Mutex
	requests int
}

var (
	startRE = regexp.MustCompile(`Start at (\S+)\.`)
	titleRE = regexp.MustCompile(`title "([^"]*)"`)
)

func (m *workModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req openai.ChatCompletionRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "not a chat completion", http.StatusBadRequest)
		return
	}
	m.mu.Lock()
	m.requests++
	m.mu.Unlock()
	select {
	case <-time.After(m.delay):
	case <-r.Context().Done():
		return
	}
	step, start, title := 1, "", ""
	for _, msg := range req.Messages {
		text := msg.Content
		for _, p := range msg.MultiContent {
			text += p.Text
		}
		switch msg.Role {
		case openai.ChatMessageRoleAssistant:
			step++
		case openai.ChatMessageRoleUser:
			if s := startRE.FindStringSubmatch(text); s != nil && start == "" {
				start = s[1]
			}
			if t := titleRE.FindStringSubmatch(text); t != nil {
				title = t[1]
			}
		}
	}
	call := openai.ToolCall{ID: fmt.Sprintf("call_%d", step), Type: openai.ToolTypeFunction}
	switch {
	case step >= m.steps:
		answer, _ := json.Marshal(map[string]string{"answer": "seen: " + title})
		call.Function = openai.FunctionCall{Name: "stop_action", Arguments: string(answer)}
	case step%2 == 1:
		call.Function = openai.FunctionCall{Name: "read_page", Arguments: `{}`}
	default:
		u, _ := json.Marshal(map[string]string{"url": start})
		call.Function = openai.FunctionCall{Name: "visit_url", Arguments: string(u)}
	}
	resp := openai.ChatCompletionResponse{
		ID: fmt.Sprintf("work-%d", step), Object: "chat.completion", Model: req.Model,
		Choices: []openai.ChatCompletionChoice{{Message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant,
			ToolCalls: []openai.ToolCall{call}}, FinishReason: openai.FinishReasonToolCalls}},
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110},
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// startWorkModel serves m on loopback and returns its base URL.
func startWorkModel(m *workModel) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: m}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/v1", func() { srv.Close() }, nil
}

// cmdWorkModel: workmodel STEPS DELAY starts a workModel for the script
// and points OPENAI_BASE_URL at it.
func cmdWorkModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: workmodel STEPS DELAY")
	}
	m := &workModel{}
	if _, err := fmt.Sscan(args[0], &m.steps); err != nil {
		ts.Fatalf("workmodel: %v", err)
	}
	d, err := time.ParseDuration(args[1])
	ts.Check(err)
	m.delay = d
	u, stop, err := startWorkModel(m)
	ts.Check(err)
	ts.Defer(stop)
	ts.Setenv("OPENAI_BASE_URL", u)
	ts.Setenv("OPENAI_API_KEY", "fake-key")
}

// openTestBoard opens the board of dir from the test process.
func openTestBoard(ctx context.Context, dir string) (*board.Board, error) {
	return board.Open(ctx, board.Config{Dir: dir})
}

// cmdBoardAdd: board-add DIR FILE adds the tasks of FILE (JSON lines,
// $VARS expanded) to the board in DIR. It stands in for 'surf board add'
// until that lands.
func cmdBoardAdd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: board-add DIR FILE")
	}
	data := os.Expand(ts.ReadFile(args[1]), ts.Getenv)
	var tasks []board.Task
	sc := bufio.NewScanner(strings.NewReader(data))
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var t board.Task
		if err := json.Unmarshal(sc.Bytes(), &t); err != nil {
			ts.Fatalf("board-add: %v: %s", err, sc.Text())
		}
		tasks = append(tasks, t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := openTestBoard(ctx, ts.MkAbs(args[0]))
	ts.Check(err)
	defer b.Close()
	recs, err := b.Add(ctx, tasks...)
	ts.Check(err)
	for _, r := range recs {
		fmt.Fprintf(ts.Stdout(), "added %s %s\n", r.Task.ID, r.State)
	}
}

// cmdBoardRecords: board-records DIR prints each task of the board in DIR
// on a line: id, state, attempts, end reason, answer, reason and the
// files of its result. It stands in for 'surf board list'.
func cmdBoardRecords(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: board-records DIR")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := openTestBoard(ctx, ts.MkAbs(args[0]))
	ts.Check(err)
	defer b.Close()
	recs, err := b.List(ctx)
	ts.Check(err)
	for _, r := range recs {
		line := fmt.Sprintf("%s state=%s attempts=%d", r.Task.ID, r.State, r.Attempts)
		if res := r.Result; res != nil {
			line += fmt.Sprintf(" end=%s steps=%d answer=%q journal=%s report=%s images=%d", res.EndReason, res.Steps, res.Answer, res.Journal, res.Report, len(res.Images))
		}
		if r.Reason != "" {
			line += fmt.Sprintf(" reason=%q", r.Reason)
		}
		fmt.Fprintln(ts.Stdout(), line)
	}
}

// cmdBoardFile: board-file DIR NAME OUT copies a file of the board's file
// store to OUT.
func cmdBoardFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: board-file DIR NAME OUT")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := openTestBoard(ctx, ts.MkAbs(args[0]))
	ts.Check(err)
	defer b.Close()
	rc, err := b.File(ctx, args[1])
	if neg {
		if err == nil {
			rc.Close()
			ts.Fatalf("board-file: %s is there", args[1])
		}
		return
	}
	ts.Check(err)
	defer rc.Close()
	data, err := io.ReadAll(rc)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[2]), data, 0o644))
}

// TestWorkerKilledMidTask is acceptance 2 of issue 15: two 'surf work'
// processes share a board; the one running the task is SIGKILLed in the
// middle of it, and the other, after the lease, runs it to the end.
func TestWorkerKilledMidTask(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	model := &workModel{steps: 6, delay: time.Second}
	modelURL, stopModel, err := startWorkModel(model)
	if err != nil {
		t.Fatal(err)
	}
	defer stopModel()
	dir := filepath.Join(t.TempDir(), "board")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	type worker struct {
		name   string
		pid    int
		out    *lockedBuffer
		errb   *lockedBuffer
		exited chan error
	}
	start := func(name string) *worker {
		cmd := surfCmd("work", "--workers", "1", "--lease", "2s", "--idle", "3s", "--name", name,
			"--data", dir, "--allow", site.Host, "--model", "test-model", "--max-steps", "10")
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
		w := &worker{name: name, out: &lockedBuffer{}, errb: &lockedBuffer{}, exited: make(chan error, 1)}
		cmd.Stdout, cmd.Stderr = w.out, w.errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.pid = cmd.Process.Pid
		go func() { w.exited <- cmd.Wait() }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-w.exited
			if t.Failed() {
				t.Logf("%s's stdout:\n%s\nstderr:\n%s", name, w.out.String(), w.errb.String())
			}
		})
		return w
	}
	wa, wb := start("wa"), start("wb")

	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	recs, err := b.Add(ctx, board.Task{ID: "harbour", Instruction: "Look at the Harbour Branch page, then say its title.", StartURL: site.URL + "/branch/harbour"})
	if err != nil {
		t.Fatal(err)
	}
	id := recs[0].Task.ID

	// Wait until a worker is in the middle of the task.
	var victim, survivor *worker
	for ev, err := range b.Watch(ctx, id) {
		if err != nil {
			t.Fatalf("watching the task: %v", err)
		}
		r := ev.Record
		if r.State.Terminal() {
			t.Fatalf("the task ended before a worker could be killed: %+v", r)
		}
		if r.State == board.Running && strings.HasPrefix(r.Progress, "step 2:") {
			switch {
			case strings.HasPrefix(r.Worker, "wa/"):
				victim, survivor = wa, wb
			case strings.HasPrefix(r.Worker, "wb/"):
				victim, survivor = wb, wa
			default:
				t.Fatalf("the task runs on %q, neither worker", r.Worker)
			}
			break
		}
	}
	if victim == nil {
		t.Fatal("no worker ran the task")
	}
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.exited

	if _, err := b.Wait(ctx, id); err != nil {
		t.Fatalf("waiting for the task: %v", err)
	}
	all, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 {
		t.Fatalf("%d records, want 1", len(all))
	}
	r := all[0]
	if r.State != board.Done || r.Result == nil {
		t.Fatalf("the task ended %s (%s), want done", r.State, r.Reason)
	}
	if r.Attempts != 2 {
		t.Errorf("attempts = %d, want 2", r.Attempts)
	}
	if !strings.HasPrefix(r.Worker, survivor.name+"/") {
		t.Errorf("the task was finished by %q, want the survivor %s", r.Worker, survivor.name)
	}
	if r.Result.EndReason != string(journal.EndAnswered) || r.Result.Answer != "seen: Harbour Branch - Riverside Library" {
		t.Errorf("result %+v, want answered with the page's title", r.Result)
	}
	if want := id + "/attempt-2/journal.jsonl"; r.Result.Journal != want {
		t.Errorf("journal %q, want %q", r.Result.Journal, want)
	}
	if r.Result.Report == "" || len(r.Result.Images) == 0 {
		t.Errorf("the result has no report or no images: %+v", r.Result)
	}

	// The finished attempt's journal is complete and parses.
	rc, err := b.File(ctx, r.Result.Journal)
	if err != nil {
		t.Fatalf("fetching the journal: %v", err)
	}
	data, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatal(err)
	}
	jpath := filepath.Join(t.TempDir(), "journal.jsonl")
	if err := os.WriteFile(jpath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	entries, err := journal.Read(jpath)
	if err != nil {
		t.Fatalf("the journal does not parse: %v", err)
	}
	if len(entries) < 2 || entries[0].Event != journal.KindRunStarted {
		t.Fatalf("the journal does not start with the run: %d entries", len(entries))
	}
	last := entries[len(entries)-1]
	if last.Event != journal.KindEnded || last.EndReason != journal.EndAnswered || last.Steps != model.steps {
		t.Errorf("the journal ends with %+v, want the run's end, answered after %d steps", last, model.steps)
	}
	// The lost attempt left no files.
	if rc, err := b.File(ctx, id+"/attempt-1/journal.jsonl"); err == nil {
		rc.Close()
		t.Errorf("the killed attempt has a journal on the board")
	}

	// The survivor goes idle and exits 0, with its browser closed.
	select {
	case err := <-survivor.exited:
		if err != nil {
			t.Errorf("the surviving worker exited with %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the surviving worker did not exit when idle")
	}
	if !strings.Contains(survivor.out.String(), "done     "+id+"  worker "+survivor.name+"/1  attempt 2") {
		t.Errorf("the survivor did not print the task's end:\n%s", survivor.out.String())
	}
	if left := ownedBy(survivor.pid); len(left) > 0 {
		t.Errorf("browser processes outlived the surviving worker: %v", left)
	}
	// The killed worker's browser dies with it (parent-death signal); kill
	// what is left, and fail.
	deadline := time.Now().Add(30 * time.Second)
	for len(ownedBy(victim.pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := ownedBy(victim.pid); len(left) > 0 {
		for _, p := range left {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Errorf("browser processes outlived the killed worker: %v", left)
	}
	// What a SIGKILL leaves behind is the browser's temp profile; surf
	// removes such leftovers of dead processes (sandbox.RemoveStale).
	if _, err := sandbox.RemoveStale(victim.pid); err != nil {
		t.Logf("removing the killed worker's leftovers: %v", err)
	}
}
