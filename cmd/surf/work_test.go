package main

import (
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

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/sandbox"
)

func init() {
	scriptCmds["workmodel"] = cmdWorkModel
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
// setBoardLease sets the lease of the board in dir (creating it) with
// 'surf board config --lease'.
func setBoardLease(t *testing.T, dir, lease string) {
	t.Helper()
	out, err := surfCmd("board", "config", "--lease", lease, "--data", dir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "lease  "+lease) {
		t.Fatalf("surf board config --lease %s: %v\n%s", lease, err, out)
	}
}

func openTestBoard(ctx context.Context, dir string) (*board.Board, error) {
	return board.Open(ctx, board.Config{Dir: dir})
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
		exited chan struct{} // closed when the process has exited
		err    error         // its exit, once exited is closed
	}
	start := func(name string) *worker {
		cmd := surfCmd("work", "--workers", "1", "--idle", "3s", "--name", name,
			"--data", dir, "--allow", site.Host, "--model", "test-model", "--max-steps", "10")
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
		w := &worker{name: name, out: &lockedBuffer{}, errb: &lockedBuffer{}, exited: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = w.out, w.errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.pid = cmd.Process.Pid
		go func() { w.err = cmd.Wait(); close(w.exited) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-w.exited
			if t.Failed() {
				t.Logf("%s's stdout:\n%s\nstderr:\n%s", name, w.out.String(), w.errb.String())
			}
		})
		return w
	}
	setBoardLease(t, dir, "2s")
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
	t.Logf("killed %s (pid %d) during %q; %d of its browser processes were left at once", victim.name, victim.pid, "step 2", len(ownedBy(victim.pid)))

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
	case <-survivor.exited:
		if survivor.err != nil {
			t.Errorf("the surviving worker exited with %v", survivor.err)
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
	removed, err := sandbox.RemoveStale(victim.pid)
	if err != nil {
		t.Logf("removing the killed worker's leftovers: %v", err)
	}
	t.Logf("the killed worker's leftovers, removed: %v", removed)
}

// TestWorkInterruptHandsBack: SIGINT stops 'surf work' in the middle of a
// task: the task goes back to the board (ready, the attempt not counted),
// the browser is closed and surf work exits 0.
func TestWorkInterruptHandsBack(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 20, delay: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stopModel()
	dir := filepath.Join(t.TempDir(), "board")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx, board.Task{ID: "long", Instruction: "Read the page many times.", StartURL: site.URL + "/branch/hill"}); err != nil {
		t.Fatal(err)
	}

	cmd := surfCmd("work", "--name", "wi", "--data", dir, "--allow", site.Host, "--model", "test-model", "--json")
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	})

	for ev, err := range b.Watch(ctx, "long") {
		if err != nil {
			t.Fatalf("watching the task: %v", err)
		}
		if ev.Record.State == board.Running && strings.HasPrefix(ev.Record.Progress, "step 2:") {
			break
		}
		if ev.Record.State.Terminal() {
			t.Fatalf("the task ended: %+v", ev.Record)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-ctx.Done():
		t.Fatal("surf work did not exit on SIGINT")
	}
	if waitErr != nil {
		t.Errorf("surf work exited with %v, want 0", waitErr)
	}
	if left := ownedBy(cmd.Process.Pid); len(left) > 0 {
		t.Errorf("browser processes outlived surf work: %v", left)
	}
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", cmd.Process.Pid)))
	if len(dirs) > 0 {
		t.Errorf("surf work left temp directories behind: %v", dirs)
	}
	r, err := b.Get(ctx, "long")
	if err != nil {
		t.Fatal(err)
	}
	if r.State != board.Ready || r.Attempts != 0 || r.Worker != "" {
		t.Errorf("after SIGINT the task is %s, attempts %d, worker %q; want ready, 0 attempts, no worker", r.State, r.Attempts, r.Worker)
	}
	var events []workEvent
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var e workEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("--json printed a line that is not JSON: %q", line)
		}
		events = append(events, e)
	}
	if len(events) != 2 || events[0].Event != "start" || events[1].Outcome != "handed_back" || events[1].Task != "long" || events[1].Worker != "wi/1" {
		t.Errorf("--json printed %+v, want the task's start and its hand back", events)
	}
}

// TestWorkKilledLeavesNothing is issue 28, point 7: a 'surf work'
// SIGKILLed in the middle of a task leaves its temp dirs (the browser's,
// the task's); the next 'surf work' to start removes them. That one runs
// the task again and, when the task is cancelled while it runs, prints it
// as cancelled, not handed back.
func TestWorkKilledLeavesNothing(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 30, delay: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stopModel()
	tmp := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "board")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	setBoardLease(t, dir, "2s")

	type worker struct {
		pid       int
		out, errb *lockedBuffer
		exited    chan struct{}
		err       error
	}
	start := func(name string, args ...string) *worker {
		cmd := surfCmd(append([]string{"work", "--name", name, "--json", "--data", dir,
			"--allow", site.Host, "--model", "test-model", "--max-steps", "40"}, args...)...)
		cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key", "TMPDIR="+tmp)
		w := &worker{out: &lockedBuffer{}, errb: &lockedBuffer{}, exited: make(chan struct{})}
		cmd.Stdout, cmd.Stderr = w.out, w.errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.pid = cmd.Process.Pid
		go func() { w.err = cmd.Wait(); close(w.exited) }()
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-w.exited
			for _, p := range ownedBy(w.pid) {
				syscall.Kill(p, syscall.SIGKILL)
			}
			if t.Failed() {
				t.Logf("%s's stdout:\n%s\nstderr:\n%s", name, w.out.String(), w.errb.String())
			}
		})
		return w
	}
	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx, board.Task{ID: "long", Instruction: "Read the page many times.", StartURL: site.URL + "/branch/hill"}); err != nil {
		t.Fatal(err)
	}
	runningAt := func(worker string) {
		t.Helper()
		for ev, err := range b.Watch(ctx, "long") {
			if err != nil {
				t.Fatalf("watching the task: %v", err)
			}
			r := ev.Record
			if r.State.Terminal() {
				t.Fatalf("the task ended: %+v", r)
			}
			if r.State == board.Running && r.Worker == worker && strings.HasPrefix(r.Progress, "step 2:") {
				return
			}
		}
	}
	list := func() []string {
		entries, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return names
	}

	wa := start("wa")
	runningAt("wa/1")
	if err := syscall.Kill(wa.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-wa.exited
	deadline := time.Now().Add(30 * time.Second)
	for len(ownedBy(wa.pid)) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	left := list()
	t.Logf("the killed worker (pid %d) left %q", wa.pid, left)
	var task bool
	for _, n := range left {
		task = task || strings.HasPrefix(n, fmt.Sprintf("surf-%d-task-", wa.pid))
	}
	if !task {
		t.Fatalf("the killed worker left no task dir to remove: %q", left)
	}

	wb := start("wb", "--idle", "3s")
	for !strings.Contains(wb.errb.String(), "waiting for tasks") {
		select {
		case <-wb.exited:
			t.Fatalf("the second worker exited: %v", wb.err)
		case <-ctx.Done():
			t.Fatal("the second worker did not start")
		case <-time.After(100 * time.Millisecond):
		}
	}
	for _, n := range left {
		if _, err := os.Stat(filepath.Join(tmp, n)); err == nil {
			t.Errorf("the killed worker's %s is still there after another worker started", n)
		}
	}

	// attempt 2, on wb, is cancelled while it runs
	runningAt("wb/1")
	if _, err := b.Cancel(ctx, "long", "the test cancels it"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-wb.exited:
		if wb.err != nil {
			t.Errorf("the second worker exited with %v, want 0", wb.err)
		}
	case <-ctx.Done():
		t.Fatal("the second worker did not exit when idle")
	}
	var finish *workEvent
	for _, line := range strings.Split(strings.TrimSpace(wb.out.String()), "\n") {
		var e workEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("--json printed a line that is not JSON: %q", line)
		}
		if e.Event == "finish" {
			finish = &e
		}
	}
	if finish == nil || finish.Task != "long" || finish.Attempt != 2 || finish.Outcome != "cancelled" {
		t.Errorf("the cancelled task was printed as %+v, want outcome cancelled", finish)
	}
	// Playwright's driver removes its artifacts dir as the browser
	// closes; on a busy machine it may finish a moment after surf exits:
	// what counts is what is still there once that has had its time.
	deadline = time.Now().Add(30 * time.Second)
	for len(list()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if left := list(); len(left) > 0 {
		t.Errorf("30 s after the second worker exited, the temp dir holds %q", left)
	}
}

// TestWorkFilesNotStoredIsNoted is issue 28, point 5 for the task runner:
// a run that finished but whose files cannot be stored (the board's file
// store is gone) is recorded done with a note, not run again.
func TestWorkFilesNotStoredIsNoted(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 4, delay: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stopModel()
	dir := filepath.Join(t.TempDir(), "board")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := b.Add(ctx, board.Task{ID: "nofiles", Instruction: "Say the page's title.", StartURL: site.URL + "/branch/hill"}); err != nil {
		t.Fatal(err)
	}
	cmd := surfCmd("work", "--name", "wn", "--idle", "3s", "--max-attempts", "1", "--data", dir, "--allow", site.Host, "--model", "test-model")
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key")
	out, errb := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	})
	for ev, err := range b.Watch(ctx, "nofiles") {
		if err != nil {
			t.Fatalf("watching the task: %v", err)
		}
		if ev.Record.State == board.Running && ev.Record.Progress != "" {
			break
		}
		if ev.Record.State.Terminal() {
			t.Fatalf("the task ended before its file store could be removed: %+v", ev.Record)
		}
	}
	// the board's file store goes away under the running worker
	addr, err := os.ReadFile(filepath.Join(dir, "server.addr"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(addr))
	nc, err := nats.Connect(lines[0], nats.Token(lines[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteObjectStore(ctx, board.FilesBucket); err != nil {
		t.Fatal(err)
	}
	recs, err := b.Wait(ctx, "nofiles")
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if r.State != board.Done || r.Attempts != 1 || r.Result == nil || r.Result.EndReason != string(journal.EndAnswered) {
		t.Fatalf("the task ended %s after %d attempts (%q, result %+v); want done on the first", r.State, r.Attempts, r.Reason, r.Result)
	}
	if r.Result.Journal != "" {
		t.Errorf("the result names a journal, %q, that was not stored", r.Result.Journal)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "not all of the run's files were stored") {
		t.Errorf("notes %q, want one saying the files were not stored", r.Notes)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("surf work exited with %v", waitErr)
		}
	case <-ctx.Done():
		t.Fatal("surf work did not exit when idle")
	}
}
