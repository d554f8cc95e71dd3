package websurfer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestRetryLost checks that Launch's opening of the first session is tried
// again once when the browser died while it opened, and only then.
func TestRetryLost(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
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
		v, err := retryLost(context.Background(), log, func() (int, error) {
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
