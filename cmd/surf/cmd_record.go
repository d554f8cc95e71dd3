package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surfkit/surf/cmd/surf/internal/recording"
)

// recordUsage is the usage text of surf record.
var recordUsage = helpText("record")

func init() {
	c := &command{
		name:    "record",
		summary: "record what a browser loads from a list of URLs into a HAR file, for offline replay",
		usage:   recordUsage,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error { return runRecord(ctx, cli, c, args) }
	register(c)
}

// recordFlags are surf record's flags and URLs.
type recordFlags struct {
	har, serve string
	port       int
	json       bool
	bf         *browserFlags
	args       []string
}

func parseRecordFlags(c *command, args []string) (*recordFlags, error) {
	fs := newFlags(c)
	f := &recordFlags{}
	fs.StringVar(&f.har, "har", "", "")
	fs.StringVar(&f.serve, "serve", "", "")
	fs.IntVar(&f.port, "port", 0, "")
	fs.BoolVar(&f.json, "json", false, "")
	f.bf = addBrowserFlags(fs)
	if err := parseFlags(c, fs, args); err != nil {
		return nil, err
	}
	switch {
	case fs.NArg() == 0:
		return nil, usagef(c, "record takes at least one URL")
	case f.har == "":
		return nil, usagef(c, "record needs --har FILE, the recording to write")
	case f.bf.recordHAR != "" || f.bf.replayHAR != "":
		return nil, usagef(c, "record writes the file named by --har; --record-har and --replay-har do not apply")
	case f.port != 0 && f.serve == "":
		return nil, usagef(c, "--port needs --serve")
	case f.port < 0 || f.port > 65535:
		return nil, usagef(c, "--port %d is not a port", f.port)
	}
	f.args = fs.Args()
	return f, nil
}

// runRecord is surf record.
func runRecord(ctx context.Context, cli *CLI, c *command, args []string) error {
	f, err := parseRecordFlags(c, args)
	if err != nil {
		return err
	}
	dst, err := filepath.Abs(f.har)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(filepath.Dir(dst)); err != nil || !fi.IsDir() {
		return withHint(fmt.Errorf("--har %s: directory %s does not exist", f.har, filepath.Dir(dst)), "create it first")
	}
	var o openOptions
	origin := ""
	if f.serve != "" {
		srv, err := recording.Serve(f.serve, f.port)
		if errors.Is(err, recording.ErrNotDir) {
			return withHint(err, "give the directory holding the site's files")
		}
		if err != nil {
			return err
		}
		defer srv.Close()
		origin = "http://" + srv.Addr
		if o.base, err = originPolicy(srv.Addr); err != nil {
			return err
		}
	}
	var urls []string
	for _, u := range f.args {
		if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
			if origin == "" {
				return usagef(c, "%s is a path: record a served directory with --serve DIR, or give a full URL", u)
			}
			u = origin + u
		}
		urls = append(urls, u)
	}
	f.bf.recordHAR = dst
	b, err := f.bf.open(ctx, cli, o)
	if err != nil {
		return err
	}
	pages, visitErr := f.visit(ctx, cli, b, urls)
	// Closing the session writes the recording.
	closeErr := b.Browser.Close()
	if err := errors.Join(visitErr, closeErr); err != nil {
		if closeErr == nil {
			return fmt.Errorf("%w (what was recorded until then is in %s)", err, f.har)
		}
		return err
	}
	return f.printRecording(cli, dst, pages)
}

// visit visits urls in turn, printing each, until one fails.
func (f *recordFlags) visit(ctx context.Context, cli *CLI, b *browser, urls []string) ([]recording.Page, error) {
	var pages []recording.Page
	for _, u := range urls {
		if err := b.checkURL(u); err != nil {
			return pages, err
		}
		res, err := b.Surfer().VisitURL(ctx, u)
		if err != nil {
			if ctx.Err() != nil {
				return pages, ctx.Err()
			}
			return pages, toolError(err)
		}
		v := recording.PageOf(u, res.Observation)
		pages = append(pages, v)
		if !f.json {
			fmt.Fprintf(cli.Stdout, "recorded %s %q\n", v.URL, v.Title)
			for _, bl := range v.Blocked {
				fmt.Fprintf(cli.Stdout, "  blocked: %s\n", bl)
			}
		}
	}
	return pages, nil
}

// printRecording prints what the recording at dst holds.
func (f *recordFlags) printRecording(cli *CLI, dst string, pages []recording.Page) error {
	sum, err := recording.Summarize(dst, pages)
	if err != nil {
		return err
	}
	if f.json {
		enc := json.NewEncoder(cli.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(cli.Stdout, "wrote %s: %d responses from %s (%s)\n", f.har, sum.Entries, strings.Join(sum.Origins, ", "), recording.Size(sum.Size))
	if sum.Comment != "" {
		fmt.Fprintf(cli.Stdout, "note: %s\n", sum.Comment)
	}
	return nil
}
