package board

import (
	"context"
	"errors"
)

// The outcomes of a run, as Outcome names them.
const (
	OutcomeDone       = "done"
	OutcomeFailed     = "failed"
	OutcomeRetry      = "retry"       // failed, and tried again
	OutcomeHandedBack = "handed_back" // the worker stopped: ready again, not counted
	OutcomeCancelled  = "cancelled"   // by the board: the run's end is not the worker's
	OutcomeTakenOver  = "taken_over"  // another worker has the task now
)

// Outcome is what becomes of a claimed task when its run, on ctx (the
// context the RunFunc got), returns res and err, for workers that try a
// task at most maxAttempts times: the board's view of the run's end, as a
// worker reports it.
func Outcome(ctx context.Context, c *Claim, res *Result, err error, maxAttempts int) string {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, ErrCancelled):
		return OutcomeCancelled
	case errors.Is(cause, ErrSuperseded):
		return OutcomeTakenOver
	case ctx.Err() != nil && (err != nil || res == nil):
		return OutcomeHandedBack
	case IsRetry(err) && c.Attempt < maxAttempts:
		return OutcomeRetry
	case err != nil:
		return OutcomeFailed
	}
	return OutcomeDone
}
