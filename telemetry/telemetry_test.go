package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTracingOffByDefault(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		{"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"},
	} {
		tp, shutdown, err := Tracing(context.Background(), TracingConfig{Getenv: envOf(env)})
		if err != nil {
			t.Fatal(err)
		}
		_, span := Tracer(tp).Start(context.Background(), "x")
		if span.SpanContext().IsValid() {
			t.Errorf("with %v, spans are recorded", env)
		}
		span.End()
		if err := shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
	if _, _, err := Tracing(context.Background(), TracingConfig{Getenv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "jaeger-thrift"})}); err == nil || !strings.Contains(err.Error(), "unknown exporter") {
		t.Errorf("an unknown exporter: %v", err)
	}
}

func TestTracingConsole(t *testing.T) {
	var buf bytes.Buffer
	tp, shutdown, err := Tracing(context.Background(), TracingConfig{Service: "svc",
		Getenv: envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console"}), Console: &buf})
	if err != nil {
		t.Fatal(err)
	}
	_, span := Tracer(tp).Start(context.Background(), "hello", trace.WithAttributes(GenAIInputTokens.Int(7)))
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Name     string
		Resource []struct {
			Key   string
			Value struct{ Value any }
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got.Name != "hello" {
		t.Fatalf("console output %q: %v", buf.String(), err)
	}
	if !strings.Contains(buf.String(), `"service.name","Value":{"Type":"STRING","Value":"svc"}`) {
		t.Errorf("no service name in %s", buf.String())
	}
}

// otlpReceiver is an OTLP/HTTP trace receiver: it decodes each export
// request (protobuf, gzip or not) as a collector does.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.ResourceSpans
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var er coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &er); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.spans = append(r.spans, er.ResourceSpans...)
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

// TestTracingOTLP exports through the standard OTLP/HTTP exporter that
// OTEL_EXPORTER_OTLP_ENDPOINT selects, to a receiver that decodes the
// export requests with the OTLP protobuf definitions, and reads the spans
// back: names, parentage, attributes and the service name.
func TestTracingOTLP(t *testing.T) {
	rcv := &otlpReceiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "surf-otlp-test")
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_SERVICE_NAME": "surf-otlp-test"}
	tp, shutdown, err := Tracing(context.Background(), TracingConfig{Getenv: envOf(env)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, run := Tracer(tp).Start(context.Background(), "surf.run")
	_, chat := Tracer(tp).Start(ctx, "chat m", trace.WithAttributes(GenAIInputTokens.Int(1500), GenAIRequestModel.String("m")))
	chat.End()
	run.End()
	sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := shutdown(sctx); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	byName := map[string]*tracepb.Span{}
	for _, rs := range rcv.spans {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		if service != "surf-otlp-test" {
			t.Errorf("service.name = %q", service)
		}
		for _, ss := range rs.ScopeSpans {
			if ss.GetScope().GetName() != Scope {
				t.Errorf("scope %q", ss.GetScope().GetName())
			}
			for _, s := range ss.Spans {
				byName[s.Name] = s
			}
		}
	}
	r, c := byName["surf.run"], byName["chat m"]
	if r == nil || c == nil {
		t.Fatalf("the receiver got %v", byName)
	}
	if !bytes.Equal(c.TraceId, r.TraceId) || !bytes.Equal(c.ParentSpanId, r.SpanId) {
		t.Error("the model call is not the run's child in its trace")
	}
	var tokens int64 = -1
	for _, a := range c.Attributes {
		if a.Key == string(GenAIInputTokens) {
			tokens = a.GetValue().GetIntValue()
		}
	}
	if tokens != 1500 {
		t.Errorf("gen_ai.usage.input_tokens = %d", tokens)
	}
}

func TestTraceparentRoundTrip(t *testing.T) {
	if got := Traceparent(context.Background()); got != "" {
		t.Errorf("no span: %q", got)
	}
	if ctx := Extract(context.Background(), "not a traceparent", ""); trace.SpanContextFromContext(ctx).IsValid() {
		t.Error("a malformed traceparent was taken")
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	ctx := Extract(context.Background(), tp, "k=v")
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsRemote() || sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.TraceState().Get("k") != "v" {
		t.Fatalf("extracted %v", sc)
	}
	if got := Traceparent(ctx); got != tp {
		t.Errorf("Traceparent = %q, want %q", got, tp)
	}
}

// TestMetricsLabels: a nil *Metrics records nothing and does not panic;
// label values are kept to names, so free text (a URL, a secret) a caller
// passes by mistake becomes "unknown" or "other".
func TestMetricsLabels(t *testing.T) {
	var nilM *Metrics
	nilM.Action("click", OK, time.Second)
	nilM.Call("x", OK, 0)
	nilM.Denial(GateAction, "deny")
	nilM.Model(OK, 1, 1, 0)
	nilM.Task("done", 1, 1)
	nilM.Sessions(func() (int, int) { return 1, 1 })
	nilM.BrowserRestarted()
	nilM.TabCrashed()
	nilM.WatchBrowserMemory(1)

	m := NewMetrics()
	const secret = "https://bank.example/?token=s3cr3t-VALUE"
	m.Action(secret, OK, time.Second)
	m.Call("visit_url", ToolError, time.Second)
	m.Denial(GateAction, secret)
	m.Denial(secret, "private-networks")
	m.Denial(GateRequest, "private-networks")
	m.Task(secret, time.Second, time.Minute)
	m.Sessions(func() (int, int) { return 2, 3 })
	m.Sessions(func() (int, int) { return 1, 0 })
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	if strings.Contains(body, "s3cr3t") || strings.Contains(body, "bank.example") {
		t.Errorf("free text reached a label:\n%s", body)
	}
	for _, want := range []string{
		`surf_actions_total{outcome="ok",tool="unknown"} 1`,
		`surf_calls_total{outcome="tool_error",tool="visit_url"} 1`,
		`surf_denials_total{gate="action",rule="other"} 1`,
		`surf_denials_total{gate="other",rule="private-networks"} 1`,
		`surf_denials_total{gate="request",rule="private-networks"} 1`,
		`surf_board_tasks_total{state="other"} 1`,
		`surf_sessions_open 3`,
		`surf_sessions_queued 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in:\n%s", want, body)
		}
	}
}

// TestBrowserMemory measures the PSS of a child process (a sleep) at
// scrape time.
func TestBrowserMemory(t *testing.T) {
	m := NewMetrics()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	pss := func() float64 {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		for _, l := range strings.Split(rec.Body.String(), "\n") {
			if v, ok := strings.CutPrefix(l, "surf_browser_memory_pss_bytes "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		t.Fatal("no surf_browser_memory_pss_bytes")
		return 0
	}
	if v := pss(); v != 0 {
		t.Errorf("unwatched: %v", v)
	}
	m.WatchBrowserMemory(os.Getpid())
	if v := pss(); v <= 0 {
		t.Errorf("the child's PSS is %v", v)
	}
}

func TestMetricsServe(t *testing.T) {
	m := NewMetrics()
	ctx, cancel := context.WithCancel(context.Background())
	addr, err := m.Serve(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "surf_sessions_open 0") {
		t.Errorf("GET /metrics: %d\n%s", resp.StatusCode, b)
	}
	cancel()
	if _, err := m.Serve(context.Background(), "256.0.0.1:0"); err == nil {
		t.Error("a bad address was served")
	}
}
