package main

import (
	"context"
	"fmt"

	"github.com/surfkit/surf/sandbox"
)

func init() {
	c := &command{
		name:    "visit",
		summary: "open a URL in a fresh sandboxed session and print what the model would see",
		usage: `Usage: surf visit URL

Opens URL in a fresh isolated session, waits for it to load, and prints its
title and final URL.

Example:
  surf visit https://example.com/`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() != 1 {
			return usagef(c, "visit takes one URL")
		}
		sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(cli.Getenv), Logger: cli.Logger})
		if err != nil {
			return err
		}
		defer sb.Close()
		sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
		if err != nil {
			return err
		}
		page, err := sess.Context().NewPage()
		if err != nil {
			return err
		}
		if _, err := page.Goto(fs.Arg(0)); err != nil {
			return fmt.Errorf("visiting %s: %w", fs.Arg(0), err)
		}
		title, err := page.Title()
		if err != nil {
			return err
		}
		fmt.Fprintf(cli.Stdout, "title: %s\nurl:   %s\n", title, page.URL())
		return nil
	}
	register(c)
}
