package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/internal/llm"
)

// modelFlags are how commands that use a model (run, serve) reach it: any
// OpenAI-compatible endpoint, from flags or the environment.
type modelFlags struct {
	model   string
	baseURL string
	headers []string
	detail  string
	record  string
	replay  string
	retries int
	// redact scrubs the policy's secrets from cassettes (see
	// browserFlags.redact).
	redact func(string) string
}

func addModelFlags(fs *pflag.FlagSet) *modelFlags {
	m := &modelFlags{}
	fs.StringVar(&m.model, "model", "", "")
	fs.StringVar(&m.baseURL, "base-url", "", "")
	fs.StringArrayVar(&m.headers, "header", nil, "")
	fs.StringVar(&m.detail, "image-detail", "", "")
	fs.StringVar(&m.record, "record-model", "", "")
	fs.StringVar(&m.replay, "replay-model", "", "")
	fs.IntVar(&m.retries, "retries", 0, "")
	return m
}

// client builds the model client.
func (m *modelFlags) client(ctx context.Context, cli *CLI) (*llm.Client, string, error) {
	cfg := llm.ConfigFromEnv(cli.Getenv)
	if m.model != "" {
		cfg.Model = m.model
	}
	if m.baseURL != "" {
		cfg.BaseURL = m.baseURL
	}
	if m.detail != "" {
		switch m.detail {
		case "auto", "low", "high":
			cfg.ImageDetail = m.detail
		default:
			return nil, "", fmt.Errorf("--image-detail must be auto, low or high, not %q", m.detail)
		}
	}
	if len(m.headers) > 0 {
		cfg.Headers = map[string]string{}
		for _, h := range m.headers {
			k, v, ok := strings.Cut(h, "=")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, "", fmt.Errorf("--header %q is not NAME=VALUE", h)
			}
			cfg.Headers[strings.TrimSpace(k)] = v
		}
	}
	cfg.MaxRetries = m.retries
	cfg.Record, cfg.Replay = m.record, m.replay
	cfg.Redact = m.redact
	cfg.Timeout = 3 * time.Minute
	cfg.Logger = cli.Logger
	if cfg.Replay == "" && cfg.APIKey == "" && cfg.BaseURL == "" {
		return nil, "", withHint(errors.New("no model is configured"),
			"set OPENAI_API_KEY (and SURF_MODEL), or --base-url for a local OpenAI-compatible server such as Ollama or vLLM\n'surf demo' tours the bundled site without a model")
	}
	if cfg.Model == "" {
		return nil, "", withHint(errors.New("no model name is configured"), "set SURF_MODEL or pass --model, e.g. --model gpt-4o")
	}
	c, err := llm.New(ctx, cfg)
	if err != nil {
		return nil, "", err
	}
	return c, cfg.Model, nil
}
