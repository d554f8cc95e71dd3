package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
	"github.com/surfkit/surf/worker"
)

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
	counts, err := bench.ParseCounts(*workersFlag, "count", 64)
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
	scens, err := bench.LoadScenarios(*scenDir)
	if errors.Is(err, bench.ErrNoScenarios) {
		return withHint(err, "--scenarios names a directory of scenario folders (each with scenario.yaml, site.har and model.json), like testdata/replay in surf's repository")
	}
	if err != nil {
		return err
	}
	runner, err := benchBoardRunner(ctx, cli, bf, scens, *delay, *maxActive)
	if err != nil {
		return err
	}
	defer runner.Close()

	results, err := bench.BoardSeries(ctx, runner.Run, scens, counts, *nTasks, cli.Logger, func(res bench.BoardResult) {
		if *asJSON {
			json.NewEncoder(cli.Stdout).Encode(res)
		}
	})
	if err != nil {
		return err
	}
	if !*asJSON {
		bench.WriteBoard(cli.Stdout, results, *nTasks, len(scens), *delay, runner.MaxActive())
	}
	for _, r := range results {
		if r.Failed > 0 {
			return &exitError{code: 1}
		}
	}
	return nil
}

// benchBoardRunner is the task runner of surf bench board: a browser
// whose policy allows every scenario's site, each task replaying its
// scenario's pages and model.
func benchBoardRunner(ctx context.Context, cli *CLI, bf *browserFlags, scens []*bench.Scenario, delay time.Duration, maxActive int) (*worker.Worker, error) {
	cfg, err := bench.BoardWorker(ctx, scens, delay)
	if err != nil {
		return nil, err
	}
	if cfg.Sandbox, err = bf.sandboxConfig(cli, cfg.Policy); err != nil {
		return nil, err
	}
	cfg.MaxActive, cfg.Logger = maxActive, cli.Logger
	return worker.New(ctx, cfg)
}
