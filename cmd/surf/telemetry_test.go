package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/cmd/surf/internal/demosite"
)

func init() {
	scriptCmds["checkspans"] = cmdCheckSpans
}

// consoleSpan is a span as OTEL_TRACES_EXPORTER=console prints it (one
// JSON object a line, on stderr).
type consoleSpan struct {
	Name        string
	SpanContext struct{ TraceID, SpanID string }
	Parent      struct{ TraceID, SpanID string }
	Attributes  []struct {
		Key   string
		Value struct {
			Type  string
			Value any
		}
	}
}

func (s consoleSpan) attr(key string) (any, bool) {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value.Value, true
		}
	}
	return nil, false
}

// parseSpans reads the spans in a command's stderr; other lines (logs,
// messages) are skipped.
func parseSpans(stderr string) ([]consoleSpan, error) {
	var spans []consoleSpan
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var s consoleSpan
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return nil, fmt.Errorf("a span line that is not JSON: %v: %q", err, line)
		}
		spans = append(spans, s)
	}
	return spans, nil
}

// cmdCheckSpans: checkspans [-absent TEXT]... NAME=COUNT... checks the
// spans in the last command's stderr: all in one trace, NAME (a span
// name) exactly COUNT times, every model call ("chat ...") with
// gen_ai.usage.input_tokens, and no TEXT anywhere in them.
func cmdCheckSpans(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! checkspans")
	}
	stderr := ts.ReadFile("stderr")
	spans, err := parseSpans(stderr)
	ts.Check(err)
	if len(spans) == 0 {
		ts.Fatalf("no spans in stderr")
	}
	counts := map[string]int{}
	trace := spans[0].SpanContext.TraceID
	for _, s := range spans {
		counts[s.Name]++
		if s.SpanContext.TraceID != trace {
			ts.Fatalf("span %s is in trace %s, not %s", s.Name, s.SpanContext.TraceID, trace)
		}
		if strings.HasPrefix(s.Name, "chat ") {
			if v, ok := s.attr("gen_ai.usage.input_tokens"); !ok || v.(float64) <= 0 {
				ts.Fatalf("model call span %s has no gen_ai.usage.input_tokens", s.Name)
			}
		}
	}
	for i := 0; i < len(args); i++ {
		if args[i] == "-absent" && i+1 < len(args) {
			i++
			for _, line := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(line, "{") && strings.Contains(line, args[i]) {
					ts.Fatalf("a span holds %q: %s", args[i], line)
				}
			}
			continue
		}
		name, n, ok := strings.Cut(args[i], "=")
		want, err := strconv.Atoi(n)
		if !ok || err != nil {
			ts.Fatalf("usage: checkspans [-absent TEXT]... NAME=COUNT...")
		}
		if counts[name] != want {
			ts.Fatalf("%d %q spans; want %d (all: %v)", counts[name], name, want, counts)
		}
	}
}

// promtoolCheck runs "promtool check metrics" (Debian's prometheus
// package; make setup installs it) on a scrape. Without promtool the test
// is skipped, except under CI=true where that is a failure.
func promtoolCheck(t *testing.T, scrape string) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool is missing (apt-get install prometheus, or make setup)")
		}
		t.Skip("promtool is missing: apt-get install prometheus (or make setup) to check the metrics' format")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// scrape GETs a /metrics address.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// metricValue is the value of the sample named by series (name with its
// labels as Prometheus prints them), or -1 when there is none.
func metricValue(scrape, series string) float64 {
	for _, line := range strings.Split(scrape, "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			if err == nil {
				return v
			}
		}
	}
	return -1
}

// started is a surf process whose stderr is watched for lines.
type started struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	lines  chan string
	exited chan struct{}
}

func start(t *testing.T, cmd *exec.Cmd) *started {
	t.Helper()
	p := &started{cmd: cmd, stderr: &lockedBuffer{}, lines: make(chan string, 1024), exited: make(chan struct{})}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.stderr.Write([]byte(sc.Text() + "\n"))
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("%s's stderr:\n%s", cmd.Args[1], p.stderr.String())
		}
	})
	return p
}

// await returns the first submatch of the first stderr line re matches.
func (p *started) await(t *testing.T, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case l := <-p.lines:
			if m := re.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case <-p.exited:
			t.Fatalf("surf %s ended before printing %s", p.cmd.Args[1], re)
		case <-deadline:
			t.Fatalf("surf %s did not print %s", p.cmd.Args[1], re)
		}
	}
}

// stop interrupts the process and waits for it to exit (and flush its
// spans).
func (p *started) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.exited:
	case <-time.After(2 * time.Minute):
		t.Fatalf("surf %s did not exit on SIGINT", p.cmd.Args[1])
	}
}

var metricsAt = regexp.MustCompile(`^surf: metrics at (http://\S+/metrics)$`)

func randomText(t *testing.T, prefix string) string {
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return prefix + hex.EncodeToString(b)
}

// TestServeMetricsAndTrace is issue 32's acceptance 3, 4 and 5 for surf
// serve: /metrics passes promtool check metrics after calls, its counters
// move with them, a call whose _meta carries a traceparent is traced in
// that trace, and random typed text is in no metric and no span.
func TestServeMetricsAndTrace(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	const token = "metrics-token-0123456789abcdef01"
	cmd := surfCmd("serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--allow", site.Host, "--no-ui")
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token, "OTEL_TRACES_EXPORTER=console", "OTEL_SERVICE_NAME=surf-serve-test")
	p := start(t, cmd)
	metricsURL := p.await(t, metricsAt)
	endpoint := p.await(t, regexp.MustCompile(`^surf: serving MCP \(streamable HTTP\) at (\S+)$`))

	before := scrape(t, metricsURL)
	promtoolCheck(t, before)
	if v := metricValue(before, `surf_calls_total{outcome="ok",tool="visit_url"}`); v > 0 {
		t.Fatalf("visit_url counted %v times before any call", v)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	typed := randomText(t, "typed-")
	calls := []*mcp.CallToolParams{
		{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}, Meta: mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}},
		{Name: "input_text", Arguments: map[string]any{"input_field_id": 4, "text_value": typed, "press_enter": false}},
		{Name: "visit_url", Arguments: map[string]any{"url": "https://denied.example/?q=" + typed}},
	}
	for _, c := range calls {
		if _, err := cs.CallTool(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if v := metricValue(scrape(t, metricsURL), "surf_sessions_open"); v != 1 {
		t.Errorf("surf_sessions_open = %v with one client's session open", v)
	}
	cs.Close()
	after := scrape(t, metricsURL)
	promtoolCheck(t, after)
	for series, want := range map[string]float64{
		`surf_calls_total{outcome="ok",tool="visit_url"}`:         1,
		`surf_calls_total{outcome="tool_error",tool="visit_url"}`: 1,
		`surf_calls_total{outcome="ok",tool="input_text"}`:        1,
		`surf_actions_total{outcome="ok",tool="input_text"}`:      1,
		`surf_actions_total{outcome="denied",tool="visit_url"}`:   1,
		`surf_denials_total{gate="action",rule="allow"}`:          1,
		`surf_call_duration_seconds_count{tool="visit_url"}`:      2,
	} {
		if got := metricValue(after, series); got != want {
			t.Errorf("%s = %v after the calls; want %v", series, got, want)
		}
	}
	if strings.Contains(after, typed) {
		t.Error("the metrics hold the typed text")
	}
	if v := metricValue(after, "surf_browser_memory_pss_bytes"); v <= 0 {
		t.Errorf("surf_browser_memory_pss_bytes = %v with a browser open", v)
	}

	p.stop(t)
	spans, err := parseSpans(p.stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	var inTrace []string
	for _, s := range spans {
		if s.SpanContext.TraceID == traceID {
			inTrace = append(inTrace, s.Name)
		}
	}
	if !strings.Contains(strings.Join(inTrace, ","), "tools/call visit_url") || !strings.Contains(strings.Join(inTrace, ","), "execute_tool visit_url") {
		t.Errorf("the spans in the _meta traceparent's trace are %v; want the call and its action", inTrace)
	}
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.HasPrefix(line, "{") && strings.Contains(line, typed) {
			t.Errorf("a span holds the typed text: %s", line)
		}
	}
}

// TestServeMetricsRequestDenials: a request the network gate blocks (a
// page's image from a host outside the allowlist, which no action asked
// for) is counted in surf_denials_total with gate="request", beside the
// action gate's denials, and /metrics still passes promtool check
// metrics; the blocked URL is in no label.
func TestServeMetricsRequestDenials(t *testing.T) {
	blocked := randomText(t, "blocked-") + ".example"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>img</title><p>a picture:</p><img alt="pixel" src="http://%s/pixel.png">`, blocked)
	}))
	defer site.Close()
	const token = "metrics-token-0123456789abcdef02"
	cmd := surfCmd("serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--allow", site.Listener.Addr().String(), "--no-ui")
	cmd.Env = append(cmd.Env, "SURF_MCP_TOKEN="+token)
	p := start(t, cmd)
	metricsURL := p.await(t, metricsAt)
	endpoint := p.await(t, regexp.MustCompile(`^surf: serving MCP \(streamable HTTP\) at (\S+)$`))
	const series = `surf_denials_total{gate="request",rule="allow"}`
	if v := metricValue(scrape(t, metricsURL), series); v > 0 {
		t.Fatalf("%s = %v before any call", series, v)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "surf-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: endpoint, MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &bearerTransport{token: token, next: http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "visit_url", Arguments: map[string]any{"url": site.URL + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("visit_url of the allowed page failed: %v", res.Content)
	}
	// The image's request is refused while the page loads, on the
	// gate's goroutine: wait for the count (bounded by ctx).
	var got string
	for {
		got = scrape(t, metricsURL)
		if metricValue(got, series) >= 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s did not move after the page's image was blocked:\n%s", series, got)
		case <-time.After(200 * time.Millisecond):
		}
	}
	promtoolCheck(t, got)
	if v := metricValue(got, `surf_denials_total{gate="action",rule="allow"}`); v > 0 {
		t.Errorf("the request gate's denial was counted as the action gate's too (%v)", v)
	}
	if strings.Contains(got, blocked) {
		t.Error("the metrics hold the blocked host")
	}
}

// TestWorkMetricsAndTrace is issue 32's acceptance 3 and 4 for the board:
// a task added by 'surf board add' runs on 'surf work', whose task, run,
// step, model and action spans share the trace of the span that added it,
// and whose /metrics passes promtool check metrics with the run counted.
func TestWorkMetricsAndTrace(t *testing.T) {
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	modelURL, stopModel, err := startWorkModel(&workModel{steps: 2, delay: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stopModel()
	dir := filepath.Join(t.TempDir(), "board")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	add := surfCmd("board", "add", "Read the page title.", "--id", "t1", "--start-url", site.URL+"/", "--data", dir)
	add.Env = append(add.Env, "OTEL_TRACES_EXPORTER=console")
	var addErr lockedBuffer
	add.Stderr = &addErr
	if out, err := add.Output(); err != nil {
		t.Fatalf("surf board add: %v\n%s%s", err, out, addErr.String())
	}
	addSpans, err := parseSpans(addErr.String())
	if err != nil {
		t.Fatal(err)
	}
	var trace string
	for _, s := range addSpans {
		if s.Name == "board.add" {
			trace = s.SpanContext.TraceID
		}
	}
	if trace == "" {
		t.Fatalf("surf board add printed no board.add span:\n%s", addErr.String())
	}

	work := surfCmd("work", "--name", "tw", "--data", dir, "--allow", site.Host, "--model", "test-model", "--metrics", "127.0.0.1:0")
	work.Env = append(work.Env, "OPENAI_BASE_URL="+modelURL, "OPENAI_API_KEY=fake-key", "OTEL_TRACES_EXPORTER=console")
	p := start(t, work)
	metricsURL := p.await(t, metricsAt)
	b, err := openTestBoard(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	// While the task runs, its session is counted open.
	for metricValue(scrape(t, metricsURL), "surf_sessions_open") != 1 {
		select {
		case <-ctx.Done():
			t.Fatal("surf_sessions_open never said 1 while the task ran")
		case <-time.After(50 * time.Millisecond):
		}
	}
	recs, err := b.Wait(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].State != board.Done {
		t.Fatalf("the task ended %s: %s", recs[0].State, recs[0].Reason)
	}
	// The record says done before the worker's bookkeeping of the run
	// ends: wait for the run to be counted.
	m := scrape(t, metricsURL)
	for metricValue(m, `surf_board_tasks_total{state="done"}`) < 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("the run was not counted:\n%s", m)
		case <-time.After(100 * time.Millisecond):
		}
		m = scrape(t, metricsURL)
	}
	promtoolCheck(t, m)
	for series, want := range map[string]float64{
		`surf_sessions_open`:                      0,
		`surf_board_tasks_total{state="done"}`:    1,
		`surf_board_run_duration_seconds_count`:   1,
		`surf_model_requests_total{outcome="ok"}`: 2,
		`surf_model_tokens_total{type="input"}`:   200,
	} {
		if got := metricValue(m, series); got != want {
			t.Errorf("%s = %v; want %v", series, got, want)
		}
	}
	if got := metricValue(m, `surf_actions_total{outcome="ok",tool="visit_url"}`); got < 1 {
		t.Errorf("no visit_url action counted: %v", got)
	}
	p.stop(t)
	spans, err := parseSpans(p.stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, s := range spans {
		if s.SpanContext.TraceID != trace {
			t.Errorf("the worker's span %s is in trace %s, not the adder's %s", s.Name, s.SpanContext.TraceID, trace)
		}
		names[s.Name]++
	}
	for _, want := range []string{"board.task", "surf.run", "surf.step", "chat test-model", "execute_tool visit_url"} {
		if names[want] == 0 {
			t.Errorf("no %s span on the worker (spans: %v)", want, names)
		}
	}
}

// TestBoardUIMetrics: surf board ui --metrics serves the board's tasks
// by state, in Prometheus's format (checked by promtool), and the gauge
// follows the board.
func TestBoardUIMetrics(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"a", "b"} {
		if out, err := surfCmd("board", "add", "task "+id, "--id", id, "--data", dir).CombinedOutput(); err != nil {
			t.Fatalf("board add: %v\n%s", err, out)
		}
	}
	p := start(t, surfCmd("board", "ui", "--data", dir, "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"))
	metricsURL := p.await(t, metricsAt)
	deadline := time.Now().Add(60 * time.Second)
	var got string
	for {
		got = scrape(t, metricsURL)
		if metricValue(got, `surf_board_tasks{state="ready"}`) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the board's two ready tasks are not in the metrics:\n%s", got)
		}
		time.Sleep(200 * time.Millisecond)
	}
	promtoolCheck(t, got)
	if v := metricValue(got, `surf_board_tasks{state="done"}`); v != 0 {
		t.Errorf("done tasks: %v, want 0", v)
	}
	if out, err := surfCmd("board", "cancel", "a", "--data", dir).CombinedOutput(); err != nil {
		t.Fatalf("board cancel: %v\n%s", err, out)
	}
	for metricValue(scrape(t, metricsURL), `surf_board_tasks{state="cancelled"}`) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the cancelled task is not in the metrics")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
