package mcpserver

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/surfkit/surf/telemetry"
)

// observeCall starts a tool call's span, a child of the trace context the
// client put in the request's _meta (traceparent, tracestate) when it sent
// one; done ends it and counts the call by its outcome.
func (s *Server) observeCall(ctx context.Context, req *mcp.CallToolRequest, name string) (context.Context, func(*mcp.CallToolResult)) {
	t0 := time.Now()
	if req != nil && req.Params != nil {
		meta := req.Params.GetMeta()
		parent, _ := meta["traceparent"].(string)
		state, _ := meta["tracestate"].(string)
		ctx = telemetry.Extract(ctx, parent, state)
	}
	tool := telemetry.Tool(name)
	ctx, span := telemetry.Tracer(s.cfg.TracerProvider).Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("mcp.method.name", "tools/call"), attribute.String("gen_ai.tool.name", tool)))
	return ctx, func(res *mcp.CallToolResult) {
		outcome := telemetry.OK
		if res == nil || res.IsError {
			outcome = telemetry.ToolError
		}
		span.SetAttributes(attribute.String("surf.outcome", outcome))
		if res == nil {
			span.SetStatus(codes.Error, "no result")
		}
		span.End()
		s.cfg.Metrics.Call(name, outcome, time.Since(t0))
	}
}
