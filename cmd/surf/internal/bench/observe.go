package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/surfkit/surf/third_party/playwright-go"
	"github.com/surfkit/surf/websurfer"
)

// ObserveConfig says what Observe measures.
type ObserveConfig struct {
	// Base is the origin the pages are served from: each page is
	// Base/NAME/.
	Base string
	// Pages are the pages' names (see CorpusPages).
	Pages []string
	// Rounds is the samples per page; 0 means 3.
	Rounds int
	// Page, when set, is told each page's figures once measured.
	Page func(ObservePage)
	// Skipped, when set, is told of a page that could not be loaded.
	Skipped func(name string, err error)
}

// ObservePage is one page's figures: p50s of its rounds.
type ObservePage struct {
	Name                             string
	ObserveMSP50, RawMSP50, RatioP50 float64
	AgainMS                          float64
	Tokens                           int
}

// ObserveResult is what surf bench observe --json prints.
type ObserveResult struct {
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
	// Phases holds each phase's samples (ms) of the fresh observations:
	// screenshot, decode, snapshot, ax, draw+encode.
	Phases map[string][]float64 `json:"-"`
}

// Observe times, on each page, a full observation (with the set-of-mark
// image encoded as sent to the model) and a raw screenshot alone,
// cfg.Rounds times alternating which goes first, then an observation of
// the unchanged page right after a fresh one.
func Observe(ctx context.Context, s *websurfer.Surfer, cfg ObserveConfig) (*ObserveResult, error) {
	rounds := cfg.Rounds
	if rounds == 0 {
		rounds = 3
	}
	if rounds < 0 {
		return nil, fmt.Errorf("bench observe: %d rounds", rounds)
	}
	var obsMS, rawMS, ratios, againMS, againRatios []float64
	reused := 0
	var toks []int
	phase := map[string][]float64{}
	for i, name := range cfg.Pages {
		page := s.Page()
		ms := float64(30000)
		if _, err := page.Goto(cfg.Base+"/"+name+"/", playwright.PageGotoOptions{Timeout: &ms, WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
			if cfg.Skipped != nil {
				cfg.Skipped(name, err)
			}
			continue
		}
		pageTokens := 0
		first := len(obsMS)
		for r := 0; r < rounds; r++ {
			var o, w float64
			timeObserve := func() error {
				t0 := time.Now()
				obs, err := s.ObserveFresh(ctx)
				if err != nil {
					return err
				}
				o = MsSince(t0)
				pageTokens = max(pageTokens, obs.Tokens)
				for k, d := range map[string]time.Duration{"screenshot": obs.Timing.Screenshot, "decode": obs.Timing.Decode, "snapshot": obs.Timing.Snapshot, "ax": obs.Timing.AX, "draw+encode": obs.Timing.Image} {
					phase[k] = append(phase[k], float64(d.Microseconds())/1000)
				}
				return nil
			}
			timeRaw := func() error {
				t0 := time.Now()
				if _, err := s.Screenshot(ctx); err != nil {
					return err
				}
				w = MsSince(t0)
				return nil
			}
			first, second := timeObserve, timeRaw
			if (i+r)%2 == 1 {
				first, second = timeRaw, timeObserve
			}
			if err := first(); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if err := second(); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			obsMS, rawMS, ratios = append(obsMS, o), append(rawMS, w), append(ratios, o/w)
		}
		// The page observed again, unchanged, right after a fresh
		// observation.
		if _, err := s.ObserveFresh(ctx); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		t0 := time.Now()
		again, err := s.Observe(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		a := MsSince(t0)
		if again.Again {
			reused++
		}
		againMS, againRatios = append(againMS, a), append(againRatios, a/Pct(obsMS[first:], 50))
		toks = append(toks, pageTokens)
		if cfg.Page != nil {
			cfg.Page(ObservePage{Name: name, ObserveMSP50: Pct(obsMS[first:], 50), RawMSP50: Pct(rawMS[first:], 50), RatioP50: Pct(ratios[first:], 50), AgainMS: a, Tokens: pageTokens})
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("no page of %s could be loaded", cfg.Base)
	}
	ft := make([]float64, len(toks))
	for i, t := range toks {
		ft[i] = float64(t)
	}
	res := &ObserveResult{
		Pages:        len(toks),
		ObserveMSP50: Pct(obsMS, 50), ObserveMSP90: Pct(obsMS, 90),
		RawMSP50: Pct(rawMS, 50), RawMSP90: Pct(rawMS, 90),
		RatioP50:  Pct(ratios, 50),
		TokensP50: int(Pct(ft, 50)), TokensP90: int(Pct(ft, 90)), TokensMax: int(slices.Max(ft)),
		Rounds:        rounds,
		AgainMSP50:    Pct(againMS, 50),
		AgainRatioP50: Pct(againRatios, 50),
		AgainReused:   reused,
	}
	res.Phases = phase
	return res, nil
}

// CorpusPages lists the subfolders of dir that hold an index.html.
func CorpusPages(dir string) ([]string, error) {
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

// ServeCorpus serves the corpus directory dir over HTTP on a loopback
// port of its own: the pages Observe loads, under the server's URL.
func ServeCorpus(dir string) (*httptest.Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(http.FileServer(http.Dir(dir)))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	return srv, nil
}
