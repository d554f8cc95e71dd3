package board

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/surfkit/surf/telemetry"
)

// TestTaskTraceFollowsTheTask adds tasks under a span of one tracer
// provider (the creator's process) and runs them on a board handle with
// another (the worker's): the worker's task span and the run's context
// are in the creator's trace, under the span that added the task; the
// worker's metrics count the runs by how they ended.
func TestTaskTraceFollowsTheTask(t *testing.T) {
	dir := t.TempDir()
	ctx := testCtx(t)
	addExp, workExp := tracetest.NewInMemoryExporter(), tracetest.NewInMemoryExporter()
	addTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(addExp))
	workTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(workExp))
	open := func(tp trace.TracerProvider) *Board {
		octx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		b, err := Open(octx, Config{Dir: dir, Lease: time.Minute, TracerProvider: tp})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	adder, workerSide := open(addTP), open(workTP)

	cctx, caller := addTP.Tracer("test").Start(ctx, "orchestrator")
	recs, err := adder.Add(cctx, Task{ID: "ok", Instruction: "works"}, Task{ID: "bad", Instruction: "fails"})
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	want := caller.SpanContext().TraceID()
	if recs[0].Traceparent == "" || !strings.Contains(recs[0].Traceparent, want.String()) {
		t.Fatalf("the record's traceparent %q is not in the caller's trace %s", recs[0].Traceparent, want)
	}
	var addSpan tracetest.SpanStub
	for _, s := range addExp.GetSpans() {
		if s.Name == "board.add" {
			addSpan = s
		}
	}
	if addSpan.SpanContext.TraceID() != want {
		t.Fatalf("no board.add span in the caller's trace: %v", addExp.GetSpans())
	}

	m := telemetry.NewMetrics()
	runTraces := make(chan trace.TraceID, 16)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() {
		done <- workerSide.Work(wctx, WorkConfig{Workers: 2, Metrics: m, Run: func(ctx context.Context, c *Claim) (*Result, error) {
			select {
			case runTraces <- trace.SpanContextFromContext(ctx).TraceID():
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if c.Task.ID == "bad" {
				return nil, errors.New("it failed")
			}
			return &Result{Answer: "yes", EndReason: "answered"}, nil
		}})
	}()
	_, err = workerSide.Wait(ctx, "ok", "bad")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got := <-runTraces; got != want {
			t.Errorf("a run's context is in trace %s; want the adder's %s", got, want)
		}
	}
	var tasks int
	for _, s := range workExp.GetSpans() {
		if s.Name != "board.task" {
			continue
		}
		tasks++
		if s.SpanContext.TraceID() != want || s.Parent.SpanID() != addSpan.SpanContext.SpanID() {
			t.Errorf("the worker's task span is in trace %s under %s; want %s under board.add %s",
				s.SpanContext.TraceID(), s.Parent.SpanID(), want, addSpan.SpanContext.SpanID())
		}
	}
	if tasks != 2 {
		t.Errorf("%d board.task spans on the worker; want 2", tasks)
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{`surf_board_tasks_total{state="done"} 1`, `surf_board_tasks_total{state="failed"} 1`, `surf_board_run_duration_seconds_count 2`, `surf_board_claim_to_start_seconds_count 2`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the worker's metrics lack %s", want)
		}
	}
}
