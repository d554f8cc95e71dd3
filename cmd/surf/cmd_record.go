package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/surfkit/surf/sandbox"
)

func init() {
	c := &command{
		name:    "record",
		summary: "record what a browser loads from a list of URLs into a HAR file, for offline replay",
		usage: `Usage: surf record URL... --har FILE [--serve DIR] [--json] [flags]

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
  surf visit http://127.0.0.1:8080/ --replay-har site.har --allow 127.0.0.1`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		har := fs.String("har", "", "")
		serve := fs.String("serve", "", "")
		port := fs.Int("port", 0, "")
		asJSON := fs.Bool("json", false, "")
		bf := addBrowserFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		switch {
		case fs.NArg() == 0:
			return usagef(c, "record takes at least one URL")
		case *har == "":
			return usagef(c, "record needs --har FILE, the recording to write")
		case bf.recordHAR != "" || bf.replayHAR != "":
			return usagef(c, "record writes the file named by --har; --record-har and --replay-har do not apply")
		case *port != 0 && *serve == "":
			return usagef(c, "--port needs --serve")
		case *port < 0 || *port > 65535:
			return usagef(c, "--port %d is not a port", *port)
		}
		dst, err := filepath.Abs(*har)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(filepath.Dir(dst)); err != nil || !fi.IsDir() {
			return withHint(fmt.Errorf("--har %s: directory %s does not exist", *har, filepath.Dir(dst)), "create it first")
		}
		var o openOptions
		origin := ""
		if *serve != "" {
			srv, err := serveHARSite(*serve, *port)
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
		for _, u := range fs.Args() {
			if strings.HasPrefix(u, "/") && !strings.HasPrefix(u, "//") {
				if origin == "" {
					return usagef(c, "%s is a path: record a served directory with --serve DIR, or give a full URL", u)
				}
				u = origin + u
			}
			urls = append(urls, u)
		}

		bf.recordHAR = dst
		b, err := bf.open(ctx, cli, o)
		if err != nil {
			return err
		}
		type visited struct {
			URL     string   `json:"url"`
			Title   string   `json:"title"`
			Blocked []string `json:"blocked,omitempty"`
		}
		var pages []visited
		var visitErr error
		for _, u := range urls {
			if visitErr = b.checkURL(u); visitErr != nil {
				break
			}
			res, err := b.surf.VisitURL(ctx, u)
			if err != nil {
				visitErr = toolError(err)
				if ctx.Err() != nil {
					visitErr = ctx.Err()
				}
				break
			}
			v := visited{URL: u}
			if obs := res.Observation; obs != nil {
				v.URL, v.Title = obs.URL, obs.Title
				v.Blocked = append(v.Blocked, obs.Blocked.Navigations...)
				if n := obs.Blocked.Requests; n > 0 {
					v.Blocked = append(v.Blocked, fmt.Sprintf("%d subresource requests (hosts %s)", n, strings.Join(obs.Blocked.Hosts, ", ")))
				}
			}
			pages = append(pages, v)
			if !*asJSON {
				fmt.Fprintf(cli.Stdout, "recorded %s %q\n", v.URL, v.Title)
				for _, bl := range v.Blocked {
					fmt.Fprintf(cli.Stdout, "  blocked: %s\n", bl)
				}
			}
		}
		// Closing the session writes the recording.
		b.surf.Close()
		closeErr := b.sess.Close()
		b.sb.Close()
		if err := errors.Join(visitErr, closeErr); err != nil {
			if closeErr == nil {
				return fmt.Errorf("%w (what was recorded until then is in %s)", err, *har)
			}
			return err
		}
		info, err := sandbox.InspectHAR(dst)
		if err != nil {
			return err
		}
		if *asJSON {
			enc := json.NewEncoder(cli.Stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(struct {
				HAR     string    `json:"har"`
				Pages   []visited `json:"pages"`
				Entries int       `json:"entries"`
				Origins []string  `json:"origins"`
				Comment string    `json:"comment,omitempty"`
			}{dst, pages, info.Entries, info.Origins, info.Comment})
		}
		size := int64(0)
		if fi, err := os.Stat(dst); err == nil {
			size = fi.Size()
		}
		fmt.Fprintf(cli.Stdout, "wrote %s: %d responses from %s (%s)\n", *har, info.Entries, strings.Join(info.Origins, ", "), harSize(size))
		if info.Comment != "" {
			fmt.Fprintf(cli.Stdout, "note: %s\n", info.Comment)
		}
		return nil
	}
	register(c)
}

// harSiteServer is a directory served on loopback for recording.
type harSiteServer struct {
	Addr string // host:port
	srv  *http.Server
}

func (s *harSiteServer) Close() error { return s.srv.Close() }

// serveHARSite serves the files in dir on 127.0.0.1:port (0: any free port).
func serveHARSite(dir string, port int) (*harSiteServer, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil, withHint(fmt.Errorf("--serve %s is not a directory", dir), "give the directory holding the site's files")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("serving %s: %w", dir, err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return &harSiteServer{Addr: ln.Addr().String(), srv: srv}, nil
}

// harSize formats a size for people: 512 B, 3.4 KiB, 12.0 MiB.
func harSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}
