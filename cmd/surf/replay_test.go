package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// $REPLAY is the project's replay scenarios (testdata/replay), and
// "report-check FILE STEP..." opens a report in headless Chromium and
// checks that every image loaded and that exactly the given steps are
// marked denied.
func init() {
	scriptCmds["report-check"] = cmdReportCheck
	scriptSetups = append(scriptSetups, func(env *testscript.Env) error {
		dir, err := filepath.Abs(filepath.Join("..", "..", "testdata", "replay"))
		if err != nil {
			return err
		}
		env.Setenv("REPLAY", dir)
		return nil
	})
}

func cmdReportCheck(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! report-check")
	}
	if len(args) < 1 {
		ts.Fatalf("usage: report-check FILE [DENIED-STEP...]")
	}
	html, err := os.ReadFile(ts.MkAbs(args[0]))
	ts.Check(err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(html)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, err := policy.ParseHostRule(strings.TrimPrefix(srv.URL, "http://"))
	ts.Check(err)
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{host}})
	ts.Check(err)
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(ts.Getenv), Policy: pol})
	ts.Check(err)
	defer sb.Close()
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
	ts.Check(err)
	defer sess.Close()
	page, err := sess.NewPage(ctx)
	ts.Check(err)
	var requests []string
	page.OnRequest(func(r playwright.Request) { requests = append(requests, r.URL()) })
	if _, err := page.Goto(srv.URL+"/run.html", playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		ts.Fatalf("opening the report: %v", err)
	}
	if title, _ := page.Title(); !strings.HasPrefix(title, "surf run") {
		ts.Fatalf("the page opened is %q, not the report", title)
	}
	v, err := page.Evaluate(`() => [...document.images].map(i => (i.complete && i.naturalWidth > 0) ? "" : (i.alt || i.src.slice(0, 40)))`)
	ts.Check(err)
	imgs := v.([]any)
	if len(imgs) == 0 {
		ts.Fatalf("the report has no images")
	}
	for _, s := range imgs {
		if s != "" {
			ts.Fatalf("an image of the report did not load: %v", s)
		}
	}
	v, err = page.Evaluate(`() => [...document.querySelectorAll("section.step.denied")].map(s => s.id).join(" ")`)
	ts.Check(err)
	var want []string
	for _, n := range args[1:] {
		want = append(want, "step-"+n)
	}
	if got := v.(string); got != strings.Join(want, " ") {
		ts.Fatalf("denied steps marked: %q, want %q", got, strings.Join(want, " "))
	}
	for _, u := range requests[1:] {
		if !strings.HasPrefix(u, "data:") {
			ts.Fatalf("the report is not self-contained: it loaded %s", u)
		}
	}
	fmt.Fprintf(ts.Stdout(), "report: %d images loaded, denied: %s\n", len(imgs), v)
}
