package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/board"
)

// boardFixture is a board in a temp dir with in-process workers whose
// runs answer from the instruction: the layer under test is MCP. A task
// whose instruction is "block" runs until it is cancelled.
type boardFixture struct {
	b *board.Board

	mu    sync.Mutex
	spans map[string][2]time.Time // when each task ran
}

func newBoardFixture(t *testing.T) *boardFixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := board.Open(ctx, board.Config{Dir: t.TempDir(), Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	bf := &boardFixture{b: b, spans: map[string][2]time.Time{}}
	wctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Work(wctx, board.WorkConfig{Workers: 3, Name: "w", Run: bf.run}) }()
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("workers: %v", err)
		}
		b.Close()
	})
	return bf
}

func (bf *boardFixture) run(ctx context.Context, c *board.Claim) (*board.Result, error) {
	start := time.Now()
	c.Progress(ctx, "working on "+c.Task.ID)
	d := 200 * time.Millisecond
	if c.Task.Instruction == "block" {
		d = time.Hour
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(d):
	}
	journal, err := c.PutFile(ctx, "journal.jsonl", strings.NewReader(`{"task":"`+c.Task.ID+`"}`+"\n"))
	if err != nil {
		return nil, err
	}
	bf.mu.Lock()
	bf.spans[c.Task.ID] = [2]time.Time{start, time.Now()}
	bf.mu.Unlock()
	res := &board.Result{Answer: "answer to " + c.Task.Instruction, EndReason: "answered", Steps: 2, Tokens: 150, Journal: journal}
	if c.Task.Instruction == "download" {
		f, err := c.PutDownload(ctx, "data.bin", func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(fixtureDownload)), nil })
		if err != nil {
			return nil, err
		}
		res.Downloads = append(res.Downloads, f)
	}
	if len(c.Task.OutputSchema) > 0 {
		res.Data = json.RawMessage(`{"n":1}`)
	}
	return res, nil
}

// decodeResult reads a board tool's JSON result.
func decodeResult[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	txt := text(res)
	if i := strings.Index(txt, "{"); i > 0 { // an error result: its message, then the JSON
		txt = txt[i:]
	}
	if err := json.Unmarshal([]byte(txt), &v); err != nil {
		t.Fatalf("result is not JSON: %v\n%s", err, text(res))
	}
	return v
}

type taskList struct {
	Tasks []BoardTask `json:"tasks"`
	Open  []string    `json:"open"`
}

func states(ts []BoardTask) map[string]string {
	m := map[string]string{}
	for _, t := range ts {
		m[t.ID] = t.State
	}
	return m
}

func TestBoardTools(t *testing.T) {
	bf := newBoardFixture(t)
	s := newServer(t, serveFixture(t), func(c *Config) { c.Board = bf.b })
	for _, n := range []string{BoardAddTool, BoardStatusTool, BoardWaitTool, BoardResultTool, BoardCancelTool} {
		if !slices.Contains(s.Tools(), n) {
			t.Fatalf("%s is not listed: %v", n, s.Tools())
		}
	}
	plog := &progressLog{}
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), &mcp.ClientOptions{ProgressNotificationHandler: plog.handler}, nil)
	ctx := context.Background()

	// The listed schema of board_add has the tasks' labels.
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range lt.Tools {
		if tl.Name == BoardAddTool {
			b, _ := json.Marshal(tl.InputSchema)
			if !strings.Contains(string(b), `"labels"`) || !strings.Contains(string(b), `"after"`) {
				t.Errorf("board_add's schema lacks labels or after: %s", b)
			}
		}
	}

	t.Run("cycle refused", func(t *testing.T) {
		res := call(t, cs, BoardAddTool, jsonArgs(`{"tasks":[
			{"id":"X","instruction":"x","after":["Z"]},
			{"id":"Y","instruction":"y","after":["X"]},
			{"id":"Z","instruction":"z","after":["Y"]}]}`))
		if !res.IsError || !strings.Contains(text(res), "cycle") || !strings.Contains(text(res), "X") {
			t.Fatalf("a cycle was not refused naming it: %s", text(res))
		}
		if _, err := bf.b.Get(ctx, "X"); !errors.Is(err, board.ErrNotFound) {
			t.Errorf("a refused batch left X on the board: %v", err)
		}
	})
	t.Run("unknown dependency and bad input refused", func(t *testing.T) {
		for args, want := range map[string]string{
			`{"tasks":[{"id":"U","instruction":"u","after":["nowhere"]}]}`:      "nowhere",
			`{"tasks":[{"id":"U","instruction":"u","allow":["exa mple.com"]}]}`: "allow",
			`{"tasks":[{"id":"U","instruction":"u","max_time":"soon"}]}`:        "max_time",
			`{"tasks":[{"id":"U","instruction":"u","labels":{"team":3}}]}`:      "labels",
			`{"tasks":[{"id":"U","instruction":"u","colour":"red"}]}`:           "colour",
			`{"tasks":[]}`: "tasks",
		} {
			res := call(t, cs, BoardAddTool, jsonArgs(args))
			if !res.IsError || !strings.Contains(text(res), want) {
				t.Errorf("%s: want an error naming %q, got %s", args, want, text(res))
			}
		}
		if _, err := bf.b.Get(ctx, "U"); !errors.Is(err, board.ErrNotFound) {
			t.Errorf("refused input left U on the board: %v", err)
		}
	})

	var added taskList
	t.Run("add with dependencies", func(t *testing.T) {
		res := mustCall(t, cs, BoardAddTool, jsonArgs(`{"tasks":[
			{"id":"A","instruction":"find the attractions","allow":["example.org"],"labels":{"trip":"paris"}},
			{"id":"B","instruction":"find the hotels","after":["A"],"max_time":"2m","max_steps":10},
			{"id":"C","instruction":"find the restaurants","after":["A"]},
			{"id":"D","instruction":"plan the day","after":["B","C"],"start_url":"https://example.org/"}]}`))
		added = decodeResult[taskList](t, res)
		st := states(added.Tasks)
		if len(st) != 4 || st["B"] != "pending" || st["D"] != "pending" || (st["A"] != "ready" && st["A"] != "running" && st["A"] != "done") {
			t.Fatalf("states after add: %v", st)
		}
		rec, err := bf.b.Get(ctx, "A")
		if err != nil {
			t.Fatal(err)
		}
		if rec.Task.Labels["trip"] != "paris" || rec.Task.Policy == nil || len(rec.Task.Policy.Allow) != 1 {
			t.Errorf("A's labels or policy were not kept: %+v", rec.Task)
		}
		if rec, _ := bf.b.Get(ctx, "B"); time.Duration(rec.Task.MaxTime) != 2*time.Minute || rec.Task.MaxSteps != 10 {
			t.Errorf("B's limits were not kept: %+v", rec.Task)
		}
	})

	t.Run("wait with progress", func(t *testing.T) {
		res := callWithToken(t, cs, "wait-1", BoardWaitTool, jsonArgs(`{"ids":["A","B","C","D"],"timeout":"2m"}`))
		got := decodeResult[taskList](t, res)
		for _, tk := range got.Tasks {
			if tk.State != "done" || tk.Answer == "" {
				t.Errorf("%s: %+v", tk.ID, tk)
			}
		}
		if len(got.Tasks) != 4 || len(got.Open) != 0 {
			t.Fatalf("wait: %+v", got)
		}
		awaitProgress(t, plog, "wait-1", "D done")
		bf.mu.Lock()
		sp := bf.spans
		bf.mu.Unlock()
		if !sp["B"][1].Before(sp["D"][0]) || !sp["C"][1].Before(sp["D"][0]) {
			t.Errorf("D ran before B and C ended: %v", sp)
		}
	})

	t.Run("status", func(t *testing.T) {
		all := decodeResult[taskList](t, mustCall(t, cs, BoardStatusTool, map[string]any{}))
		if st := states(all.Tasks); len(st) != 4 || st["D"] != "done" {
			t.Errorf("status of all: %v", st)
		}
		one := decodeResult[taskList](t, mustCall(t, cs, BoardStatusTool, map[string]any{"ids": []string{"C"}}))
		if len(one.Tasks) != 1 || one.Tasks[0].ID != "C" || one.Tasks[0].Answer != "answer to find the restaurants" || one.Tasks[0].Worker == "" || one.Tasks[0].Attempts != 1 {
			t.Errorf("status of C: %+v", one.Tasks)
		}
		none := decodeResult[taskList](t, mustCall(t, cs, BoardStatusTool, map[string]any{"state": "failed"}))
		if len(none.Tasks) != 0 {
			t.Errorf("failed tasks: %+v", none.Tasks)
		}
		if res := call(t, cs, BoardStatusTool, map[string]any{"ids": []string{"nope"}}); !res.IsError || !strings.Contains(text(res), "nope") {
			t.Errorf("status of an unknown id: %s", text(res))
		}
	})

	t.Run("result", func(t *testing.T) {
		r := decodeResult[BoardRecord](t, mustCall(t, cs, BoardResultTool, map[string]any{"id": "D"}))
		if r.State != "done" || r.Answer != "answer to plan the day" || r.EndReason != "answered" || r.Steps != 2 || r.Tokens != 150 || r.Attempts != 1 {
			t.Errorf("result of D: %+v", r)
		}
		if r.Journal == "" || !slices.Equal(r.After, []string{"B", "C"}) || r.StartURL != "https://example.org/" || r.Finished.IsZero() {
			t.Errorf("result of D lacks its journal, after, start URL or times: %+v", r)
		}
		rc, err := bf.b.File(ctx, r.Journal)
		if err != nil {
			t.Fatalf("the journal %q named in the result is not in the file store: %v", r.Journal, err)
		}
		rc.Close()
		if res := call(t, cs, BoardResultTool, map[string]any{"id": "nope"}); !res.IsError {
			t.Errorf("result of an unknown id: %s", text(res))
		}
	})

	t.Run("cancel and wait timeout", func(t *testing.T) {
		mustCall(t, cs, BoardAddTool, jsonArgs(`{"tasks":[{"id":"H","instruction":"block"},{"id":"G","instruction":"g","after":["H"]}]}`))
		res := call(t, cs, BoardWaitTool, jsonArgs(`{"ids":["H","G"],"timeout":"1s"}`))
		if !res.IsError || !strings.Contains(text(res), "timed out") {
			t.Fatalf("a wait that timed out: %s", text(res))
		}
		if got := decodeResult[taskList](t, res); len(got.Open) != 2 {
			t.Errorf("open after the timeout: %+v", got)
		}
		c := decodeResult[BoardTask](t, mustCall(t, cs, BoardCancelTool, map[string]any{"id": "H", "reason": "not needed"}))
		if c.State != "cancelled" || c.Reason != "not needed" {
			t.Errorf("cancelled H: %+v", c)
		}
		got := decodeResult[taskList](t, mustCall(t, cs, BoardWaitTool, jsonArgs(`{"ids":["H","G"]}`)))
		if st := states(got.Tasks); st["H"] != "cancelled" || st["G"] != "failed" {
			t.Errorf("after cancelling H: %+v", got.Tasks)
		}
		if res := call(t, cs, BoardCancelTool, map[string]any{"id": "A"}); !res.IsError || !strings.Contains(text(res), "ended") {
			t.Errorf("cancelling a done task: %s", text(res))
		}
		if res := call(t, cs, BoardWaitTool, jsonArgs(`{"ids":["A"],"timeout":"3h"}`)); !res.IsError || !strings.Contains(text(res), "timeout") {
			t.Errorf("a timeout over the bound: %s", text(res))
		}
	})
}

func TestNoBoardNoBoardTools(t *testing.T) {
	s := newServer(t, serveFixture(t), nil)
	for _, n := range s.Tools() {
		if strings.HasPrefix(n, "board_") {
			t.Errorf("%s is listed without a board", n)
		}
	}
}
