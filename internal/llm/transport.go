package llm

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Transport is an http.RoundTripper that adds headers and retries failed
// requests with exponential backoff and jitter, honouring Retry-After
// (seconds or an HTTP date) and retry-after-ms. It retries on 429, on 5xx
// other than 501 and 505, and on connections reset or closed before a
// response; a response header "x-should-retry: true|false" overrides that
// choice. Request bodies are buffered (or taken from GetBody) so they can be
// sent again. The zero value of each field means its documented default.
type Transport struct {
	Next         http.RoundTripper // nil: http.DefaultTransport
	Headers      map[string]string // set on every attempt
	MaxRetries   int               // 0: DefaultMaxRetries; < 0: none
	MaxRetryWait time.Duration     // 0: DefaultMaxRetryWait
	Backoff      time.Duration     // 0: DefaultBackoff
	Timeout      time.Duration     // per attempt; 0: DefaultTimeout
	Logger       *slog.Logger      // nil: discard
	// MaxResponseBytes caps a response body: a larger one is refused
	// (by its Content-Length) or fails with ErrResponseTooLarge once
	// the cap is read. 0: DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

var _ http.RoundTripper = (*Transport)(nil)

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	retries := t.MaxRetries
	switch {
	case retries == 0:
		retries = DefaultMaxRetries
	case retries < 0:
		retries = 0
	}
	maxWait := cmp.Or(t.MaxRetryWait, DefaultMaxRetryWait)
	backoff := cmp.Or(t.Backoff, DefaultBackoff)
	timeout := cmp.Or(t.Timeout, DefaultTimeout)

	getBody, err := rewindable(req)
	if err != nil {
		return nil, err
	}

	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, timeout)
		r := req.Clone(actx)
		if getBody != nil {
			if r.Body, err = getBody(); err != nil {
				cancel()
				return nil, err
			}
		}
		for k, v := range t.Headers {
			r.Header.Set(k, v)
		}
		resp, err := next.RoundTrip(r)

		wait, told, retry := time.Duration(0), false, false
		if err != nil {
			retry = ctx.Err() == nil && retryableError(err)
		} else {
			wait, told, retry = retryableResponse(resp, time.Now())
		}
		if retry && wait > maxWait {
			log.LogAttrs(ctx, slog.LevelWarn, "model server asks for a longer wait than allowed; not retrying",
				slog.Int("status", resp.StatusCode), slog.Duration("wait", wait), slog.Duration("max", maxWait))
			retry = false
		}
		if !retry || attempt >= retries {
			if err != nil {
				cancel()
				return nil, err
			}
			limit := cmp.Or(t.MaxResponseBytes, DefaultMaxResponseBytes)
			if resp.ContentLength > limit {
				drain(resp.Body)
				cancel()
				return nil, tooLarge(resp.ContentLength, limit)
			}
			// The attempt's context must live until the body is read.
			resp.Body = &cancelBody{ReadCloser: &limitedBody{ReadCloser: resp.Body, limit: limit}, cancel: cancel}
			return resp, nil
		}
		if !told {
			wait = backoffWait(backoff, attempt, maxWait)
		}
		status := 0
		if resp != nil {
			status = resp.StatusCode
			drain(resp.Body)
		}
		cancel()
		log.LogAttrs(ctx, slog.LevelWarn, "retrying model request",
			slog.Int("attempt", attempt+1), slog.Int("status", status),
			slog.Any("err", err), slog.Duration("wait", wait))

		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		case <-timer.C:
		}
	}
}

// rewindable returns a function giving a fresh copy of req's body for each
// attempt, or nil for a request without a body.
func rewindable(req *http.Request) (func() (io.ReadCloser, error), error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		req.Body.Close() // each attempt sends a copy from GetBody
		return req.GetBody, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }, nil
}

// retryableResponse reports whether resp should be retried, and how long
// the server asked to wait if it told.
func retryableResponse(resp *http.Response, now time.Time) (wait time.Duration, told, retry bool) {
	retry = resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented &&
			resp.StatusCode != http.StatusHTTPVersionNotSupported)
	switch strings.ToLower(resp.Header.Get("x-should-retry")) {
	case "true":
		retry = true
	case "false":
		retry = false
	}
	if !retry {
		return 0, false, false
	}
	wait, told = RetryAfter(resp.Header, now)
	return wait, told, true
}

// RetryAfter returns the wait a response asks for: retry-after-ms
// (milliseconds, OpenAI's header) if present, else Retry-After in seconds or
// as an HTTP date relative to now. ok is false if neither header holds a
// usable value.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e9 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

// retryableError reports whether a transport error means the connection
// broke (reset, closed before a response) rather than a bad request, a
// refused connection or a cancelled context.
func retryableError(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// backoffWait is backoff * 2^attempt, at most maxWait, minus up to 25%
// jitter.
func backoffWait(backoff time.Duration, attempt int, maxWait time.Duration) time.Duration {
	d := backoff
	for range attempt {
		d *= 2
		if d >= maxWait {
			break
		}
	}
	d = min(d, maxWait)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// drain reads a little of a body being thrown away so the connection can be
// reused, and closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}

// cancelBody cancels an attempt's context when its body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
