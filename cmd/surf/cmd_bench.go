package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"sort"
	"time"

	"github.com/surfkit/surf/third_party/playwright-go"
)

func init() {
	c := &command{
		name:    "bench",
		summary: "measure observation speed and size, the server under concurrent sessions, the board, or actions against Playwright MCP",
		usage: `Usage: surf bench observe --corpus DIR [--rounds N] [--json] [flags]
       surf bench sessions [--n 1,4,8,16,64] [--cycles N] [--json]

Serves DIR on loopback (each subfolder with an index.html is a page; every
other host fails fast) and, for each page, navigates to it (not timed), then
times in the same run:
  1. a full observation, with the set-of-mark image encoded as sent to the model;
  2. a raw screenshot alone, in the same format and size.
Each page is measured --rounds times (default 3), alternating which of the
two goes first. --phases also prints the observation's phases, and
--cpuprofile FILE writes surf's own CPU profile. It prints p50/p90 of both, the p50 of the per-sample ratio
observe/raw, and p50/p90/max of the observation's text tokens.

With --json it prints one object with the keys pages, observe_ms_p50,
observe_ms_p90, raw_ms_p50, raw_ms_p90, ratio_p50, tokens_p50, tokens_p90
and tokens_max.

Example:
  surf bench observe --corpus ../shared/corpus --json

` + benchSessionsUsage + `

` + benchBoardUsage + `

` + benchActionsUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		if len(args) > 0 && args[0] == "sessions" {
			return benchSessions(ctx, cli, c, args[1:])
		}
		if len(args) > 0 && args[0] == "board" {
			return benchBoard(ctx, cli, c, args[1:])
		}
		if len(args) > 0 && args[0] == "actions" {
			return benchActions(ctx, cli, c, args[1:])
		}
		if len(args) == 0 || args[0] != "observe" {
			return usagef(c, "bench needs a subcommand: observe, sessions, board or actions")
		}
		fs := newFlags(c)
		corpus := fs.String("corpus", "", "")
		rounds := fs.Int("rounds", 3, "")
		asJSON := fs.Bool("json", false, "")
		phases := fs.Bool("phases", false, "")
		cpuprofile := fs.String("cpuprofile", "", "")
		bf := addBrowserFlags(fs)
		if err := parseFlags(c, fs, args[1:]); err != nil {
			return err
		}
		if *corpus == "" {
			return usagef(c, "--corpus DIR is required")
		}
		if *rounds < 1 || *rounds > 100 {
			return usagef(c, "--rounds must be 1 to 100")
		}
		pages, err := corpusPages(*corpus)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(*corpus)))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		defer srv.Close()
		base, err := originPolicy(ln.Addr().String())
		if err != nil {
			return err
		}
		b, err := bf.open(ctx, cli, openOptions{base: base})
		if err != nil {
			return err
		}
		defer b.Close()

		if *cpuprofile != "" {
			f, err := os.Create(*cpuprofile)
			if err != nil {
				return err
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				return err
			}
			defer pprof.StopCPUProfile()
		}
		var obsMS, rawMS, ratios, againMS, againRatios []float64
		reused := 0
		var toks []int
		phase := map[string][]float64{}
		for i, name := range pages {
			page := b.surf.Page()
			ms := float64(30000)
			if _, err := page.Goto(srv.URL+"/"+name+"/", playwright.PageGotoOptions{Timeout: &ms, WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
				fmt.Fprintf(cli.Stderr, "surf: skipping %s: %v\n", name, err)
				continue
			}
			pageTokens := 0
			first := len(obsMS)
			for r := 0; r < *rounds; r++ {
				var o, w float64
				timeObserve := func() error {
					t0 := time.Now()
					obs, err := b.surf.ObserveFresh(ctx)
					if err != nil {
						return err
					}
					o = msSince(t0)
					pageTokens = max(pageTokens, obs.Tokens)
					for k, d := range map[string]time.Duration{"screenshot": obs.Timing.Screenshot, "decode": obs.Timing.Decode, "snapshot": obs.Timing.Snapshot, "ax": obs.Timing.AX, "draw+encode": obs.Timing.Image} {
						phase[k] = append(phase[k], float64(d.Microseconds())/1000)
					}
					return nil
				}
				timeRaw := func() error {
					t0 := time.Now()
					if _, err := b.surf.Screenshot(ctx); err != nil {
						return err
					}
					w = msSince(t0)
					return nil
				}
				first, second := timeObserve, timeRaw
				if (i+r)%2 == 1 {
					first, second = timeRaw, timeObserve
				}
				if err := first(); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				if err := second(); err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				obsMS, rawMS, ratios = append(obsMS, o), append(rawMS, w), append(ratios, o/w)
			}
			// The page observed again, unchanged, right after a fresh
			// observation.
			if _, err := b.surf.ObserveFresh(ctx); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			t0 := time.Now()
			again, err := b.surf.Observe(ctx)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			a := msSince(t0)
			if again.Again {
				reused++
			}
			againMS, againRatios = append(againMS, a), append(againRatios, a/pct(obsMS[first:], 50))
			toks = append(toks, pageTokens)
			if !*asJSON {
				fmt.Fprintf(cli.Stderr, "%-40s observe %6.1f ms  raw %6.1f ms  ratio %4.2f  again %6.1f ms  tokens %5d\n", name, pct(obsMS[first:], 50), pct(rawMS[first:], 50), pct(ratios[first:], 50), a, pageTokens)
			}
		}
		if len(toks) == 0 {
			return fmt.Errorf("no page of %s could be loaded", *corpus)
		}
		ft := make([]float64, len(toks))
		for i, t := range toks {
			ft[i] = float64(t)
		}
		res := benchResult{
			Pages:        len(toks),
			ObserveMSP50: pct(obsMS, 50), ObserveMSP90: pct(obsMS, 90),
			RawMSP50: pct(rawMS, 50), RawMSP90: pct(rawMS, 90),
			RatioP50:  pct(ratios, 50),
			TokensP50: int(pct(ft, 50)), TokensP90: int(pct(ft, 90)), TokensMax: int(slices.Max(ft)),
			Rounds:        *rounds,
			AgainMSP50:    pct(againMS, 50),
			AgainRatioP50: pct(againRatios, 50),
			AgainReused:   reused,
		}
		if *phases {
			for _, k := range []string{"screenshot", "decode", "snapshot", "ax", "draw+encode"} {
				fmt.Fprintf(cli.Stderr, "phase %-18s p50 %6.1f ms  p90 %6.1f ms\n", k, pct(phase[k], 50), pct(phase[k], 90))
			}
		}
		if *asJSON {
			return json.NewEncoder(cli.Stdout).Encode(res)
		}
		fmt.Fprintf(cli.Stdout, "pages %d, %d rounds each\nobserve  p50 %.1f ms  p90 %.1f ms\nraw      p50 %.1f ms  p90 %.1f ms\nobserve/raw p50 %.2f\ntokens   p50 %d  p90 %d  max %d\nagain    p50 %.1f ms  again/observe p50 %.2f  (%d of %d pages handed out unchanged)\n",
			res.Pages, res.Rounds, res.ObserveMSP50, res.ObserveMSP90, res.RawMSP50, res.RawMSP90, res.RatioP50, res.TokensP50, res.TokensP90, res.TokensMax, res.AgainMSP50, res.AgainRatioP50, res.AgainReused, res.Pages)
		return nil
	}
	register(c)
}

type benchResult struct {
	Pages        int     `json:"pages"`
	ObserveMSP50 float64 `json:"observe_ms_p50"`
	ObserveMSP90 float64 `json:"observe_ms_p90"`
	RawMSP50     float64 `json:"raw_ms_p50"`
	RawMSP90     float64 `json:"raw_ms_p90"`
	RatioP50     float64 `json:"ratio_p50"`
	TokensP50    int     `json:"tokens_p50"`
	TokensP90    int     `json:"tokens_p90"`
	TokensMax    int     `json:"tokens_max"`
	Rounds       int     `json:"rounds"`
	// Again is an observation of the page right after a fresh one, with
	// nothing changed: its p50, the p50 of its ratio to the page's fresh
	// observation, and on how many pages it was handed out unchanged.
	AgainMSP50    float64 `json:"again_ms_p50"`
	AgainRatioP50 float64 `json:"again_ratio_p50"`
	AgainReused   int     `json:"again_reused"`
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// pct is the p-th percentile (nearest rank) of xs.
func pct(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return math.Round(s[max(0, min(i, len(s)-1))]*100) / 100
}

// corpusPages lists the subfolders of dir that hold an index.html.
func corpusPages(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "index.html")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s has no folders with an index.html", dir)
	}
	return out, nil
}
