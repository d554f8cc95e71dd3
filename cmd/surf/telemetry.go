package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/surfkit/surf/telemetry"
)

// startTracing sets the command's tracing up from the OTEL_* variables
// (the console exporter writes to stderr, so stdout keeps the command's
// output); flush sends the spans still buffered.
func (cli *CLI) startTracing(ctx context.Context) (flush func(), err error) {
	tp, shutdown, err := telemetry.Tracing(ctx, telemetry.TracingConfig{Service: "surf", Getenv: cli.Getenv, Console: cli.Stderr})
	if err != nil {
		return nil, withHint(err, "set OTEL_TRACES_EXPORTER to otlp, console or none (unset: tracing off)")
	}
	cli.Tracer = tp
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			cli.Logger.Warn("tracing: sending the last spans", "err", err)
		}
	}, nil
}

// serveMetrics serves a new set of metrics on addr until ctx ends and
// says where on stderr; with addr empty there are none (nil).
func (cli *CLI) serveMetrics(ctx context.Context, addr string) (*telemetry.Metrics, error) {
	if addr == "" {
		return nil, nil
	}
	m := telemetry.NewMetrics()
	m.WatchBrowserMemory(os.Getpid()) // surf's children: the browser, Playwright's driver
	a, err := m.Serve(ctx, addr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(cli.Stderr, "surf: metrics at http://%s/metrics\n", a)
	return m, nil
}
