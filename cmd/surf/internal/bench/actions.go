package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/surfkit/surf/cmd/surf/internal/benchsite"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
	"github.com/surfkit/surf/internal/tokens"
)

// ActionsConfig says how Actions measures.
type ActionsConfig struct {
	// Rounds is the samples per action kind and server; 0 means 5.
	Rounds int
	// Surf is surf's executable, started as "surf serve --allow SITE".
	Surf string
	// PWMCP is the command that starts Playwright MCP; Actions appends
	// --headless --isolated --config FILE. Required.
	PWMCP []string
	// Chromium is the browser both servers run.
	Chromium string
	// Phases splits surf's time into its phases, from its progress
	// notifications.
	Phases bool
	// WithScreenshot also times a screenshot after each of Playwright
	// MCP's actions.
	WithScreenshot bool
}

// PWMCPError is Actions' error when Playwright MCP did not start.
type PWMCPError struct{ Err error }

func (e *PWMCPError) Error() string { return e.Err.Error() }
func (e *PWMCPError) Unwrap() error { return e.Err }

// Actions serves the fixture site on loopback, drives surf and Playwright
// MCP over stdio against it and measures each kind of action on both
// (see surf help bench). A failed sample is counted in the result, not an
// error.
func Actions(ctx context.Context, cfg ActionsConfig) (ActionsResult, error) {
	rounds := cfg.Rounds
	if rounds == 0 {
		rounds = 5
	}
	if rounds < 0 || len(cfg.PWMCP) == 0 || cfg.Surf == "" {
		return ActionsResult{}, errors.New("bench actions needs a positive number of rounds and both servers' commands")
	}
	tmp, err := os.MkdirTemp("", "surf-bench-actions-")
	if err != nil {
		return ActionsResult{}, err
	}
	defer os.RemoveAll(tmp)

	site := benchsite.StartServer()
	defer site.Close()
	host := strings.TrimPrefix(site.URL, "http://")

	surf, err := startBenchServer(ctx, "surf", cfg.Surf, []string{"serve", "--allow", host})
	if err != nil {
		return ActionsResult{}, err
	}
	surf.phases = cfg.Phases
	defer surf.close()
	pwcfg, err := pwmcpConfig(tmp, cfg.Chromium, os.Geteuid() == 0)
	if err != nil {
		return ActionsResult{}, err
	}
	pw, err := startBenchServer(ctx, "Playwright MCP", cfg.PWMCP[0], append(cfg.PWMCP[1:], "--headless", "--isolated", "--config", pwcfg))
	if err != nil {
		return ActionsResult{}, &PWMCPError{Err: err}
	}
	defer pw.close()
	pw.info.Package = npmPackage(cfg.PWMCP)
	if cfg.WithScreenshot {
		pw.shotFile = filepath.Join(tmp, "out", "screenshot.jpeg") // in its output directory (it refuses others), saved over each time
	}

	// Warm-up: start both browsers (not timed).
	for _, s := range []*benchServer{surf, pw} {
		if err := s.warmUp(ctx, site.URL); err != nil {
			return ActionsResult{}, err
		}
	}

	res := ActionsResult{Rounds: rounds, Site: site.URL, Surf: surf.info, PWMCP: pw.info}
	series := make([][2]Series, len(actionKinds))
	for r := range rounds {
		for k, kind := range actionKinds {
			servers := []*benchServer{surf, pw}
			if (r+k)%2 == 1 {
				servers = []*benchServer{pw, surf}
			}
			for _, s := range servers {
				out := s.sample(ctx, site.URL, kind)
				if ctx.Err() != nil {
					return ActionsResult{}, ctx.Err()
				}
				i := 0
				if s == pw {
					i = 1
				}
				series[k][i].add(out)
			}
		}
	}
	for k, kind := range actionKinds {
		m := KindMeasure{Kind: kind.name, Surf: series[k][0], PWMCP: series[k][1]}
		m.Surf.Tools = []string{kind.surfTool}
		m.PWMCP.Tools = []string{kind.pwTool}
		if m.PWMCP.SnapshotCalls > 0 {
			m.PWMCP.Tools = append(m.PWMCP.Tools, "browser_snapshot")
		}
		if m.PWMCP.ScreenshotCalls > 0 {
			m.PWMCP.Tools = append(m.PWMCP.Tools, "browser_take_screenshot")
		}
		m.Surf.finish()
		m.PWMCP.finish()
		if m.Surf.OK > 0 && m.PWMCP.OK > 0 && m.PWMCP.MSP50 > 0 {
			m.RatioP50 = float64(int(m.Surf.MSP50/m.PWMCP.MSP50*100+0.5)) / 100
		}
		res.Failed += m.Surf.Failed + m.PWMCP.Failed
		res.Kinds = append(res.Kinds, m)
	}
	return res, nil
}

// ActionsResult is what "surf bench actions --json" prints.
type ActionsResult struct {
	Rounds int           `json:"rounds"`
	Site   string        `json:"site"`
	Surf   ServerInfo    `json:"surf"`
	PWMCP  ServerInfo    `json:"pwmcp"`
	Kinds  []KindMeasure `json:"kinds"`
	Failed int           `json:"failed"`
}

type ServerInfo struct {
	// Name and Version are what the server says in its initialize reply.
	Name    string `json:"name"`
	Version string `json:"version"`
	// Package is the npm package and version of a server started from a
	// cli.js (Playwright MCP's "@playwright/mcp 0.0.83").
	Package string   `json:"package,omitempty"`
	Command []string `json:"command"`
}

// KindMeasure is one kind of action on both servers.
type KindMeasure struct {
	Kind  string `json:"kind"`
	Surf  Series `json:"surf"`
	PWMCP Series `json:"pwmcp"`
	// RatioP50 is surf's p50 over Playwright MCP's (0 when either has no
	// successful sample).
	RatioP50 float64 `json:"ratio_p50"`
}

// Series is one server's samples of one kind.
type Series struct {
	// Tools are the calls timed per sample, e.g. ["browser_click",
	// "browser_snapshot"].
	Tools  []string `json:"tools"`
	OK     int      `json:"ok"`
	Failed int      `json:"failed"`
	MSP50  float64  `json:"ms_p50"`
	MSP90  float64  `json:"ms_p90"`
	// TokensP50 is the p50 of the text tokens (o200k) of the replies a
	// sample timed.
	TokensP50 int `json:"tokens_p50"`
	// ImageBytesP50 is the p50 of the bytes of the images in them.
	ImageBytesP50 int `json:"image_bytes_p50"`
	// SnapshotCalls counts the samples that needed a browser_snapshot
	// after the action (Playwright MCP only).
	SnapshotCalls int `json:"snapshot_calls,omitempty"`
	// ScreenshotCalls counts the samples that took a screenshot after
	// the action (Playwright MCP with --with-screenshot).
	ScreenshotCalls int `json:"screenshot_calls,omitempty"`
	// ServerMSP50 is the p50 of the time the server says the call took
	// (surf's action_ms in the result's _meta), without the transport.
	ServerMSP50 float64 `json:"server_ms_p50,omitempty"`
	// PhasesMSP50 (with --phases, surf only) splits the call by surf's
	// progress notifications, as received: act (until surf starts
	// waiting for the page), settle (waiting for a reaction to begin, a
	// navigation to load, the network to go quiet), observe (reading the
	// page until the reply is in).
	PhasesMSP50 map[string]float64 `json:"phases_ms_p50,omitempty"`
	Errors      []string           `json:"errors,omitempty"`

	ms, toks, imgs, server []float64
	phases                 map[string][]float64
}

func (s *Series) add(r sampleResult) {
	if r.err != nil {
		s.Failed++
		if len(s.Errors) < 5 {
			s.Errors = append(s.Errors, clip(r.err.Error(), 300))
		}
		return
	}
	s.OK++
	s.ms = append(s.ms, r.ms)
	s.toks = append(s.toks, float64(r.tokens))
	s.imgs = append(s.imgs, float64(r.imageBytes))
	if r.serverMS > 0 {
		s.server = append(s.server, r.serverMS)
	}
	for k, v := range r.phases {
		if s.phases == nil {
			s.phases = map[string][]float64{}
		}
		s.phases[k] = append(s.phases[k], v)
	}
	if r.snapshot {
		s.SnapshotCalls++
	}
	if r.screenshot {
		s.ScreenshotCalls++
	}
}

func (s *Series) finish() {
	s.MSP50, s.MSP90 = Pct(s.ms, 50), Pct(s.ms, 90)
	s.TokensP50, s.ImageBytesP50 = int(Pct(s.toks, 50)), int(Pct(s.imgs, 50))
	s.ServerMSP50 = Pct(s.server, 50)
	for k, v := range s.phases {
		if s.PhasesMSP50 == nil {
			s.PhasesMSP50 = map[string]float64{}
		}
		s.PhasesMSP50[k] = Pct(v, 50)
	}
}

// sampleResult is one timed action.
type sampleResult struct {
	ms         float64
	serverMS   float64            // the server's own account, when it gives one
	phases     map[string]float64 // surf's phases, with --phases
	tokens     int
	imageBytes int
	snapshot   bool // a browser_snapshot call followed the action
	screenshot bool // a browser_take_screenshot call followed it
	err        error
}

// actionKind is one kind of action, as each server does it.
type actionKind struct {
	name  string
	start []string // paths to visit first, not timed; the last one's reply names the target
	// target is the role and name of the element acted on ("" for none).
	role, elem string
	surfTool   string
	surfArgs   func(id int) map[string]any
	pwTool     string
	pwArgs     func(ref string) map[string]any
	// want is text the settled page must show; scroll checks the
	// scroll position instead.
	want string
}

var actionKinds = []actionKind{
	{
		name: "click_link", start: []string{benchsite.Start}, role: "link", elem: "Next page",
		surfTool: "click", surfArgs: func(id int) map[string]any { return map[string]any{"target_id": id} },
		pwTool: "browser_click", pwArgs: func(ref string) map[string]any { return map[string]any{"target": ref, "element": "Next page link"} },
		want: "Second page",
	},
	{
		name: "click_button", start: []string{benchsite.Start}, role: "button", elem: "Show details",
		surfTool: "click", surfArgs: func(id int) map[string]any { return map[string]any{"target_id": id} },
		pwTool: "browser_click", pwArgs: func(ref string) map[string]any {
			return map[string]any{"target": ref, "element": "Show details button"}
		},
		want: "Details shown.",
	},
	{
		name: "type_submit", start: []string{benchsite.Start}, role: "textbox", elem: "Search",
		surfTool: "input_text", surfArgs: func(id int) map[string]any {
			return map[string]any{"input_field_id": id, "text_value": "harbour", "press_enter": true}
		},
		pwTool: "browser_type", pwArgs: func(ref string) map[string]any {
			return map[string]any{"target": ref, "element": "Search textbox", "text": "harbour", "submit": true}
		},
		want: "Results for harbour",
	},
	{
		name: "select", start: []string{benchsite.Start}, role: "combobox", elem: "Colour",
		surfTool: "select_option", surfArgs: func(id int) map[string]any { return map[string]any{"target_id": id, "option": "Green"} },
		pwTool: "browser_select_option", pwArgs: func(ref string) map[string]any {
			return map[string]any{"target": ref, "element": "Colour select", "values": []string{"Green"}}
		},
		want: "Chosen: Green",
	},
	{
		name: "scroll", start: []string{benchsite.Long},
		surfTool: "page_down", surfArgs: func(int) map[string]any { return map[string]any{} },
		pwTool: "browser_press_key", pwArgs: func(string) map[string]any { return map[string]any{"key": "PageDown"} },
	},
	{
		name: "back", start: []string{benchsite.Start, benchsite.Next},
		surfTool: "history_back", surfArgs: func(int) map[string]any { return map[string]any{} },
		pwTool: "browser_navigate_back", pwArgs: func(string) map[string]any { return map[string]any{} },
		want: "Bench start",
	},
}

// FindPWMCP looks for testdata/pwmcp's Playwright MCP in the current
// directory and its parents.
func FindPWMCP() (string, error) {
	const rel = "testdata/pwmcp/node_modules/@playwright/mcp/cli.js"
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, rel)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("playwright MCP is not installed: no %s here or above", rel)
		}
		dir = up
	}
}

// npmPackage is "name version" of the package.json beside the first
// cli.js of argv, or "".
func npmPackage(argv []string) string {
	for _, a := range argv {
		if filepath.Base(a) != "cli.js" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(a), "package.json"))
		if err != nil {
			return ""
		}
		var p struct{ Name, Version string }
		if json.Unmarshal(b, &p) != nil || p.Name == "" {
			return ""
		}
		return p.Name + " " + p.Version
	}
	return ""
}

// pwmcpConfig writes Playwright MCP's configuration to dir: the same
// Chromium and browser flags as surf, a 1280x720 viewport, output files
// in dir.
func pwmcpConfig(dir, chromium string, root bool) (string, error) {
	args := []string{"--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"}
	if root {
		args = append([]string{"--no-sandbox"}, args...)
	}
	cfg := map[string]any{
		"browser": map[string]any{
			"browserName": "chromium",
			"isolated":    true,
			"launchOptions": map[string]any{
				"headless":       true,
				"executablePath": chromium,
				"args":           args,
			},
			"contextOptions": map[string]any{"viewport": map[string]int{"width": 1280, "height": 720}},
		},
		"outputDir": filepath.Join(dir, "out"),
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "pwmcp.json")
	return p, os.WriteFile(p, b, 0o600)
}

// benchServer is one MCP server under measure, on stdio.
type benchServer struct {
	name   string
	pw     bool // Playwright MCP's tools, else surf's
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	info   ServerInfo
	stderr *headBuffer

	phases   bool   // ask for progress notifications on timed calls (surf)
	shotFile string // time a screenshot after each action, saved there (Playwright MCP)
	mu       sync.Mutex
	marks    []progressMark // the notifications of the timed call
}

// progressMark is a progress notification and when it came.
type progressMark struct {
	at  time.Time
	msg string
}

func startBenchServer(ctx context.Context, name, path string, args []string) (*benchServer, error) {
	cmd := exec.Command(path, args...)
	if name == "surf" {
		cmd.Args[0] = "surf" // the name surf answers to (and its test binary dispatches on)
	}
	// Its own process group, so that close can end its browser too; and
	// SIGTERM (a clean shutdown) if this process dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	stderr := &headBuffer{max: 4096}
	cmd.Stderr = stderr
	s := &benchServer{name: name, pw: name != "surf", cmd: cmd, stderr: stderr,
		info: ServerInfo{Name: name, Command: append([]string{path}, args...)}}
	c := mcp.NewClient(&mcp.Implementation{Name: "surf-bench-actions", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			at := time.Now()
			s.mu.Lock()
			s.marks = append(s.marks, progressMark{at, r.Params.Message})
			s.mu.Unlock()
		},
	})
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cs, err := c.Connect(cctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		if cmd.Process != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		}
		return nil, fmt.Errorf("starting %s (%s): %w: %s", name, strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	s.cs = cs
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		s.info.Name, s.info.Version = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	return s, nil
}

// close ends the session (stdin closed, then SIGTERM, then SIGKILL) and
// then kills what is left of the server's process group: its browser.
func (s *benchServer) close() {
	s.cs.Close()
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
}

// call calls a tool and returns its reply; an error result is an error.
func (s *benchServer) call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	return s.callWith(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
}

func (s *benchServer) callWith(ctx context.Context, p *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	tool := p.Name
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	res, err := s.cs.CallTool(cctx, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	if res.IsError {
		return res, fmt.Errorf("%s: error result: %s", tool, clip(FirstText(res), 200))
	}
	return res, nil
}

// warmUp starts the server's browser with a first visit.
func (s *benchServer) warmUp(ctx context.Context, site string) error {
	_, err := s.visit(ctx, site+benchsite.Start, false)
	if err != nil {
		return fmt.Errorf("%s: warming up: %w: %s", s.name, err, strings.TrimSpace(s.stderr.String()))
	}
	return nil
}

// visit opens u and returns the page the model reads (for Playwright MCP,
// a snapshot when page is set, since its navigate reply only links one).
func (s *benchServer) visit(ctx context.Context, u string, page bool) (string, error) {
	if !s.pw {
		res, err := s.call(ctx, "visit_url", map[string]any{"url": u})
		if err != nil {
			return "", err
		}
		return FirstText(res), nil
	}
	res, err := s.call(ctx, "browser_navigate", map[string]any{"url": u})
	if err != nil {
		return "", err
	}
	text := FirstText(res)
	if page && !hasInlineSnapshot(text) {
		res, err := s.call(ctx, "browser_snapshot", map[string]any{})
		if err != nil {
			return "", err
		}
		text = FirstText(res)
	}
	return text, nil
}

// sample does one kind of action once: the start page (not timed), then
// the action until its page is back (timed), then the check of its effect.
func (s *benchServer) sample(ctx context.Context, site string, k actionKind) sampleResult {
	var page string
	for i, p := range k.start {
		var err error
		if page, err = s.visit(ctx, site+p, i == len(k.start)-1 && k.role != ""); err != nil {
			return sampleResult{err: fmt.Errorf("opening the start page: %w", err)}
		}
	}
	var tool string
	var args map[string]any
	if s.pw {
		ref := ""
		if k.role != "" {
			var err error
			if ref, err = snapshotRef(page, k.role, k.elem); err != nil {
				return sampleResult{err: err}
			}
		}
		tool, args = k.pwTool, k.pwArgs(ref)
	} else {
		id := 0
		if k.role != "" {
			var err error
			if id, err = observationID(page, k.role, k.elem); err != nil {
				return sampleResult{err: err}
			}
		}
		tool, args = k.surfTool, k.surfArgs(id)
	}

	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if s.phases {
		p.SetProgressToken("bench")
		s.mu.Lock()
		s.marks = nil
		s.mu.Unlock()
	}
	t0 := time.Now()
	res, err := s.callWith(ctx, p)
	if err != nil {
		return sampleResult{err: err}
	}
	end := time.Now()
	replies := []*mcp.CallToolResult{res}
	snapshot := false
	if s.pw && !hasInlineSnapshot(FirstText(res)) {
		snap, err := s.call(ctx, "browser_snapshot", map[string]any{})
		if err != nil {
			return sampleResult{err: err}
		}
		replies, snapshot = append(replies, snap), true
	}
	if s.pw && s.shotFile != "" {
		shot, err := s.call(ctx, "browser_take_screenshot", map[string]any{"type": "jpeg", "filename": s.shotFile})
		if err != nil {
			return sampleResult{err: err}
		}
		replies = append(replies, shot)
	}
	out := sampleResult{ms: MsSince(t0), snapshot: snapshot, screenshot: s.pw && s.shotFile != ""}
	if v, ok := res.Meta[mcpserver.MetaActionMS].(float64); ok {
		out.serverMS = v
	}
	if s.phases {
		out.phases = s.splitPhases(t0, end)
	}

	var text strings.Builder
	for _, r := range replies {
		text.WriteString(FirstText(r))
		for _, c := range r.Content {
			if im, ok := c.(*mcp.ImageContent); ok {
				out.imageBytes += len(im.Data)
			}
		}
	}
	out.tokens = tokens.Count(text.String())
	if err := s.check(ctx, k, text.String()); err != nil {
		return sampleResult{err: err}
	}
	return out
}

// splitPhases splits a timed call from t0 to end by the progress
// notifications it sent (see Series.PhasesMSP50), or nil when they
// do not say enough.
func (s *benchServer) splitPhases(t0, end time.Time) map[string]float64 {
	// Notifications may be handled just after the reply: give them a moment.
	var settle, read time.Time
	for wait := time.Now().Add(200 * time.Millisecond); ; {
		s.mu.Lock()
		for _, m := range s.marks {
			switch {
			case m.msg == "waiting for the page to settle" && settle.IsZero():
				settle = m.at
			case m.msg == "reading the page":
				read = m.at
			}
		}
		s.mu.Unlock()
		if (!settle.IsZero() && !read.IsZero()) || time.Now().After(wait) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if settle.IsZero() || read.IsZero() {
		return nil
	}
	ms := func(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }
	return map[string]float64{"act": ms(t0, settle), "settle": ms(settle, read), "observe": ms(read, end)}
}

// check tells whether the action had its effect, from the page read back
// (for a scroll on Playwright MCP, whose snapshot does not say where the
// page is scrolled, by asking the page: not timed).
func (s *benchServer) check(ctx context.Context, k actionKind, page string) error {
	if k.want != "" {
		if !strings.Contains(page, k.want) {
			return fmt.Errorf("the page read back does not show %q: %s", k.want, clip(strings.Join(strings.Fields(page), " "), 200))
		}
		return nil
	}
	if !s.pw {
		if !strings.Contains(page, "down the page") {
			return fmt.Errorf("the observation does not say the page is scrolled: %s", clip(strings.Join(strings.Fields(page), " "), 200))
		}
		return nil
	}
	// PageDown scrolls smoothly: wait up to 2 s for the page to move.
	res, err := s.call(ctx, "browser_evaluate", map[string]any{"function": `async () => {
  for (let i = 0; i < 40 && window.scrollY === 0; i++) await new Promise(r => setTimeout(r, 50));
  return window.scrollY;
}`})
	if err != nil {
		return err
	}
	m := regexp.MustCompile(`(?m)^### Result\s*\n+(\d+(?:\.\d+)?)`).FindStringSubmatch(FirstText(res))
	if m == nil || m[1] == "0" {
		return fmt.Errorf("the page did not scroll: window.scrollY is %q", clip(FirstText(res), 200))
	}
	return nil
}

// hasInlineSnapshot tells whether a Playwright MCP reply carries the page
// snapshot itself (0.0.83's action replies link it as a file instead).
func hasInlineSnapshot(text string) bool {
	return strings.Contains(text, "### Snapshot\n```yaml")
}

// snapshotRef finds the ref of the element with role and name in a
// Playwright MCP snapshot: `- link "Next page" [ref=e5] [cursor=pointer]:`.
func snapshotRef(snap, role, name string) (string, error) {
	re := regexp.MustCompile(`(?m)^\s*- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*?\[ref=([^\]\s]+)\]`)
	m := re.FindAllStringSubmatch(snap, -1)
	switch len(m) {
	case 0:
		return "", fmt.Errorf("no %s %q in the snapshot", role, name)
	case 1:
		return m[0][1], nil
	}
	return "", fmt.Errorf("%d elements %s %q in the snapshot", len(m), role, name)
}

// observationID finds the id of the element with role and name in a surf
// observation: `3 button "Show details"`. Only the element list is read,
// not the page's text fenced after it.
func observationID(obs, role, name string) (int, error) {
	if i := strings.Index(obs, "\nvisible text <<<"); i >= 0 {
		obs = obs[:i]
	}
	re := regexp.MustCompile(`(?m)^(\d+) ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"`)
	m := re.FindAllStringSubmatch(obs, -1)
	switch len(m) {
	case 0:
		return 0, fmt.Errorf("no %s %q in the observation", role, name)
	case 1:
		var id int
		fmt.Sscan(m[0][1], &id)
		return id, nil
	}
	return 0, fmt.Errorf("%d elements %s %q in the observation", len(m), role, name)
}

// headBuffer keeps the first max bytes written to it (a server's stderr,
// for errors) and discards the rest.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (t *headBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.b.Len(); room > 0 {
		t.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (t *headBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.b.String()
}
