package board

import (
	"context"
	"errors"
	"testing"
)

// TestOutcome checks what Outcome makes of a run's end: the board's
// cancel and take-over first, then a stopping worker, a retry while
// attempts are left, a failure, and done.
func TestOutcome(t *testing.T) {
	ended := func(cause error) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(cause)
		return ctx
	}
	live := context.Background()
	res, fail := &Result{Answer: "x"}, errors.New("boom")
	for _, c := range []struct {
		name    string
		ctx     context.Context
		attempt int
		res     *Result
		err     error
		want    string
	}{
		{"done", live, 1, res, nil, OutcomeDone},
		{"failed", live, 1, res, fail, OutcomeFailed},
		{"retry", live, 1, nil, Retry(fail), OutcomeRetry},
		{"retry, last attempt", live, 3, nil, Retry(fail), OutcomeFailed},
		{"cancelled", ended(ErrCancelled), 1, res, context.Canceled, OutcomeCancelled},
		{"taken over", ended(ErrSuperseded), 1, nil, context.Canceled, OutcomeTakenOver},
		{"handed back", ended(context.Canceled), 1, nil, context.Canceled, OutcomeHandedBack},
		{"handed back, no result", ended(context.Canceled), 1, nil, nil, OutcomeHandedBack},
		{"done as the worker stopped", ended(context.Canceled), 1, res, nil, OutcomeDone},
	} {
		if got := Outcome(c.ctx, &Claim{Attempt: c.attempt}, c.res, c.err, 3); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
