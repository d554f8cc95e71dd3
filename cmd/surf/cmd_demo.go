package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
)

func init() {
	c := &command{
		name:    "demo",
		summary: "tour the bundled demo site with surf's real tools (no network, no API key)",
		usage:   helpText("demo"),
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		out := fs.String("out", "surf-demo", "")
		bf := addBrowserFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef(c, "demo takes no arguments")
		}
		site, err := demosite.Start()
		if err != nil {
			return err
		}
		defer site.Close()
		base, err := originPolicy(site.Host)
		if err != nil {
			return err
		}
		if bf.downloads == "" {
			bf.downloads = filepath.Join(*out, "downloads")
		}
		b, err := bf.open(ctx, cli, openOptions{base: base})
		if err != nil {
			return err
		}
		defer b.Close()
		jpath := filepath.Join(*out, "journal.jsonl")
		if err := journal.Remove(jpath); err != nil {
			return err
		}
		j, err := journal.Open(jpath, b.pol.Redact)
		if err != nil {
			return err
		}
		tour := &demosite.Tour{Surfer: b.Surfer(), Journal: j, URL: site.URL, Out: cli.Stdout}
		runErr := tour.Run(ctx)
		if err := j.Close(); err != nil && runErr == nil {
			runErr = err
		}
		if runErr != nil {
			return runErr
		}
		names := tour.Tools()
		fmt.Fprintf(cli.Stdout, "\n== demo done: %d steps, %d different tools (%s)\n", tour.Steps(), len(names), strings.Join(names, ", "))
		fmt.Fprintf(cli.Stdout, "answer: %s\njournal: %s\nimages: %s\n", tour.Answer(), j.Path(), filepath.Join(*out, "journal-images"))
		return nil
	}
	register(c)
}

// originPolicy allows exactly one host:port.
func originPolicy(hostport string) (*policy.Policy, error) {
	r, err := policy.ParseHostRule(hostport)
	if err != nil {
		return nil, err
	}
	return policy.New(policy.Config{Allow: []policy.HostRule{r}})
}
