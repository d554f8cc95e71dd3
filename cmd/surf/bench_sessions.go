package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// benchSessions is surf bench sessions.
func benchSessions(ctx context.Context, cli *CLI, c *command, args []string) error {
	fs := newFlags(c)
	list := fs.String("n", "8", "")
	cycles := fs.Int("cycles", 5, "")
	maxActive := fs.Int("max-active", 0, "")
	image := fs.String("image", "som", "")
	asJSON := fs.Bool("json", false, "")
	if err := parseFlags(c, fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef(c, "bench sessions takes no arguments, got %q", fs.Arg(0))
	}
	ns, err := bench.ParseCounts(*list, "session count", 1024)
	if err != nil {
		return usagef(c, "--n: %v", err)
	}
	if *cycles < 1 || *cycles > 1000 {
		return usagef(c, "--cycles must be 1 to 1000")
	}
	if *maxActive < 0 {
		return usagef(c, "--max-active cannot be negative")
	}
	if _, err := mcpserver.ParseImageMode(*image); err != nil {
		return usagef(c, "--image: %v", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding surf's executable: %w", err)
	}
	if !*asJSON {
		bench.WriteSessionsHeader(cli.Stdout)
	}
	cfg := bench.SessionsConfig{Surf: exe, Cycles: *cycles, MaxActive: *maxActive, Image: *image}
	all, err := bench.SessionsSeries(ctx, cfg, ns, func(res *bench.SessionsResult) error {
		if *asJSON {
			return json.NewEncoder(cli.Stdout).Encode(res)
		}
		bench.WriteSessions(cli.Stdout, res)
		return nil
	})
	if err != nil {
		return err
	}
	if per, ok := bench.PerSession(all); ok && !*asJSON {
		bench.WritePerSession(cli.Stdout, per)
	}
	return nil
}
