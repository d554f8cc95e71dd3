package telemetry

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of surf's spans.
const Scope = "github.com/surfkit/surf"

// TracingEnv is what Tracing reads of the environment: the standard
// OTEL_* variables.
type TracingEnv func(key string) string

// Tracing sets up tracing the standard way, from getenv (os.Getenv in a
// program): OTEL_TRACES_EXPORTER (otlp, console or none),
// OTEL_EXPORTER_OTLP_ENDPOINT and the other OTLP settings, and
// OTEL_SERVICE_NAME (service when unset). Tracing is off (a no-op
// provider) when neither OTEL_TRACES_EXPORTER nor an OTLP endpoint is
// set, or the exporter is none. shutdown flushes and stops the exporter;
// call it before the program exits.
func Tracing(ctx context.Context, service string, getenv TracingEnv) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	endpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if exporter == "none" || (exporter == "" && endpoint == "") || getenv("OTEL_SDK_DISABLED") == "true" {
		return noop.NewTracerProvider(), off, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing (OTEL_TRACES_EXPORTER=%q): %w", exporter, err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = service
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(name)))
	if err != nil {
		res = resource.NewSchemaless(semconv.ServiceName(name))
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return p, p.Shutdown, nil
}

// Tracer is tp's tracer for surf's spans; a nil tp means otel's global
// provider (a no-op unless the program set one).
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(Scope)
}

var propagator = propagation.TraceContext{}

// Traceparent is the W3C traceparent of ctx's span, or "" when ctx has
// no valid span context.
func Traceparent(ctx context.Context) string {
	c := propagation.MapCarrier{}
	propagator.Inject(ctx, c)
	return c.Get("traceparent")
}

// Extract returns ctx with the remote span context of traceparent (and
// tracestate) as its parent; ctx unchanged when traceparent is empty or
// malformed.
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return propagator.Extract(ctx, c)
}

// GenAI attribute keys of the OpenTelemetry semantic conventions for
// generative AI.
const (
	GenAIOperation    = attribute.Key("gen_ai.operation.name")
	GenAISystem       = attribute.Key("gen_ai.provider.name")
	GenAIRequestModel = attribute.Key("gen_ai.request.model")
	GenAIRespModel    = attribute.Key("gen_ai.response.model")
	GenAIInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	GenAIOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
)
