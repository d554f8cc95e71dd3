package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/textcut"
)

// SessionsResult is one run of Sessions, as surf bench sessions --json prints it.
type SessionsResult struct {
	Sessions      int     `json:"sessions"`
	Cycles        int     `json:"cycles"`
	Calls         int     `json:"calls"`
	OK            int     `json:"ok"`
	Failed        int     `json:"failed"`
	ActionMSP50   float64 `json:"action_ms_p50"`
	ActionMSP90   float64 `json:"action_ms_p90"`
	QueuedMSP50   float64 `json:"queued_ms_p50"`
	QueuedMSP90   float64 `json:"queued_ms_p90"`
	LatencyMSP50  float64 `json:"latency_ms_p50"`
	LatencyMSP90  float64 `json:"latency_ms_p90"`
	ActionsPerSec float64 `json:"actions_per_s"`
	Seconds       float64 `json:"seconds"`
	PeakRSSMB     float64 `json:"peak_rss_mb"`
	PeakPSSMB     float64 `json:"peak_pss_mb"`
	// FailedFirst counts the failures of a session's first call, which
	// also opens its browser context.
	FailedFirst int      `json:"failed_first"`
	Errors      []string `json:"errors,omitempty"`
}

// SessionsConfig says what Sessions measures: one surf serve --http
// with Sessions clients at once.
type SessionsConfig struct {
	// Surf is surf's executable.
	Surf string
	// Site is the origin of the fixture site (SiteHandler's), allowed by
	// the server.
	Site string
	// Sessions is the clients at once, 1 to 1024.
	Sessions int
	// Cycles is each client's rounds of calls; 0 means 5.
	Cycles int
	// MaxActive is the server's --max-active (0: its default).
	MaxActive int
	// Image is the server's --image mode; "" means som.
	Image string
}

// Sessions starts surf serve --http and measures its calls from
// cfg.Sessions MCP clients at once. A failed call is counted in the
// result, not an error.
func Sessions(ctx context.Context, cfg SessionsConfig) (*SessionsResult, error) {
	if cfg.Sessions < 1 || cfg.Sessions > 1024 || cfg.Cycles < 0 || cfg.MaxActive < 0 || cfg.Surf == "" || cfg.Site == "" {
		return nil, errors.New("bench sessions needs surf's executable, the site, 1 to 1024 sessions and no negative counts")
	}
	if cfg.Cycles == 0 {
		cfg.Cycles = 5
	}
	if cfg.Image == "" {
		cfg.Image = "som"
	}
	b := benchServe{exe: cfg.Surf, site: cfg.Site, sessions: cfg.Sessions, maxActive: cfg.MaxActive, image: cfg.Image}
	return b.run(ctx, cfg.Cycles)
}

// SiteHandler is the fixture: /p/K shows some text and a "Next" link to
// /p/K+1.
func SiteHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/p/{k}", func(w http.ResponseWriter, r *http.Request) {
		k, _ := strconv.Atoi(r.PathValue("k"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><head><title>Page %d</title></head><body><h1>Page %d</h1>
<p>%s</p><ul><li><a href="/p/%d">Next</a></li><li><a href="/p/%d">Back</a></li></ul>
<form><label>Search <input name="q"></label><button>Go</button></form></body></html>`,
			k, k, html.EscapeString(strings.Repeat("Some text to read on this page. ", 20)), k+1, max(0, k-1))
	})
	return mux
}

// benchServe is one "surf serve --http" under measure.
type benchServe struct {
	exe       string
	site      string
	sessions  int
	maxActive int
	image     string
}

var nextLink = regexp.MustCompile(`(?m)^\s*\[?(\d+)\]?\s+link "Next"`)

func (b *benchServe) run(ctx context.Context, cycles int) (*SessionsResult, error) {
	tok := make([]byte, 24)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	host := strings.TrimPrefix(b.site, "http://")
	args := []string{"serve", "--http", "127.0.0.1:0", "--allow", host,
		"--max-sessions", strconv.Itoa(b.sessions), "--image", b.image, "--no-elicit"}
	if b.maxActive > 0 {
		args = append(args, "--max-active", strconv.Itoa(b.maxActive))
	}
	cmd := exec.CommandContext(ctx, b.exe, args...)
	cmd.Env = append(os.Environ(), "SURF_MCP_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting surf serve: %w", err)
	}
	exited := make(chan error, 1)
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	endpoint := make(chan string, 1)
	var tail strings.Builder // the server's stderr, for a failed start
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "surf: serving MCP (streamable HTTP) at "); ok {
				endpoint <- strings.TrimSpace(rest)
				continue
			}
			if tail.Len() < 4096 {
				tail.WriteString(line + "\n")
			}
		}
		io.Copy(io.Discard, stderr)
		exited <- cmd.Wait()
	}()
	var url string
	select {
	case url = <-endpoint:
	case err := <-exited:
		return nil, fmt.Errorf("surf serve exited at start (%v): %s", err, strings.TrimSpace(tail.String()))
	case <-time.After(2 * time.Minute):
		stop()
		return nil, errors.New("surf serve did not start within 2m")
	}
	defer stop()

	mem := &rssSampler{pid: cmd.Process.Pid}
	sctx, scancel := context.WithCancel(ctx)
	samplerDone := make(chan struct{})
	go func() { mem.run(sctx, 500*time.Millisecond); close(samplerDone) }()

	hc := &http.Client{Transport: &bearerTransport{token: token, next: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 2 * b.sessions,
	}}}
	var (
		mu                      sync.Mutex
		action, queued, latency []float64
		ok, failed, failedFirst int
		errs                    []string
	)
	record := func(first bool, res *mcp.CallToolResult, err error, took time.Duration) string {
		mu.Lock()
		defer mu.Unlock()
		latency = append(latency, float64(took.Microseconds())/1000)
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case res.IsError:
			msg = FirstText(res)
		}
		if msg != "" {
			failed++
			if first {
				failedFirst++
			}
			if len(errs) < 5 {
				errs = append(errs, clip(msg, 200))
			}
			return msg
		}
		ok++
		if v, found := res.Meta[mcpserver.MetaActionMS].(float64); found {
			action = append(action, v)
		}
		if v, found := res.Meta[mcpserver.MetaQueuedMS].(float64); found {
			queued = append(queued, v)
		}
		return ""
	}

	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range b.sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.session(ctx, hc, url, i, cycles, record)
		}()
	}
	wg.Wait()
	secs := time.Since(t0).Seconds()
	scancel()
	<-samplerDone

	rss, pss := mem.peak()
	return &SessionsResult{
		Sessions: b.sessions, Cycles: cycles, Calls: ok + failed, OK: ok, Failed: failed,
		ActionMSP50: Pct(action, 50), ActionMSP90: Pct(action, 90),
		QueuedMSP50: Pct(queued, 50), QueuedMSP90: Pct(queued, 90),
		LatencyMSP50: Pct(latency, 50), LatencyMSP90: Pct(latency, 90),
		ActionsPerSec: float64(int(float64(ok)/secs*100)) / 100,
		Seconds:       float64(int(secs*10)) / 10,
		PeakRSSMB:     float64(rss / 1024),
		PeakPSSMB:     float64(pss / 1024),
		FailedFirst:   failedFirst,
		Errors:        errs,
	}, nil
}

// session runs one MCP session's cycles. A failed visit skips that
// cycle's click (counted as failed too: it was not possible).
func (b *benchServe) session(ctx context.Context, hc *http.Client, url string, i, cycles int, record func(bool, *mcp.CallToolResult, error, time.Duration) string) {
	c := mcp.NewClient(&mcp.Implementation{Name: "surf-bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		for k := range 2 * cycles {
			record(k == 0, nil, fmt.Errorf("connecting: %w", err), 0)
		}
		return
	}
	defer cs.Close()
	calls := 0
	do := func(name string, args map[string]any) (*mcp.CallToolResult, string) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		calls++
		return res, record(calls == 1, res, err, time.Since(t0))
	}
	for k := range cycles {
		res, failed := do("visit_url", map[string]any{"url": fmt.Sprintf("%s/p/%d", b.site, 1000*i+10*k)})
		if failed != "" {
			record(false, nil, errors.New("click skipped: the visit failed"), 0)
			continue
		}
		m := nextLink.FindStringSubmatch(FirstText(res))
		if m == nil {
			record(false, nil, errors.New(`no "Next" link in the observation`), 0)
			continue
		}
		id, _ := strconv.Atoi(m[1])
		do("click", map[string]any{"target_id": id})
	}
}

// FirstText is the text of a tool result, a line per text content.
func FirstText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// clip is the first line of s, cut to n bytes.
func clip(s string, n int) string {
	return textcut.Line(strings.TrimSpace(s), n)
}

// bearerTransport adds the server's token to every request.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (t *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

// rssSampler samples the resident memory of a process and all its
// descendants (the server and its browser processes) from /proc.
type rssSampler struct {
	pid int

	mu      sync.Mutex
	peakKB  int64 // the sum of RSS
	peakPSS int64 // the sum of PSS: shared pages counted once
}

func (s *rssSampler) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rss, pss := treeMem(s.pid)
		s.mu.Lock()
		s.peakKB = max(s.peakKB, rss)
		s.peakPSS = max(s.peakPSS, pss)
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *rssSampler) peak() (rss, pss int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peakKB, s.peakPSS
}

// treeMem is the sum of VmRSS and of Pss, in KiB, of pid and its
// descendants.
func treeMem(pid int) (rss, pss int64) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p]...)
		rss += ProcKB(p, "status", "VmRSS:")
		pss += ProcKB(p, "smaps_rollup", "Pss:")
	}
	return rss, pss
}

// ProcKB reads a "Key: N kB" line of /proc/PID/file, or 0.
func ProcKB(pid int, file, key string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/" + file)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb
			}
		}
	}
	return 0
}

// SessionCost is the peak memory one more session adds, between two runs.
type SessionCost struct {
	From, To int     // the runs' sessions
	RSS, PSS float64 // MB per added session
}

// PerSession estimates the memory per added session from the runs with the
// fewest and the most sessions: the slope of peak RSS and PSS between them.
func PerSession(all []SessionsResult) (SessionCost, bool) {
	if len(all) < 2 {
		return SessionCost{}, false
	}
	lo, hi := all[0], all[0]
	for _, r := range all {
		if r.Sessions < lo.Sessions {
			lo = r
		}
		if r.Sessions > hi.Sessions {
			hi = r
		}
	}
	d := float64(hi.Sessions - lo.Sessions)
	if d == 0 {
		return SessionCost{}, false
	}
	return SessionCost{From: lo.Sessions, To: hi.Sessions, RSS: (hi.PeakRSSMB - lo.PeakRSSMB) / d, PSS: (hi.PeakPSSMB - lo.PeakPSSMB) / d}, true
}

// SessionsSeries runs Sessions with each session count of ns in turn,
// against a fixture site of its own (SiteHandler) that it serves on
// loopback while they run; cfg's Sessions and Site are set for each run.
// each, if set, gets every result as it comes; its error ends the series.
func SessionsSeries(ctx context.Context, cfg SessionsConfig, ns []int, each func(*SessionsResult) error) ([]SessionsResult, error) {
	site := httptest.NewServer(SiteHandler())
	defer site.Close()
	cfg.Site = site.URL
	var all []SessionsResult
	for _, n := range ns {
		cfg.Sessions = n
		res, err := Sessions(ctx, cfg)
		if err != nil {
			return all, fmt.Errorf("%d sessions: %w", n, err)
		}
		all = append(all, *res)
		if each != nil {
			if err := each(res); err != nil {
				return all, err
			}
		}
	}
	return all, nil
}
