package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/procfs"
)

// Namespace prefixes every metric's name.
const Namespace = "surf"

// Outcomes of a call or an action, the values of the outcome label.
const (
	OK        = "ok"         // it ran and succeeded
	ToolError = "tool_error" // it returned an error result to the model or client
	Denied    = "denied"     // the policy refused it
	Error     = "error"      // a runtime error (browser gone, context ended)
)

// Metrics are one process's Prometheus metrics. A nil *Metrics records
// nothing. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	smu                  sync.Mutex
	sessions             []func() (open, queued int)
	openDesc, queuedDesc *prometheus.Desc
	states               func() map[string]int // BoardStates
	statesDesc           *prometheus.Desc
	calls                *prometheus.CounterVec
	callSeconds          *prometheus.HistogramVec
	actions              *prometheus.CounterVec
	actionSeconds        *prometheus.HistogramVec
	denials              *prometheus.CounterVec
	modelRequests        *prometheus.CounterVec
	modelTokens          *prometheus.CounterVec
	modelSeconds         prometheus.Histogram
	tasks                *prometheus.CounterVec
	claimToStart         prometheus.Histogram
	runSeconds           prometheus.Histogram
	retries              prometheus.Counter
	restarts             prometheus.Counter
	tabCrashes           prometheus.Counter
	pssRoot              atomic.Int64 // the process whose descendants' PSS is measured
}

// NewMetrics makes the metrics on a registry of their own, with the Go
// runtime's and the process's collectors.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	secs := prometheus.ExponentialBuckets(0.01, 2.5, 12) // 10ms .. ~10min
	m := &Metrics{reg: reg}
	m.openDesc = prometheus.NewDesc(Namespace+"_sessions_open", "Browser sessions open now.", nil, nil)
	m.statesDesc = prometheus.NewDesc(Namespace+"_board_tasks", "The board's tasks now, by state (served by the board's page).", []string{"state"}, nil)
	m.queuedDesc = prometheus.NewDesc(Namespace+"_sessions_queued", "Calls and tasks waiting for a turn at the browser now.", nil, nil)
	m.calls = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "calls_total",
		Help: "MCP tool calls, by tool and outcome."}, []string{"tool", "outcome"})
	m.callSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "call_duration_seconds",
		Help: "Duration of MCP tool calls, by tool.", Buckets: secs}, []string{"tool"})
	m.actions = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "actions_total",
		Help: "Browser actions, by tool and outcome."}, []string{"tool", "outcome"})
	m.actionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: "action_duration_seconds",
		Help: "Duration of browser actions, by tool.", Buckets: secs}, []string{"tool"})
	m.denials = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "denials_total",
		Help: "Policy denials, by gate (action, request) and rule kind."}, []string{"gate", "rule"})
	m.modelRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "model_requests_total",
		Help: "Model requests, by outcome."}, []string{"outcome"})
	m.modelTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "model_tokens_total",
		Help: "Tokens the model reported, by type (input, output)."}, []string{"type"})
	m.modelSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "model_request_duration_seconds",
		Help: "Duration of model requests, retries included.", Buckets: secs})
	m.tasks = prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: "board_tasks_total",
		Help: "Board tasks this process's workers ended, by state (done, failed, cancelled, retried, handed_back)."}, []string{"state"})
	m.claimToStart = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "board_claim_to_start_seconds",
		Help: "Time from a task's claim to the start of its run.", Buckets: secs})
	m.runSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: Namespace, Name: "board_run_duration_seconds",
		Help: "Duration of board task runs.", Buckets: secs})
	m.retries = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "board_retries_total",
		Help: "Board task runs handed back for another attempt."})
	m.restarts = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "browser_restarts_total",
		Help: "Browsers relaunched after a crash or disconnect."})
	m.tabCrashes = prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: "tab_crashes_total",
		Help: "Tabs whose renderer crashed or hung and were replaced."})
	pss := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "browser_memory_pss_bytes",
		Help: "Proportional set size of the browser's processes (this process's descendants), measured at scrape time."},
		func() float64 { return float64(descendantsPSS(int(m.pssRoot.Load()))) })
	for _, c := range []prometheus.Collector{sessionCollector{m}, m.calls, m.callSeconds, m.actions,
		m.actionSeconds, m.denials, m.modelRequests, m.modelTokens, m.modelSeconds, m.tasks, m.claimToStart,
		m.runSeconds, m.retries, m.restarts, m.tabCrashes, pss} {
		f(c)
	}
	return m
}

// Handler serves the metrics in Prometheus's text format; a nil *Metrics
// serves 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Registry is the metrics' registry, for a program that adds its own.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// toolName keeps a label to a tool's name: a name the model or a client
// made up (any text) becomes "unknown".
var toolName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// Tool is name as a label value: name when it looks like a tool's name,
// else "unknown". Callers pass resolved (registered) names; this is the
// backstop against free text.
func Tool(name string) string {
	if toolName.MatchString(name) {
		return name
	}
	return "unknown"
}

// Sessions adds a source of the sessions_open and sessions_queued gauges:
// f is called at each scrape (it must not block), and the gauges are the
// sums over the sources (an MCP server, a worker).
func (m *Metrics) Sessions(f func() (open, queued int)) {
	if m == nil || f == nil {
		return
	}
	m.smu.Lock()
	defer m.smu.Unlock()
	m.sessions = append(m.sessions, f)
}

// sessionCollector reads the gauges of Sessions at scrape time.
type sessionCollector struct{ m *Metrics }

func (c sessionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.m.openDesc
	ch <- c.m.queuedDesc
}

func (c sessionCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.smu.Lock()
	fs := append([]func() (int, int)(nil), c.m.sessions...)
	c.m.smu.Unlock()
	var open, queued int
	for _, f := range fs {
		o, q := f()
		open, queued = open+o, queued+q
	}
	ch <- prometheus.MustNewConstMetric(c.m.openDesc, prometheus.GaugeValue, float64(open))
	ch <- prometheus.MustNewConstMetric(c.m.queuedDesc, prometheus.GaugeValue, float64(queued))
}

// BoardStates adds the board_tasks gauge, by state: f gives the number
// of the board's tasks in each state at each scrape (it must not block;
// the board's page keeps them). A process has at most one such source;
// a later call replaces it.
func (m *Metrics) BoardStates(f func() map[string]int) {
	if m == nil || f == nil {
		return
	}
	m.smu.Lock()
	first := m.states == nil
	m.states = f
	m.smu.Unlock()
	if first {
		m.reg.MustRegister(stateCollector{m})
	}
}

// stateCollector reads the gauge of BoardStates at scrape time.
type stateCollector struct{ m *Metrics }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.m.statesDesc }

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.smu.Lock()
	f := c.m.states
	c.m.smu.Unlock()
	for state, n := range f() {
		ch <- prometheus.MustNewConstMetric(c.m.statesDesc, prometheus.GaugeValue, float64(n), stateLabel(state))
	}
}

// stateLabel keeps a task state to a label value: a board state's name,
// else "other".
func stateLabel(s string) string {
	switch s {
	case "pending", "ready", "running", "done", "failed", "cancelled":
		return s
	}
	return "other"
}

// Call counts an MCP tool call.
func (m *Metrics) Call(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	tool = Tool(tool)
	m.calls.WithLabelValues(tool, outcome).Inc()
	m.callSeconds.WithLabelValues(tool).Observe(d.Seconds())
}

// Action counts a browser action (a tool run on a session, by the agent
// loop or a client).
func (m *Metrics) Action(tool, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	tool = Tool(tool)
	m.actions.WithLabelValues(tool, outcome).Inc()
	m.actionSeconds.WithLabelValues(tool).Observe(d.Seconds())
}

// ruleKind keeps a denial's label to the policy's rule kinds.
var ruleKind = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// Gates of a denial, the values of Denial's gate label.
const (
	// GateAction: the action gate refused a tool call or the URL it
	// would visit (sandbox.LayerAction).
	GateAction = "action"
	// GateRequest: the network gate refused a request, a redirect hop or
	// a connection before it left the browser (the sandbox's request
	// gate and egress proxy, and a replay's missing answers).
	GateRequest = "request"
)

// Denial counts a policy denial by the gate that made it (GateAction,
// GateRequest; anything else is "other") and the kind of rule (the
// policy's Rule names such as "deny", "allowlist", "private"; anything
// else is counted as "other").
func (m *Metrics) Denial(gate, rule string) {
	if m == nil {
		return
	}
	if gate != GateAction && gate != GateRequest {
		gate = "other"
	}
	if !ruleKind.MatchString(rule) {
		rule = "other"
	}
	m.denials.WithLabelValues(gate, rule).Inc()
}

// Model counts a model request, its tokens and its latency.
func (m *Metrics) Model(outcome string, input, output int, d time.Duration) {
	if m == nil {
		return
	}
	m.modelRequests.WithLabelValues(outcome).Inc()
	if input > 0 {
		m.modelTokens.WithLabelValues("input").Add(float64(input))
	}
	if output > 0 {
		m.modelTokens.WithLabelValues("output").Add(float64(output))
	}
	m.modelSeconds.Observe(d.Seconds())
}

// Task states of Task's state label besides the board's own.
const (
	Retried    = "retried"
	HandedBack = "handed_back"
)

// Task counts a board task's run ending in state, with the time from its
// claim to its start and its run's duration (zero durations are not
// observed).
func (m *Metrics) Task(state string, claimToStart, run time.Duration) {
	if m == nil {
		return
	}
	if !ruleKind.MatchString(state) {
		state = "other"
	}
	m.tasks.WithLabelValues(state).Inc()
	if state == Retried {
		m.retries.Inc()
	}
	if claimToStart > 0 {
		m.claimToStart.Observe(claimToStart.Seconds())
	}
	if run > 0 {
		m.runSeconds.Observe(run.Seconds())
	}
}

// BrowserRestarted counts a browser relaunched.
func (m *Metrics) BrowserRestarted() {
	if m != nil {
		m.restarts.Inc()
	}
}

// TabCrashed counts a tab replaced after its renderer crashed or hung.
func (m *Metrics) TabCrashed() {
	if m != nil {
		m.tabCrashes.Inc()
	}
}

// WatchBrowserMemory makes browser_memory_pss_bytes the sum of the
// proportional set sizes of pid's descendants (not pid itself): for surf's
// CLI, os.Getpid(), whose descendants are the browser's processes and
// Playwright's driver. Zero (the default) reports 0.
func (m *Metrics) WatchBrowserMemory(pid int) {
	if m != nil {
		m.pssRoot.Store(int64(pid))
	}
}

// descendantsPSS sums the PSS of root's descendants, in bytes; 0 when
// root is 0 or /proc cannot be read. A process that ends meanwhile is
// skipped.
func descendantsPSS(root int) int64 {
	if root <= 0 {
		return 0
	}
	procs, err := procfs.AllProcs()
	if err != nil {
		return 0
	}
	children := map[int][]procfs.Proc{}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		children[st.PPID] = append(children[st.PPID], p)
	}
	var total int64
	todo := append([]procfs.Proc(nil), children[root]...)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = append(todo[:len(todo)-1], children[p.PID]...)
		if r, err := p.ProcSMapsRollup(); err == nil {
			total += int64(r.Pss)
		}
	}
	return total
}

// Serve serves the metrics at /metrics on addr (host:port; port 0 picks
// one) until ctx ends, and returns the address it listens on.
func (m *Metrics) Serve(ctx context.Context, addr string) (net.Addr, error) {
	if m == nil {
		return nil, errors.New("telemetry: Serve on nil *Metrics")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	return ln.Addr(), nil
}
