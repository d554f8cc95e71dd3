package telemetry

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of surf's spans.
const Scope = "github.com/surfkit/surf"

// TracingConfig says where Tracing reads its settings and writes the
// console exporter's spans.
type TracingConfig struct {
	// Service is the service name when OTEL_SERVICE_NAME is unset; empty
	// means "surf".
	Service string
	// Getenv reads the environment (os.Getenv in a program); nil reads
	// nothing, which leaves tracing off.
	Getenv func(string) string
	// Console receives the spans of OTEL_TRACES_EXPORTER=console, one JSON
	// object each; nil means io.Discard. (surf's CLI passes stderr, so
	// that stdout keeps a command's own output.)
	Console io.Writer
}

// Tracing sets up tracing the standard way, from the OTEL_* variables:
// OTEL_TRACES_EXPORTER (otlp, console or none), OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the default, or grpc) and
// OTEL_SERVICE_NAME. The OTLP exporters read their other settings
// (headers, timeout, compression, per-signal endpoints) from the process's
// environment themselves. Tracing is off (a no-op provider) when neither
// OTEL_TRACES_EXPORTER nor an OTLP endpoint is set, when the exporter is
// none, or with OTEL_SDK_DISABLED=true. An exporter surf does not know is
// an error. shutdown flushes and stops the exporter; call it before the
// program exits.
func Tracing(ctx context.Context, cfg TracingConfig) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	endpoint := getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if exporter == "none" || (exporter == "" && endpoint == "") || strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return noop.NewTracerProvider(), off, nil
	}
	var exp sdktrace.SpanExporter
	switch exporter {
	case "console":
		w := cfg.Console
		if w == nil {
			w = io.Discard
		}
		exp, err = stdouttrace.New(stdouttrace.WithWriter(w))
	case "", "otlp":
		// The exporters read the other OTEL_EXPORTER_OTLP_* settings
		// (endpoint, headers, timeout, compression) themselves.
		proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
		if proto == "" {
			proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
		}
		switch proto {
		case "", "http/protobuf":
			exp, err = otlptracehttp.New(ctx)
		case "grpc":
			exp, err = otlptracegrpc.New(ctx)
		default:
			err = fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL %q is not supported (want http/protobuf or grpc)", proto)
		}
	default:
		err = fmt.Errorf("unknown exporter (want otlp, console or none)")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tracing (OTEL_TRACES_EXPORTER=%q): %w", exporter, err)
	}
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = cfg.Service
	}
	if name == "" {
		name = "surf"
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
