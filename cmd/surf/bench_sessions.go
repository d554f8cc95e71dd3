package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"

	"github.com/surfkit/surf/cmd/surf/internal/bench"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// benchSessionsUsage is the usage of "surf bench sessions".
var benchSessionsUsage = helpText("bench-sessions")

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
	site := httptest.NewServer(bench.SiteHandler())
	defer site.Close()

	if !*asJSON {
		bench.WriteSessionsHeader(cli.Stdout)
	}
	var all []bench.SessionsResult
	for _, n := range ns {
		res, err := bench.Sessions(ctx, bench.SessionsConfig{Surf: exe, Site: site.URL, Sessions: n, Cycles: *cycles, MaxActive: *maxActive, Image: *image})
		if err != nil {
			return fmt.Errorf("%d sessions: %w", n, err)
		}
		all = append(all, *res)
		if *asJSON {
			if err := json.NewEncoder(cli.Stdout).Encode(res); err != nil {
				return err
			}
			continue
		}
		bench.WriteSessions(cli.Stdout, res)
	}
	if per, ok := bench.PerSession(all); ok && !*asJSON {
		fmt.Fprintf(cli.Stdout, "memory per added session (n=%d to n=%d): %.1f MB RSS, %.1f MB PSS\n", per.From, per.To, per.RSS, per.PSS)
	}
	return nil
}
