package websurfer

import (
	"context"
	"errors"
	"time"

	"github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/telemetry"
	"github.com/surfkit/surf/tools"
)

// Span attributes of surf's own (besides the GenAI conventions' gen_ai.*).
// None carries a URL, typed text or a model's words: a span says what
// ran, how it ended and what it cost.
const (
	attrTool      = attribute.Key("gen_ai.tool.name")
	attrOutcome   = attribute.Key("surf.outcome")
	attrStep      = attribute.Key("surf.step")
	attrEndReason = attribute.Key("surf.end_reason")
	attrSteps     = attribute.Key("surf.steps")
)

func (s *Surfer) tracer() trace.Tracer { return telemetry.Tracer(s.cfg.TracerProvider) }

// outcomeOf classifies a tool call's result for a metric's label and a
// span's attribute.
func outcomeOf(res *tools.Result, err error) string {
	switch {
	case errors.Is(err, policy.ErrDenied):
		return telemetry.Denied
	case err != nil && tools.IsToolError(err):
		return telemetry.ToolError
	case err != nil:
		return telemetry.Error
	case res != nil && res.IsError:
		return telemetry.ToolError
	}
	return telemetry.OK
}

// observeTool is the tool registry's Observe hook: a span and a count per
// action, whoever calls it (the agent loop, an MCP client).
func (s *Surfer) observeTool(ctx context.Context, tool string) (context.Context, func(*tools.Result, error)) {
	t0 := time.Now()
	ctx, span := s.tracer().Start(ctx, "execute_tool "+telemetry.Tool(tool), trace.WithAttributes(
		telemetry.GenAIOperation.String("execute_tool"), attrTool.String(telemetry.Tool(tool))))
	return ctx, func(res *tools.Result, err error) {
		o := outcomeOf(res, err)
		span.SetAttributes(attrOutcome.String(o))
		if o == telemetry.Error {
			// the kind of failure, never its text: it may quote a URL
			span.SetStatus(codes.Error, o)
		}
		span.End()
		s.cfg.Metrics.Action(tool, o, time.Since(t0))
	}
}

// chat is one model request with its span (the GenAI conventions' chat
// span) and its metrics.
func (s *Surfer) chat(ctx context.Context, m Model, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	t0 := time.Now()
	name := "chat"
	attrs := []attribute.KeyValue{telemetry.GenAIOperation.String("chat"), telemetry.GenAISystem.String("openai")}
	if req.Model != "" {
		name += " " + req.Model
		attrs = append(attrs, telemetry.GenAIRequestModel.String(req.Model))
	}
	ctx, span := s.tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	resp, err := m.CreateChatCompletion(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, "the model request failed")
		s.cfg.Metrics.Model(telemetry.Error, 0, 0, time.Since(t0))
		return resp, err
	}
	span.SetAttributes(telemetry.GenAIInputTokens.Int(resp.Usage.PromptTokens), telemetry.GenAIOutputTokens.Int(resp.Usage.CompletionTokens))
	if resp.Model != "" {
		span.SetAttributes(telemetry.GenAIRespModel.String(resp.Model))
	}
	s.cfg.Metrics.Model(telemetry.OK, resp.Usage.PromptTokens, resp.Usage.CompletionTokens, time.Since(t0))
	return resp, nil
}

// endSpan ends a run's span with how the run ended.
func endRunSpan(span trace.Span, reason journal.EndReason, steps int, err error) {
	span.SetAttributes(attrEndReason.String(string(reason)), attrSteps.Int(steps))
	if err != nil || reason == journal.EndError {
		span.SetStatus(codes.Error, string(reason))
	}
	span.End()
}

// countDenials counts every denial of sess in Config.Metrics, by gate
// and rule: the action gate's (recorded by decide and the secret-input
// check) and the network gate's (the sandbox's request gate, its egress
// proxy, a replay's missing answers), which the surfer learns of only
// through the session. A session replaced after a crash stops being
// counted; Close stops the count. The caller holds s.mu (or is New).
func (s *Surfer) countDenials(sess *sandbox.Session) {
	if s.stopCount != nil {
		s.stopCount()
		s.stopCount = nil
	}
	m := s.cfg.Metrics
	if m == nil {
		return
	}
	s.stopCount = sess.OnDenial(func(d sandbox.Denial) {
		gate := telemetry.GateRequest
		if d.Layer == sandbox.LayerAction {
			gate = telemetry.GateAction
		}
		m.Denial(gate, d.Decision.Rule)
	})
}
