package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
	"github.com/surfkit/surf/worker"
	"gopkg.in/yaml.v3"
)

// benchBoardUsage is the usage of "surf bench board".
const benchBoardUsage = `Usage: surf bench board [--workers 1,2,4,8] [--tasks 24] [--model-delay 1s] [--scenarios DIR] [--json] [flags]

Measures the board offline and deterministically: for each worker count of
--workers, a fresh board (embedded server, in a temporary directory) gets
--tasks tasks built in turn from the replay scenarios under --scenarios
(default testdata/replay: each a scenario.yaml, its pages recorded in
site.har and its model in a cassette, model.json), and that many workers
in this process (one browser, a context per task) run them. Each model
call waits --model-delay first, to stand for a real model's latency. It
prints, per worker count: tasks done and failed, the wall time from the
first claim to the last result, tasks per minute, the speedup over the
first worker count, and the board's overhead per task (claim to start plus
finish to result stored) at p50, p95 and max.

Flags:
  --max-active N      tasks driving the browser at once, as for surf work
                      (default: one per core, at least 2)

Example:
  surf bench board --workers 1,2,4,8 --tasks 24 --model-delay 1s`

// benchBoardResult is the measure of one worker count.
type benchBoardResult struct {
	Workers       int      `json:"workers"`
	Tasks         int      `json:"tasks"`
	Done          int      `json:"done"`
	Failed        int      `json:"failed"`
	Errors        []string `json:"errors,omitempty"`
	WallMS        int64    `json:"wall_ms"`
	TasksPerMin   float64  `json:"tasks_per_minute"`
	Speedup       float64  `json:"speedup"`
	OverheadP50MS float64  `json:"overhead_ms_p50"`
	OverheadP95MS float64  `json:"overhead_ms_p95"`
	OverheadMaxMS float64  `json:"overhead_ms_max"`
	RunP50MS      float64  `json:"run_ms_p50"`
}

// benchScenario is a replay scenario's scenario.yaml, as the benchmark
// uses it.
type benchScenario struct {
	dir, name string
	Task      string    `yaml:"task"`
	Port      int       `yaml:"port"`
	Start     string    `yaml:"start"`
	Search    string    `yaml:"search"`
	Policy    yaml.Node `yaml:"policy"`
	MaxSteps  int       `yaml:"max_steps"`
}

func (sc *benchScenario) origin() string { return fmt.Sprintf("http://127.0.0.1:%d", sc.Port) }

func loadBenchScenarios(dir string) ([]*benchScenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "scenario.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, withHint(fmt.Errorf("no replay scenarios under %s", dir), "--scenarios names a directory of scenario folders (each with scenario.yaml, site.har and model.json), like testdata/replay in surf's repository")
	}
	var out []*benchScenario
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sc := &benchScenario{dir: filepath.Dir(p), name: filepath.Base(filepath.Dir(p))}
		if err := yaml.Unmarshal(data, sc); err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		if sc.Task == "" || sc.Port == 0 || sc.MaxSteps == 0 {
			return nil, fmt.Errorf("%s: task, port and max_steps are required", p)
		}
		for _, f := range []string{"site.har", "model.json"} {
			if _, err := os.Stat(filepath.Join(sc.dir, f)); err != nil {
				return nil, fmt.Errorf("scenario %s: %v", sc.name, err)
			}
		}
		out = append(out, sc)
	}
	return out, nil
}

// policy is the scenario's policy, as a task's narrowing.
func (sc *benchScenario) taskPolicy() (*board.Policy, error) {
	data, err := yaml.Marshal(&sc.Policy)
	if err != nil {
		return nil, err
	}
	cfg, err := policy.LoadBytes(sc.name+" policy", data, policy.LoadOptions{})
	if err != nil {
		return nil, err
	}
	return &board.Policy{Allow: cfg.Allow, Ask: cfg.Ask, Deny: cfg.Deny, Actions: cfg.Actions}, nil
}

// slowModel makes every call of m wait delay first: a stand-in for a real
// model's latency in front of a cassette that answers at once.
type slowModel struct {
	m     websurfer.Model
	delay time.Duration
}

var _ websurfer.Model = slowModel{}

func (s slowModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	t := time.NewTimer(s.delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, ctx.Err()
	case <-t.C:
	}
	return s.m.CreateChatCompletion(ctx, req)
}

func parseIntList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("%q is not a count from 1 to 64", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func benchBoard(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	workersFlag := fs.String("workers", "1,2,4,8", "")
	nTasks := fs.Int("tasks", 24, "")
	delay := fs.Duration("model-delay", time.Second, "")
	scenDir := fs.String("scenarios", filepath.Join("testdata", "replay"), "")
	asJSON := fs.Bool("json", false, "")
	maxActive := fs.Int("max-active", 0, "")
	bf := addBrowserFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	counts, err := parseIntList(*workersFlag)
	if err != nil {
		return usagef(c, "--workers: %v", err)
	}
	if *nTasks < 1 || *nTasks > 1000 {
		return usagef(c, "--tasks must be 1 to 1000")
	}
	if *maxActive < 0 || *maxActive > 64 {
		return usagef(c, "--max-active must be 1 to 64")
	}
	if *delay < 0 || *delay > time.Minute {
		return usagef(c, "--model-delay must be 0 to 1m")
	}
	scens, err := loadBenchScenarios(*scenDir)
	if err != nil {
		return err
	}
	byName := map[string]*benchScenario{}
	var allow []policy.HostRule
	for _, sc := range scens {
		byName[sc.name] = sc
		r, err := policy.ParseHostRule(strings.TrimPrefix(sc.origin(), "http://"))
		if err != nil {
			return err
		}
		allow = append(allow, r)
	}
	// The workers' policy: every scenario's site; each task narrows it to
	// its own.
	base, err := policy.New(policy.Config{Allow: allow})
	if err != nil {
		return err
	}
	sbCfg, err := bf.sandboxConfig(cli, base)
	if err != nil {
		return err
	}
	scenarioOf := func(t board.Task) *benchScenario { return byName[t.Labels["scenario"]] }
	runner, err := worker.New(ctx, worker.Config{
		Sandbox:   sbCfg,
		Policy:    base,
		MaxActive: *maxActive,
		SessionFor: func(t board.Task) sandbox.SessionConfig {
			return sandbox.SessionConfig{ReplayHAR: filepath.Join(scenarioOf(t).dir, "site.har")}
		},
		SurfFor: func(t board.Task, cfg websurfer.Config) websurfer.Config {
			if sc := scenarioOf(t); sc.Search != "" {
				cfg.SearchURL = sc.origin() + sc.Search
			}
			return cfg
		},
		ModelFor: func(t board.Task) (websurfer.Model, string, error) {
			m, err := llm.New(ctx, llm.Config{Model: "replay-model", MaxRetries: -1, Replay: filepath.Join(scenarioOf(t).dir, "model.json")})
			if err != nil {
				return nil, "", err
			}
			return slowModel{m: m, delay: *delay}, "replay-model", nil
		},
		Logger: cli.Logger,
	})
	if err != nil {
		return err
	}
	defer runner.Close()

	var results []benchBoardResult
	for _, n := range counts {
		res, err := benchBoardOnce(ctx, cli, runner, scens, n, *nTasks)
		if err != nil {
			return err
		}
		if len(results) > 0 && results[0].TasksPerMin > 0 {
			res.Speedup = res.TasksPerMin / results[0].TasksPerMin
		} else {
			res.Speedup = 1
		}
		results = append(results, res)
		if *asJSON {
			json.NewEncoder(cli.Stdout).Encode(res)
		}
	}
	if !*asJSON {
		fmt.Fprintf(cli.Stdout, "%d tasks from %d scenarios, model delay %s per call, at most %d driving the browser at once\n\n", *nTasks, len(scens), *delay, runner.MaxActive())
		fmt.Fprintf(cli.Stdout, "%7s  %5s  %6s  %8s  %9s  %7s  %14s  %12s\n", "workers", "done", "failed", "wall", "tasks/min", "speedup", "overhead p50/p95", "run p50")
		for _, r := range results {
			fmt.Fprintf(cli.Stdout, "%7d  %5d  %6d  %7.1fs  %9.1f  %6.2fx  %6.1f/%-6.1fms  %10.0fms\n", r.Workers, r.Done, r.Failed,
				float64(r.WallMS)/1000, r.TasksPerMin, r.Speedup, r.OverheadP50MS, r.OverheadP95MS, r.RunP50MS)
			for _, e := range r.Errors {
				fmt.Fprintf(cli.Stdout, "         failed: %s\n", e)
			}
		}
	}
	for _, r := range results {
		if r.Failed > 0 {
			return &exitError{code: 1}
		}
	}
	return nil
}

// benchBoardOnce runs n tasks on a fresh board with w workers.
func benchBoardOnce(ctx context.Context, cli *CLI, runner *worker.Worker, scens []*benchScenario, w, n int) (benchBoardResult, error) {
	res := benchBoardResult{Workers: w, Tasks: n}
	dir, err := os.MkdirTemp("", "surf-bench-board-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	b, err := board.Open(ctx, board.Config{Dir: dir, Logger: cli.Logger})
	if err != nil {
		return res, err
	}
	defer b.Close()
	var tasks []board.Task
	var ids []string
	for i := range n {
		sc := scens[i%len(scens)]
		pol, err := sc.taskPolicy()
		if err != nil {
			return res, err
		}
		t := board.Task{ID: fmt.Sprintf("%s-%02d", sc.name, i), Instruction: sc.Task, Policy: pol,
			MaxSteps: sc.MaxSteps, Labels: map[string]string{"scenario": sc.name}}
		if sc.Start != "" {
			t.StartURL = sc.origin() + sc.Start
		}
		tasks = append(tasks, t)
		ids = append(ids, t.ID)
	}
	if _, err := b.Add(ctx, tasks...); err != nil {
		return res, err
	}
	var mu sync.Mutex
	var times []board.Times
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- b.Work(wctx, board.WorkConfig{Workers: w, Name: "bench", MaxAttempts: 1, Run: runner.Run, Logger: cli.Logger,
			Timed: func(t board.Times) {
				mu.Lock()
				times = append(times, t)
				mu.Unlock()
			}})
	}()
	recs, err := b.Wait(ctx, ids...)
	stop()
	if werr := <-done; werr != nil && !errors.Is(werr, context.Canceled) {
		return res, werr
	}
	if err != nil {
		return res, err
	}
	for _, r := range recs {
		if r.State == board.Done {
			res.Done++
		} else {
			res.Failed++
			if len(res.Errors) < 5 {
				res.Errors = append(res.Errors, r.Task.ID+": "+r.Reason)
			}
		}
	}
	if len(times) == 0 {
		return res, nil
	}
	first, last := times[0].Claimed, times[0].Stored
	var over, run []float64
	for _, t := range times {
		if t.Claimed.Before(first) {
			first = t.Claimed
		}
		if t.Stored.After(last) {
			last = t.Stored
		}
		over = append(over, float64(t.Overhead().Microseconds())/1000)
		run = append(run, float64(t.Finished.Sub(t.Started).Milliseconds()))
	}
	wall := last.Sub(first)
	res.WallMS = wall.Milliseconds()
	res.TasksPerMin = float64(res.Done) / wall.Minutes()
	res.OverheadP50MS = pct(over, 50)
	res.OverheadP95MS = pct(over, 95)
	res.OverheadMaxMS = slices.Max(over)
	res.RunP50MS = pct(run, 50)
	return res, nil
}
