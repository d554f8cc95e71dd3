package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// TestTracesReachACollector is issue 32's acceptance 4, last point: surf
// run exports its spans over OTLP, by HTTP and by gRPC, to a real
// OpenTelemetry Collector (bin/otelcol-surf, which make setup builds from
// internal/tools/otelcol), and the spans read back from the collector's
// file exporter are one trace: the run, its steps, its model calls with
// the token usage the model reported, and its actions.
func TestTracesReachACollector(t *testing.T) {
	bin := otelcolBinary(t)
	site, err := demosite.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	col := startCollector(t, bin)

	for _, tc := range []struct{ name, protocol, endpoint string }{
		{"http", "http/protobuf", "http://" + col.httpAddr},
		{"grpc", "grpc", "http://" + col.grpcAddr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			service := "surf-otelcol-" + tc.name
			model := fakeopenai.Start(t, fakeopenai.NewScript(
				fakeopenai.Turn{Reply: fakeopenai.Reply{Usage: &fakeopenai.Usage{PromptTokens: 1101, CompletionTokens: 11},
					ToolCalls: []fakeopenai.ToolCall{{Name: "input_text", Arguments: `{"input_field_id": 4, "text_value": "harbour"}`}}}},
				fakeopenai.Turn{Reply: fakeopenai.Reply{Usage: &fakeopenai.Usage{PromptTokens: 1102, CompletionTokens: 12},
					ToolCalls: []fakeopenai.ToolCall{{Name: "click", Arguments: `{"target_id": 4}`}}}},
				fakeopenai.Turn{Expect: fakeopenai.Expect{UserContains: fakeopenai.Strings{"Saturday 10:00 to 14:00"}},
					Reply: fakeopenai.Reply{Usage: &fakeopenai.Usage{PromptTokens: 1103, CompletionTokens: 13},
						ToolCalls: []fakeopenai.ToolCall{{Name: "stop_action", Arguments: `{"answer": "On Saturdays from 10:00 to 14:00."}`}}}},
			))
			cmd := surfCmd("run", "When does the Harbour Branch open on Saturdays?", "--start-url", site.URL,
				"--allow", site.Host, "--model", "test-model", "--journal", filepath.Join(t.TempDir(), "journal.jsonl"))
			cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "OTEL_") })
			cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+model.URL(), "OPENAI_API_KEY=fake-key",
				"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+tc.endpoint,
				"OTEL_EXPORTER_OTLP_PROTOCOL="+tc.protocol, "OTEL_SERVICE_NAME="+service)
			out := runBounded(t, cmd, 3*time.Minute)
			if !strings.Contains(out, "ended: answered after 3 steps") {
				t.Fatalf("surf run did not answer in 3 steps:\n%s", out)
			}
			model.Check(t)

			// surf run sent its spans before it exited; the collector's
			// file exporter (no queue) writes them in the order they came
			// within its flush interval, and surf.run, which ends last,
			// comes last.
			var spans []otlpSpan
			deadline := time.Now().Add(2 * time.Minute)
			for {
				spans, err = col.spans(service)
				if err != nil {
					t.Fatal(err)
				}
				if slices.ContainsFunc(spans, func(s otlpSpan) bool { return s.Name == "surf.run" }) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the collector wrote no surf.run span of %s (%d spans of it); surf run's output:\n%s", service, len(spans), out)
				}
				time.Sleep(200 * time.Millisecond)
			}
			checkCollectedRun(t, spans)
			if b, err := os.ReadFile(col.out); err != nil || bytes.Contains(b, []byte("harbour")) {
				t.Errorf("the collected spans hold the typed text (or cannot be read: %v)", err)
			}
		})
	}
}

// checkCollectedRun checks the spans of one surf run read back from the
// collector: one trace, rooted at surf.run, with the run's steps, model
// calls (their token usage as the model reported it) and actions.
func checkCollectedRun(t *testing.T, spans []otlpSpan) {
	t.Helper()
	byID := map[string]otlpSpan{}
	counts := map[string]int{}
	for _, s := range spans {
		byID[s.SpanID] = s
		counts[s.Name]++
	}
	for name, want := range map[string]int{
		"surf.run": 1, "surf.step": 3, "chat test-model": 3,
		"execute_tool visit_url": 1, "execute_tool input_text": 1, "execute_tool click": 1, "execute_tool stop_action": 1,
	} {
		if counts[name] != want {
			t.Errorf("%d %q spans; want %d (all: %v)", counts[name], name, want, counts)
		}
	}
	var inputTokens []string
	for _, s := range spans {
		if s.TraceID != spans[0].TraceID {
			t.Errorf("span %s is in trace %s, not %s", s.Name, s.TraceID, spans[0].TraceID)
		}
		parent, hasParent := byID[s.ParentSpanID]
		switch {
		case s.Name == "surf.run":
			if s.ParentSpanID != "" {
				t.Errorf("surf.run has a parent, %s", s.ParentSpanID)
			}
		case !hasParent:
			t.Errorf("span %s's parent %q is not in the run's trace", s.Name, s.ParentSpanID)
		case s.Name == "surf.step" && parent.Name != "surf.run",
			strings.HasPrefix(s.Name, "chat ") && parent.Name != "surf.step":
			t.Errorf("span %s is a child of %s", s.Name, parent.Name)
		}
		if strings.HasPrefix(s.Name, "chat ") {
			inputTokens = append(inputTokens, s.attr("gen_ai.usage.input_tokens"))
			if m := s.attr("gen_ai.request.model"); m != "test-model" {
				t.Errorf("span %s: gen_ai.request.model = %q", s.Name, m)
			}
		}
	}
	slices.Sort(inputTokens)
	if want := []string{"1101", "1102", "1103"}; !slices.Equal(inputTokens, want) {
		t.Errorf("the model calls' gen_ai.usage.input_tokens are %q; want %q", inputTokens, want)
	}
}

// otelcolBinary is the collector the test exports to: $SURF_OTELCOL, or
// bin/otelcol-surf (make setup builds it). Without it the test is
// skipped, except under CI=true where that is a failure.
func otelcolBinary(t *testing.T) string {
	t.Helper()
	path := os.Getenv("SURF_OTELCOL")
	if path == "" {
		var err error
		if path, err = filepath.Abs(filepath.Join("..", "..", "bin", "otelcol-surf")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the OpenTelemetry Collector is missing (make setup builds bin/otelcol-surf): %v", err)
		}
		t.Skipf("the OpenTelemetry Collector is missing: make setup (or make bin/otelcol-surf) builds it: %v", err)
	}
	return path
}

// collector is a running OpenTelemetry Collector with an OTLP receiver
// on loopback and a file exporter writing OTLP JSON lines to out.
type collector struct {
	grpcAddr, httpAddr string
	out                string
	log                *lockedBuffer
}

const collectorConfig = `receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %q
      http:
        endpoint: %q
exporters:
  file:
    path: %q
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`

// startCollector starts bin on two free loopback ports and waits until
// it is ready. A port taken between picking and binding (another test's)
// is picked again.
func startCollector(t *testing.T, bin string) *collector {
	t.Helper()
	dir := t.TempDir()
	for attempt := 1; ; attempt++ {
		c := &collector{grpcAddr: freeAddr(t), httpAddr: freeAddr(t), out: filepath.Join(dir, "spans.jsonl"), log: &lockedBuffer{}}
		config := filepath.Join(dir, "collector.yaml")
		if err := os.WriteFile(config, fmt.Appendf(nil, collectorConfig, c.grpcAddr, c.httpAddr, c.out), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--config", config)
		cmd.Stdout, cmd.Stderr = c.log, c.log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		switch awaitReady(c.log, exited, 2*time.Minute) {
		case "exited":
			if attempt < 3 && strings.Contains(c.log.String(), "address already in use") {
				continue
			}
			t.Fatalf("the collector exited before it was ready:\n%s", c.log.String())
		case "timeout":
			cmd.Process.Kill()
			<-exited
			t.Fatalf("the collector was not ready in 2 minutes:\n%s", c.log.String())
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(time.Minute):
				cmd.Process.Kill()
				<-exited
			}
			if t.Failed() {
				t.Logf("the collector's log:\n%s", c.log.String())
			}
		})
		return c
	}
}

// awaitReady waits for the collector's log to say it is ready: "ready",
// or "exited" if it exited first, or "timeout" after limit.
func awaitReady(log *lockedBuffer, exited <-chan struct{}, limit time.Duration) string {
	deadline := time.After(limit)
	for !strings.Contains(log.String(), "Everything is ready") {
		select {
		case <-exited:
			return "exited"
		case <-deadline:
			return "timeout"
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "ready"
}

// freeAddr is a loopback address with a port free when it was picked.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// otlpSpan is a span as the collector's file exporter writes it (OTLP
// JSON: ids in hex, 64-bit integers as strings).
type otlpSpan struct {
	TraceID      string `json:"traceId"`
	SpanID       string `json:"spanId"`
	ParentSpanID string `json:"parentSpanId"`
	Name         string `json:"name"`
	Attributes   []otlpAttr
}

type otlpAttr struct {
	Key   string `json:"key"`
	Value struct {
		StringValue *string      `json:"stringValue"`
		IntValue    *json.Number `json:"intValue"`
	} `json:"value"`
}

func (a otlpAttr) String() string {
	switch {
	case a.Value.StringValue != nil:
		return *a.Value.StringValue
	case a.Value.IntValue != nil:
		return a.Value.IntValue.String()
	}
	return ""
}

// attr is the value of the attribute key as text, "" when absent.
func (s otlpSpan) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.String()
		}
	}
	return ""
}

// spans reads the spans the collector has written so far whose
// resource's service.name is service. A last line the exporter has not
// finished writing is left for the next read.
func (c *collector) spans(service string) ([]otlpSpan, error) {
	b, err := os.ReadFile(c.out)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var spans []otlpSpan
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var req struct {
			ResourceSpans []struct {
				Resource struct {
					Attributes []otlpAttr `json:"attributes"`
				} `json:"resource"`
				ScopeSpans []struct {
					Spans []otlpSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return nil, fmt.Errorf("a line of %s that is not OTLP JSON: %v", c.out, err)
		}
		for _, rs := range req.ResourceSpans {
			if !slices.ContainsFunc(rs.Resource.Attributes, func(a otlpAttr) bool { return a.Key == "service.name" && a.String() == service }) {
				continue
			}
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans, sc.Err()
}

// runBounded runs cmd and returns its combined output; it fails the test
// if cmd fails or runs longer than limit.
func runBounded(t *testing.T, cmd *exec.Cmd, limit time.Duration) string {
	t.Helper()
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
		}
	case <-time.After(limit):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s ran longer than %v:\n%s", strings.Join(cmd.Args, " "), limit, out.String())
	}
	return out.String()
}
