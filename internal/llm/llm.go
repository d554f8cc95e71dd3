// Package llm is surf's client for the language model, any
// OpenAI-compatible chat-completions endpoint.
//
// It serves OpenAI, Azure OpenAI, vLLM, Ollama, OpenRouter, ..., built on
// github.com/sashabaranov/go-openai, with retries and extra headers done at the HTTP transport, record and replay of
// model traffic to cassette files, helpers that build multimodal messages,
// context budgeting (Fit) and usage accounting.
//
// The agent loop depends only on the one-method Completer interface, which
// both *Client and *openai.Client satisfy.
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
	"golang.org/x/net/http/httpguts"

	"github.com/surfkit/surf/internal/tokens"
)

// Completer is what the agent loop needs from a model: one chat completion.
// *Client and *openai.Client both implement it.
type Completer interface {
	CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error)
}

var (
	_ Completer = (*Client)(nil)
	_ Completer = (*openai.Client)(nil)
)

// Defaults for zero Config fields.
const (
	DefaultBaseURL      = "https://api.openai.com/v1"
	DefaultAzureVersion = "2024-10-21"
	DefaultMaxRetries   = 4
	DefaultMaxRetryWait = 60 * time.Second
	DefaultBackoff      = 500 * time.Millisecond
	DefaultTimeout      = 10 * time.Minute
)

// Config configures a Client. The zero value is usable except for Model,
// which is required; every zero field means the documented default.
type Config struct {
	// BaseURL is the API root, up to and including the version path
	// ("https://api.openai.com/v1", "http://127.0.0.1:11434/v1"). Default
	// DefaultBaseURL. For Azure it is the resource endpoint
	// ("https://NAME.openai.azure.com"); see APIType.
	BaseURL string

	// APIKey is sent as "Authorization: Bearer KEY" (as "api-key: KEY" for
	// Azure). Empty sends no credentials, which local servers accept.
	APIKey string

	// Model is the model name sent with requests that do not name one.
	// Required. For Azure it is the deployment name.
	Model string

	// APIType is "" or "openai" for OpenAI-compatible servers, or "azure"
	// for Azure OpenAI: requests then go to
	// BaseURL/openai/deployments/MODEL/chat/completions?api-version=APIVersion
	// with an "api-key" header (go-openai builds both).
	APIType string

	// APIVersion is the Azure api-version query parameter. Default
	// DefaultAzureVersion when APIType is "azure"; ignored otherwise.
	APIVersion string

	// Headers are added to every request (after the credentials, so they
	// can replace them, e.g. for a gateway). Names and values are checked.
	Headers map[string]string

	// ImageDetail is the detail ("auto", "low" or "high") of images built by
	// Client.UserMessage. Default "auto".
	ImageDetail string

	// MaxRetries is how many times a request is sent again after a 429, a
	// 5xx (other than 501 and 505) or a broken connection. Zero means
	// DefaultMaxRetries; a negative value disables retries.
	MaxRetries int

	// MaxRetryWait caps one wait between attempts. Zero means
	// DefaultMaxRetryWait. When the server asks (Retry-After,
	// retry-after-ms) for a longer wait than this, the request is not
	// retried and the error is returned at once.
	MaxRetryWait time.Duration

	// Backoff is the first wait when the server does not say how long to
	// wait; later waits double, with up to 25% jitter. Zero means
	// DefaultBackoff.
	Backoff time.Duration

	// Timeout limits one attempt, response body included. Zero means
	// DefaultTimeout. The ctx of each call limits the whole call.
	Timeout time.Duration

	// MaxResponseBytes caps the body of a model response; a larger one
	// is an error (ErrResponseTooLarge) that names the limit. Zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64

	// HTTPClient sends the requests. Nil means a client with
	// http.DefaultTransport. Its Transport is wrapped, not replaced.
	HTTPClient *http.Client

	// Record, if set, is a cassette file to which every model request (as a
	// fingerprint) and response is written, rewritten after each exchange.
	// Secrets (APIKey and the Secrets below) are scrubbed from it.
	Record string

	// Replay, if set, is a cassette file whose responses answer requests in
	// order, with no network access at all. Each request must match the
	// recorded fingerprint. Record and Replay are exclusive.
	Replay string

	// ReplayStrictImages makes replay also compare image bytes (by hash),
	// not just image presence, type and size.
	ReplayStrictImages bool

	// Secrets are strings scrubbed from cassettes besides APIKey.
	Secrets []string

	// Redact, if set, also scrubs cassettes, after Secrets: the browser
	// policy's Redact, which knows the encodings of its secrets. It is
	// called for every request and response recorded or replayed.
	Redact func(string) string

	// Logger receives retries and request summaries. Nil means discard.
	Logger *slog.Logger
}

// Client is an OpenAI-compatible chat-completions client. It is safe for
// concurrent use.
type Client struct {
	oa     *openai.Client
	model  string
	detail openai.ImageURLDetail
	log    *slog.Logger

	replayer *Replayer // nil unless replaying

	mu    sync.Mutex
	usage Usage
}

// New validates cfg and returns a Client. It does no I/O other than reading
// the Replay cassette; ctx is accepted for symmetry with surf's other
// constructors.
func New(ctx context.Context, cfg Config) (*Client, error) {
	_ = ctx
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}

	var rt http.RoundTripper
	var replayer *Replayer
	base := cfg.HTTPClient
	if base == nil {
		base = &http.Client{}
	}
	hc := *base // copy: keep Jar, CheckRedirect, Timeout; wrap Transport
	switch {
	case cfg.Replay != "":
		c, err := LoadCassette(cfg.Replay)
		if err != nil {
			return nil, err
		}
		replayer = NewReplayer(c, ReplayOptions{
			StrictImages: cfg.ReplayStrictImages,
			Secrets:      append([]string{cfg.APIKey}, cfg.Secrets...),
		})
		replayer.scrub.redact = cfg.Redact
		rt = replayer
	default:
		next := hc.Transport
		if next == nil {
			next = http.DefaultTransport
		}
		rt = &Transport{
			Next:         next,
			Headers:      cfg.Headers,
			MaxRetries:   cfg.MaxRetries,
			MaxRetryWait: cfg.MaxRetryWait,
			Backoff:      cfg.Backoff,
			Timeout:      cfg.Timeout,
			Logger:       log,

			MaxResponseBytes: cfg.MaxResponseBytes,
		}
		if cfg.Record != "" {
			secrets := append([]string{cfg.APIKey}, cfg.Secrets...)
			rec, err := NewRecorder(cfg.Record, rt, secrets)
			if err != nil {
				return nil, err
			}
			rec.scrub.redact = cfg.Redact
			rt = rec
		}
	}
	hc.Transport = rt

	var oc openai.ClientConfig
	if strings.EqualFold(cfg.APIType, "azure") {
		oc = openai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		oc.APIVersion = cfg.APIVersion
		oc.AzureModelMapperFunc = func(model string) string { return model }
	} else {
		oc = openai.DefaultConfig(cfg.APIKey)
		oc.BaseURL = cfg.BaseURL
	}
	oc.HTTPClient = &hc

	return &Client{
		oa:       openai.NewClientWithConfig(oc),
		model:    cfg.Model,
		detail:   openai.ImageURLDetail(cfg.ImageDetail),
		log:      log,
		replayer: replayer,
	}, nil
}

// validate checks cfg and fills in defaults.
func (cfg *Config) validate() error {
	if strings.TrimSpace(cfg.Model) == "" {
		return errors.New("llm: no model: set Config.Model (SURF_MODEL)")
	}
	switch strings.ToLower(cfg.APIType) {
	case "", "openai":
	case "azure":
		if cfg.BaseURL == "" && cfg.Replay == "" {
			return errors.New("llm: azure needs BaseURL, the resource endpoint")
		}
		if cfg.APIVersion == "" {
			cfg.APIVersion = DefaultAzureVersion
		}
	default:
		return fmt.Errorf("llm: unknown API type %q (want openai or azure)", cfg.APIType)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return fmt.Errorf("llm: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("llm: base URL %q: want http(s)://host[/path]", cfg.BaseURL)
	}
	if u.User != nil {
		return fmt.Errorf("llm: base URL %q: credentials belong in APIKey, not the URL", u.Redacted())
	}
	switch cfg.ImageDetail {
	case "":
		cfg.ImageDetail = string(openai.ImageURLDetailAuto)
	case "auto", "low", "high":
	default:
		return fmt.Errorf("llm: image detail %q: want auto, low or high", cfg.ImageDetail)
	}
	for k, v := range cfg.Headers {
		if !httpguts.ValidHeaderFieldName(k) {
			return fmt.Errorf("llm: header name %q is not valid", k)
		}
		if !httpguts.ValidHeaderFieldValue(v) {
			return fmt.Errorf("llm: header %s: value is not valid", k)
		}
	}
	if cfg.MaxRetryWait < 0 || cfg.Backoff < 0 || cfg.Timeout < 0 || cfg.MaxResponseBytes < 0 {
		return errors.New("llm: negative MaxRetryWait, Backoff, Timeout or MaxResponseBytes")
	}
	if cfg.Record != "" && cfg.Replay != "" {
		return errors.New("llm: Record and Replay are exclusive")
	}
	return nil
}

// ConfigFromEnv returns a Config from OPENAI_BASE_URL, OPENAI_API_KEY and
// SURF_MODEL, plus OPENAI_API_TYPE and OPENAI_API_VERSION for Azure. The
// caller passes its getenv (os.Getenv, or a test's map); this package never
// reads the environment itself. Unset variables leave fields zero.
func ConfigFromEnv(getenv func(string) string) Config {
	return Config{
		BaseURL:    strings.TrimSpace(getenv("OPENAI_BASE_URL")),
		APIKey:     strings.TrimSpace(getenv("OPENAI_API_KEY")),
		Model:      strings.TrimSpace(getenv("SURF_MODEL")),
		APIType:    strings.TrimSpace(getenv("OPENAI_API_TYPE")),
		APIVersion: strings.TrimSpace(getenv("OPENAI_API_VERSION")),
	}
}

// Model returns the configured model name.
func (c *Client) Model() string { return c.model }

// ImageDetail returns the configured image detail.
func (c *Client) ImageDetail() openai.ImageURLDetail { return c.detail }

// CreateChatCompletion sends req, naming the configured model if req names
// none, and adds the response's usage to the client's totals. Errors from
// the server are go-openai's (*openai.APIError, *openai.RequestError),
// wrapped; replay mismatches wrap ErrReplayMismatch.
func (c *Client) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	if req.Model == "" {
		req.Model = c.model
	}
	if req.Stream {
		return openai.ChatCompletionResponse{}, errors.New("llm: streaming is not supported")
	}
	start := time.Now()
	resp, err := c.oa.CreateChatCompletion(ctx, req)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelDebug, "model request failed",
			slog.String("model", req.Model), slog.Int("messages", len(req.Messages)), slog.Any("err", err))
		if c.replayer != nil {
			// No request went anywhere: the URL of go-openai's
			// *url.Error would only mislead.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return resp, fmt.Errorf("chat completion with %s (replayed): %w", req.Model, err)
		}
		return resp, fmt.Errorf("chat completion with %s: %w", req.Model, err)
	}
	c.mu.Lock()
	c.usage.Add(resp)
	c.mu.Unlock()
	if !c.log.Enabled(ctx, slog.LevelDebug) {
		return resp, nil
	}
	c.log.LogAttrs(ctx, slog.LevelDebug, "model request",
		slog.String("model", req.Model),
		slog.Int("messages", len(req.Messages)),
		slog.Int("estimated_prompt_tokens", tokens.CountRequest(req)),
		slog.Int("prompt_tokens", resp.Usage.PromptTokens),
		slog.Int("completion_tokens", resp.Usage.CompletionTokens),
		slog.Duration("took", time.Since(start)))
	return resp, nil
}

// Unreplayed returns how many interactions of the Replay cassette have not
// been replayed (0 when not replaying), so a caller can tell a run that
// stopped early.
func (c *Client) Unreplayed() int {
	if c.replayer == nil {
		return 0
	}
	return c.replayer.Remaining()
}

// Usage returns the tokens used by all successful calls so far.
func (c *Client) Usage() Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usage
}

// UserMessage builds a user message from text and images, with the
// configured image detail (see the package function UserMessage).
func (c *Client) UserMessage(text string, images ...Image) openai.ChatCompletionMessage {
	return UserMessage(text, c.detail, images...)
}
