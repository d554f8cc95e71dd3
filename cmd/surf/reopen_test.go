package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestRetryLostBrowser checks that opening the first session is tried
// again once when the browser died while it opened, and only then.
func TestRetryLostBrowser(t *testing.T) {
	var log bytes.Buffer
	cli := &CLI{Logger: slog.New(slog.NewTextHandler(&log, nil))}
	lost := fmt.Errorf("opening a browser context: %w", playwright.ErrTargetClosed)
	for _, c := range []struct {
		name  string
		errs  []error
		calls int
		ok    bool
	}{
		{"lost once", []error{lost, nil}, 2, true},
		{"lost twice", []error{lost, lost}, 2, false},
		{"other error", []error{errors.New("--uploads x is not a directory"), nil}, 1, false},
		{"fine", []error{nil}, 1, true},
	} {
		n := 0
		v, err := retryLostBrowser(context.Background(), cli, func() (int, error) {
			err := c.errs[n]
			n++
			if err != nil {
				return 0, err
			}
			return 7, nil
		})
		if n != c.calls || (err == nil) != c.ok || (c.ok && v != 7) {
			t.Errorf("%s: %d calls, value %d, error %v; want %d calls, ok %v", c.name, n, v, err, c.calls, c.ok)
		}
	}
}
