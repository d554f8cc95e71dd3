// Package bench is the measuring of surf bench: observation speed and
// size, the MCP server under concurrent sessions, the task board's
// workers, and actions against Playwright MCP. The surf command parses
// the flags and prints what these functions return.
package bench

import (
	"math"
	"slices"
	"sort"
	"time"
)

// MsSince is the milliseconds since t, to the microsecond.
func MsSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// Pct is the p-th percentile (nearest rank) of xs, to two decimals.
func Pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return math.Round(s[max(0, min(i, len(s)-1))]*100) / 100
}
