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
const recordUsage = `Usage: surf record URL... --har FILE [--serve DIR] [--json] [flags]

Visits each URL in turn in a fresh sandboxed session, waiting for each page
to settle, and writes everything the session loaded from the network to FILE:
an HTTP Archive (HAR) with the response bodies embedded, so it replays on its
own. The policy applies while recording like any other time.

Replay a recording with --replay-har FILE on visit, shell and the other
browser commands: every request is answered from the file and nothing goes
to the network. The policy still applies, and a request the recording does
not hold is refused and shown as "blocked: not in recording: URL".

A recording leaves out surf's own block pages, requests that got no
response, the session proxy's credentials and the policy's secrets; a
response larger than 16 MiB, and everything after 256 MiB, are left out too
(the file's log.comment then says so).

Flags:
  --har FILE          where to write the recording (required)
  --serve DIR         serve the files in DIR on a loopback port and record
                      from there; URLs may then be paths ("/", "/about.html"),
                      and the policy allows that origin only
  --port N            the port --serve listens on (default: any free port)
  --json              print what was recorded as JSON
` + browserFlagsHelp + `

Exit status: 0 when every URL loaded and the recording was written, 1
otherwise (what was recorded up to a failure is still written).

Examples:
  surf record https://example.com/ https://example.com/about --har example.har
  surf record --serve testdata/replay/shop/site / /cart.html --har testdata/replay/shop/site.har
  surf visit http://127.0.0.1:8080/ --replay-har site.har --allow 127.0.0.1`

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
	b.surf.Close()
	closeErr := b.sess.Close()
	b.sb.Close()
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
		res, err := b.surf.VisitURL(ctx, u)
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
