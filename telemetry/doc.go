// Package telemetry holds surf's Prometheus metrics and its OpenTelemetry
// tracing set-up.
//
// Metrics is one process's metrics on a registry of its own (never the
// global default); a nil *Metrics records nothing, so a library takes one
// in its Config and calls it unconditionally. Every label value is drawn
// from a small fixed set (a tool name, an outcome, a rule kind, a task
// state): never a URL, a secret or free text.
//
// Tracing reads the standard OTEL_* environment variables (it is called by
// the CLI, not by libraries) and returns a TracerProvider that libraries
// take in their Config (nil means otel's global provider, a no-op unless
// the program set one). Traceparent and Extract carry a span context
// through a task record or an MCP request's _meta as a W3C traceparent.
package telemetry
