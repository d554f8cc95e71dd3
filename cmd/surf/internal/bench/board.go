package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
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

// BoardResult is the measure of one worker count.
type BoardResult struct {
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

// Scenario is a replay scenario's scenario.yaml, as the benchmark
// uses it.
type Scenario struct {
	dir, name string
	Task      string    `yaml:"task"`
	Port      int       `yaml:"port"`
	Start     string    `yaml:"start"`
	Search    string    `yaml:"search"`
	Policy    yaml.Node `yaml:"policy"`
	MaxSteps  int       `yaml:"max_steps"`
}

// Name is the scenario's folder's name; Dir is the folder.
func (sc *Scenario) Name() string { return sc.name }

// Dir is the scenario's folder.
func (sc *Scenario) Dir() string { return sc.dir }

// Origin is the scenario's site, on loopback.
func (sc *Scenario) Origin() string { return fmt.Sprintf("http://127.0.0.1:%d", sc.Port) }

// ErrNoScenarios is LoadScenarios' error for a directory without any.
var ErrNoScenarios = errors.New("no replay scenarios")

// LoadScenarios reads the scenario.yaml of each folder of dir.
func LoadScenarios(dir string) ([]*Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "scenario.yaml"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w under %s", ErrNoScenarios, dir)
	}
	var out []*Scenario
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		sc := &Scenario{dir: filepath.Dir(p), name: filepath.Base(filepath.Dir(p))}
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

// TaskPolicy is the scenario's policy, as a task's narrowing.
func (sc *Scenario) TaskPolicy() (*board.Policy, error) {
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

// SlowModel makes every call of m wait delay first: a stand-in for a real
// model's latency in front of a cassette that answers at once.
type SlowModel struct {
	M     websurfer.Model
	Delay time.Duration
}

var _ websurfer.Model = SlowModel{}

func (s SlowModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	t := time.NewTimer(s.Delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, ctx.Err()
	case <-t.C:
	}
	return s.M.CreateChatCompletion(ctx, req)
}

// BoardOnce runs n tasks of scens on a fresh board with w workers that
// run them with run, and measures the board's throughput and overhead.
func BoardOnce(ctx context.Context, run board.RunFunc, scens []*Scenario, w, n int, logger *slog.Logger) (BoardResult, error) {
	res := BoardResult{Workers: w, Tasks: n}
	dir, err := os.MkdirTemp("", "surf-bench-board-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(dir)
	b, err := board.Open(ctx, board.Config{Dir: dir, Logger: logger})
	if err != nil {
		return res, err
	}
	defer b.Close()
	var tasks []board.Task
	var ids []string
	for i := range n {
		sc := scens[i%len(scens)]
		pol, err := sc.TaskPolicy()
		if err != nil {
			return res, err
		}
		t := board.Task{ID: fmt.Sprintf("%s-%02d", sc.name, i), Instruction: sc.Task, Policy: pol,
			MaxSteps: sc.MaxSteps, Labels: map[string]string{"scenario": sc.name}}
		if sc.Start != "" {
			t.StartURL = sc.Origin() + sc.Start
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
		done <- b.Work(wctx, board.WorkConfig{Workers: w, Name: "bench", MaxAttempts: 1, Run: run, Logger: logger,
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
	var over, runs []float64
	for _, t := range times {
		if t.Claimed.Before(first) {
			first = t.Claimed
		}
		if t.Stored.After(last) {
			last = t.Stored
		}
		over = append(over, float64(t.Overhead().Microseconds())/1000)
		runs = append(runs, float64(t.Finished.Sub(t.Started).Milliseconds()))
	}
	wall := last.Sub(first)
	res.WallMS = wall.Milliseconds()
	res.TasksPerMin = float64(res.Done) / wall.Minutes()
	res.OverheadP50MS = Pct(over, 50)
	res.OverheadP95MS = Pct(over, 95)
	res.OverheadMaxMS = slices.Max(over)
	res.RunP50MS = Pct(runs, 50)
	return res, nil
}

// BoardWorker is surf bench board's worker configuration, all but the
// browser: a policy allowing every scenario's site (each task narrows it
// to its own), and each task replaying its scenario's pages and model,
// every model call waiting delay first. The caller sets Sandbox (with
// this Policy), MaxActive and Logger.
func BoardWorker(ctx context.Context, scens []*Scenario, delay time.Duration) (worker.Config, error) {
	byName := map[string]*Scenario{}
	var allow []policy.HostRule
	for _, sc := range scens {
		byName[sc.Name()] = sc
		r, err := policy.ParseHostRule(strings.TrimPrefix(sc.Origin(), "http://"))
		if err != nil {
			return worker.Config{}, err
		}
		allow = append(allow, r)
	}
	base, err := policy.New(policy.Config{Allow: allow})
	if err != nil {
		return worker.Config{}, err
	}
	scenarioOf := func(t board.Task) *Scenario { return byName[t.Labels["scenario"]] }
	return worker.Config{
		Policy: base,
		SessionFor: func(t board.Task) sandbox.SessionConfig {
			return sandbox.SessionConfig{ReplayHAR: filepath.Join(scenarioOf(t).Dir(), "site.har")}
		},
		SurfFor: func(t board.Task, cfg websurfer.Config) websurfer.Config {
			if sc := scenarioOf(t); sc.Search != "" {
				cfg.SearchURL = sc.Origin() + sc.Search
			}
			return cfg
		},
		ModelFor: func(t board.Task) (websurfer.Model, string, error) {
			m, err := llm.New(ctx, llm.Config{Model: "replay-model", MaxRetries: -1, Replay: filepath.Join(scenarioOf(t).Dir(), "model.json")})
			if err != nil {
				return nil, "", err
			}
			return SlowModel{M: m, Delay: delay}, "replay-model", nil
		},
	}, nil
}

// BoardSeries runs BoardOnce with each worker count of counts in turn
// and sets each result's Speedup: its throughput over the first's (1 when
// the first did nothing). each, if set, gets every result as it comes.
func BoardSeries(ctx context.Context, run board.RunFunc, scens []*Scenario, counts []int, n int, logger *slog.Logger, each func(BoardResult)) ([]BoardResult, error) {
	var results []BoardResult
	for _, w := range counts {
		res, err := BoardOnce(ctx, run, scens, w, n, logger)
		if err != nil {
			return results, err
		}
		res.Speedup = 1
		if len(results) > 0 && results[0].TasksPerMin > 0 {
			res.Speedup = res.TasksPerMin / results[0].TasksPerMin
		}
		results = append(results, res)
		if each != nil {
			each(res)
		}
	}
	return results, nil
}
