package bench

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

// ParseCounts reads a comma-separated list of counts, each 1 to max
// ("1,4,8"); what names the counts in the error ("session count").
func ParseCounts(s, what string, max int) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > max {
			return nil, fmt.Errorf("%q is not a %s from 1 to %d", f, what, max)
		}
		out = append(out, n)
	}
	return out, nil
}

// StartCPUProfile writes this process's CPU profile to path until stop.
func StartCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// WritePhases writes the p50 and p90 of an observation's phases.
func WritePhases(w io.Writer, res *ObserveResult) {
	for _, k := range []string{"screenshot", "decode", "snapshot", "ax", "draw+encode"} {
		fmt.Fprintf(w, "phase %-18s p50 %6.1f ms  p90 %6.1f ms\n", k, Pct(res.Phases[k], 50), Pct(res.Phases[k], 90))
	}
}

// WriteObservePage writes one page's line of surf bench observe.
func WriteObservePage(w io.Writer, p ObservePage) {
	fmt.Fprintf(w, "%-40s observe %6.1f ms  raw %6.1f ms  ratio %4.2f  again %6.1f ms  tokens %5d\n", p.Name, p.ObserveMSP50, p.RawMSP50, p.RatioP50, p.AgainMS, p.Tokens)
}

// WriteObserve writes surf bench observe's summary.
func WriteObserve(w io.Writer, res *ObserveResult) {
	fmt.Fprintf(w, "pages %d, %d rounds each\nobserve  p50 %.1f ms  p90 %.1f ms\nraw      p50 %.1f ms  p90 %.1f ms\nobserve/raw p50 %.2f\ntokens   p50 %d  p90 %d  max %d\nagain    p50 %.1f ms  again/observe p50 %.2f  (%d of %d pages handed out unchanged)\n",
		res.Pages, res.Rounds, res.ObserveMSP50, res.ObserveMSP90, res.RawMSP50, res.RawMSP90, res.RatioP50, res.TokensP50, res.TokensP90, res.TokensMax, res.AgainMSP50, res.AgainRatioP50, res.AgainReused, res.Pages)
}

// WriteSessionsHeader writes the header of surf bench sessions' table.
func WriteSessionsHeader(w io.Writer) {
	fmt.Fprintf(w, "%5s %6s %6s %6s  %-17s %-17s %-17s %9s %9s %9s\n",
		"n", "calls", "ok", "failed", "action p50/p90", "queued p50/p90", "latency p50/p90", "actions/s", "peak RSS", "peak PSS")
}

// WriteSessions writes one N's row of surf bench sessions' table, with
// its failures.
func WriteSessions(w io.Writer, res *SessionsResult) {
	fmt.Fprintf(w, "%5d %6d %6d %6d  %-17s %-17s %-17s %9.2f %6.0f MB %6.0f MB\n",
		res.Sessions, res.Calls, res.OK, res.Failed,
		fmt.Sprintf("%.0f/%.0f ms", res.ActionMSP50, res.ActionMSP90),
		fmt.Sprintf("%.0f/%.0f ms", res.QueuedMSP50, res.QueuedMSP90),
		fmt.Sprintf("%.0f/%.0f ms", res.LatencyMSP50, res.LatencyMSP90),
		res.ActionsPerSec, res.PeakRSSMB, res.PeakPSSMB)
	if res.Failed > 0 {
		fmt.Fprintf(w, "      %d of the failures were a session's first call (which opens its browser context)\n", res.FailedFirst)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(w, "      error: %s\n", e)
	}
}

// WriteActions writes surf bench actions' table.
func WriteActions(w io.Writer, res ActionsResult) {
	peer := res.PWMCP.Package
	if peer == "" {
		peer = res.PWMCP.Name + " " + res.PWMCP.Version
	}
	fmt.Fprintf(w, "surf %s vs %s, %d rounds\n", res.Surf.Version, peer, res.Rounds)
	fmt.Fprintf(w, "%-13s %-17s %-17s %6s %10s %10s %8s\n", "kind", "surf p50/p90", "pwmcp p50/p90", "ratio", "surf tok", "pwmcp tok", "failed")
	for _, m := range res.Kinds {
		fmt.Fprintf(w, "%-13s %-17s %-17s %6.2f %10d %10d %8s\n", m.Kind,
			fmt.Sprintf("%.0f/%.0f ms", m.Surf.MSP50, m.Surf.MSP90),
			fmt.Sprintf("%.0f/%.0f ms", m.PWMCP.MSP50, m.PWMCP.MSP90),
			m.RatioP50, m.Surf.TokensP50, m.PWMCP.TokensP50,
			fmt.Sprintf("%d/%d", m.Surf.Failed, m.PWMCP.Failed))
		if ph := m.Surf.PhasesMSP50; ph != nil {
			fmt.Fprintf(w, "  surf phases p50: act %.0f ms, settle %.0f ms, observe %.0f ms (action_ms %.0f)\n",
				ph["act"], ph["settle"], ph["observe"], m.Surf.ServerMSP50)
		}
		for _, e := range m.Surf.Errors {
			fmt.Fprintf(w, "  surf error: %s\n", e)
		}
		for _, e := range m.PWMCP.Errors {
			fmt.Fprintf(w, "  pwmcp error: %s\n", e)
		}
	}
	fmt.Fprintln(w, "ratio: surf p50 / Playwright MCP p50; tokens: p50 of the reply's text (surf also sends a screenshot)")
}

// WriteBoard writes surf bench board's table: nTasks tasks from nScens
// scenarios, each model call delayed by delay, at most maxActive driving
// the browser at once.
func WriteBoard(w io.Writer, results []BoardResult, nTasks, nScens int, delay time.Duration, maxActive int) {
	fmt.Fprintf(w, "%d tasks from %d scenarios, model delay %s per call, at most %d driving the browser at once\n\n", nTasks, nScens, delay, maxActive)
	fmt.Fprintf(w, "%7s  %5s  %6s  %8s  %9s  %7s  %14s  %12s\n", "workers", "done", "failed", "wall", "tasks/min", "speedup", "overhead p50/p95", "run p50")
	for _, r := range results {
		fmt.Fprintf(w, "%7d  %5d  %6d  %7.1fs  %9.1f  %6.2fx  %6.1f/%-6.1fms  %10.0fms\n", r.Workers, r.Done, r.Failed,
			float64(r.WallMS)/1000, r.TasksPerMin, r.Speedup, r.OverheadP50MS, r.OverheadP95MS, r.RunP50MS)
		for _, e := range r.Errors {
			fmt.Fprintf(w, "         failed: %s\n", e)
		}
	}
}

// WritePerSession writes the memory one more session adds.
func WritePerSession(w io.Writer, per SessionCost) {
	fmt.Fprintf(w, "memory per added session (n=%d to n=%d): %.1f MB RSS, %.1f MB PSS\n", per.From, per.To, per.RSS, per.PSS)
}
