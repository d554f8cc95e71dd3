package report_test

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/third_party/playwright-go"

	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

var screenshots = flag.String("screenshots", "", "write screenshots of the rendered reports into this directory, to look at")

// openReport renders the journal at path, serves the page from loopback
// and opens it in the shared test browser. It returns the page and the
// URLs of every request the page made.
func openReport(t *testing.T, path string) (playwright.Page, func() []string) {
	t.Helper()
	j, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var html strings.Builder
	if _, err := report.Write(&html, j, report.Options{}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/report.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(html.String()))
	}))
	t.Cleanup(srv.Close)

	sess := browsertest.Session(t, sandbox.SessionConfig{Viewport: sandbox.Viewport{Width: 1280, Height: 900}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	page, err := sess.NewPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests []string
		problems []string
	)
	page.OnRequest(func(r playwright.Request) {
		mu.Lock()
		requests = append(requests, r.URL())
		mu.Unlock()
	})
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() == "error" || m.Type() == "warning" {
			mu.Lock()
			problems = append(problems, m.Text())
			mu.Unlock()
		}
	})
	page.OnPageError(func(err error) {
		mu.Lock()
		problems = append(problems, err.Error())
		mu.Unlock()
	})
	if _, err := page.Goto(srv.URL+"/report.html", playwright.PageGotoOptions{WaitUntil: playwright.WaitUntilStateLoad}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		// A CSP violation (the inline style or script not matching its
		// hash) or a script error shows up here.
		for _, p := range problems {
			t.Errorf("browser console: %s", p)
		}
	})
	return page, func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, u := range requests {
			if !strings.HasPrefix(u, "data:") {
				out = append(out, u)
			}
		}
		return out
	}
}

func eval[T any](t *testing.T, page playwright.Page, js string) T {
	t.Helper()
	v, err := page.Evaluate(js)
	if err != nil {
		t.Fatalf("evaluating %s: %v", js, err)
	}
	out, ok := v.(T)
	if !ok {
		t.Fatalf("evaluating %s: got %T %v", js, v, v)
	}
	return out
}

func shoot(t *testing.T, page playwright.Page, name string, full bool) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	if err := os.MkdirAll(*screenshots, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(*screenshots, name)
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{Path: &p, FullPage: &full}); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", p)
}

// TestInBrowser is the acceptance test: the page of a run with a denial,
// an error, a recovery and a hostile title, opened in Chromium.
func TestInBrowser(t *testing.T) {
	page, requests := openReport(t, writeJournal(t, t.TempDir(), 640, 360))
	shoot(t, page, "report.png", true)

	// Every step's screenshot loaded.
	imgs := eval[[]any](t, page, `() => [...document.querySelectorAll("main img")].map(i => i.complete && i.naturalWidth > 0)`)
	if len(imgs) != 4 {
		t.Errorf("%d screenshots on the page, want 4", len(imgs))
	}
	for i, ok := range imgs {
		if ok != true {
			t.Errorf("screenshot %d did not load", i+1)
		}
	}
	if n := eval[int](t, page, `() => document.querySelectorAll(".missing").length`); n != 0 {
		t.Errorf("%d placeholders, want none", n)
	}

	// The denial is marked: the class, the label, the verdict, and the
	// CSS that makes it stand out is in force.
	denied := eval[[]any](t, page, `() => [...document.querySelectorAll("section.step.denied")].map(s => s.id)`)
	if len(denied) != 1 || denied[0] != "step-2" {
		t.Errorf("denied steps = %v, want [step-2]", denied)
	}
	if got := eval[string](t, page, `() => document.getElementById("step-2").className`); got != "step denied" {
		t.Errorf("the denied step's classes are %q, want \"step denied\" (the refused call is no error)", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("#step-2 .label.denied").textContent`); got != "DENIED" {
		t.Errorf("denied step label = %q", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("#step-2 li.ev-gated.deny .verdict").textContent`); got != "DENIED" {
		t.Errorf("denied verdict = %q", got)
	}
	if got := eval[string](t, page, `() => getComputedStyle(document.querySelector("#step-2")).borderLeftColor`); got != "rgb(180, 35, 24)" {
		t.Errorf("denied step border = %q: the inline style is not in force", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("nav.strip a[href='#step-2']").className`); got != "denied" {
		t.Errorf("the step strip marks step 2 as %q", got)
	}
	for id, class := range map[string]string{"step-3": "error", "step-4": "corrected", "step-5": "asked"} {
		if !eval[bool](t, page, `() => document.getElementById("`+id+`").classList.contains("`+class+`")`) {
			t.Errorf("%s lacks the class %q", id, class)
		}
	}
	if !eval[bool](t, page, `() => document.getElementById("step-3").classList.contains("recovered")`) {
		t.Error("the recovery is not marked")
	}

	// The hostile title is text, and nothing of it ran.
	if got := eval[string](t, page, `() => document.querySelector("#step-2 .page-title").textContent`); got != hostileTitle {
		t.Errorf("hostile title renders as %q", got)
	}
	if n := eval[int](t, page, `() => document.scripts.length`); n != 1 {
		t.Errorf("%d script elements, want 1", n)
	}
	if got := eval[string](t, page, `() => String(window.__pwned)`); got != "undefined" {
		t.Errorf("journal text ran as script: window.__pwned = %s", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("#step-1 .result details pre.text:not(.preview)").textContent`); got != hostileResult {
		t.Errorf("the full result renders as %q", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("h1.task").textContent`); !strings.Contains(got, "<b>Saturday</b>") {
		t.Errorf("task renders as %q", got)
	}

	// Clicking a screenshot enlarges it (the inline script is allowed to
	// run), and clicking again closes it.
	if err := page.Locator("#step-2 button.shot").Click(); err != nil {
		t.Fatal(err)
	}
	if !eval[bool](t, page, `() => { const d = document.getElementById("lightbox"); return d.open && d.querySelector("img").naturalWidth === 640 }`) {
		t.Error("the screenshot did not open enlarged")
	}
	shoot(t, page, "report-lightbox.png", false)
	if err := page.Locator("#lightbox").Click(); err != nil {
		t.Fatal(err)
	}
	if eval[bool](t, page, `() => document.getElementById("lightbox").open`) {
		t.Error("the enlarged screenshot did not close")
	}

	// The page fetched nothing but itself.
	if got := requests(); len(got) != 1 {
		t.Errorf("the page made requests besides itself: %q", got)
	}
}

// TestInBrowserDamaged opens the page of a journal cut short, with an
// image gone: the note and the placeholder show, and nothing is broken.
func TestInBrowserDamaged(t *testing.T) {
	dir := t.TempDir()
	path := writeJournal(t, dir, 320, 180)
	if err := os.Remove(filepath.Join(dir, "run-images", "step-001-obs-001.jpg")); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b[:len(b)-40], 0o644); err != nil { // into the ended line
		t.Fatal(err)
	}
	page, _ := openReport(t, path)
	shoot(t, page, "report-damaged.png", true)

	if got := eval[string](t, page, `() => document.querySelector("ul.notes").textContent`); !strings.Contains(got, "cut short") || !strings.Contains(got, "no end") {
		t.Errorf("notes = %q", got)
	}
	if got := eval[string](t, page, `() => document.querySelector("#step-1 .missing").textContent`); !strings.Contains(got, "is missing") {
		t.Errorf("placeholder = %q", got)
	}
	imgs := eval[[]any](t, page, `() => [...document.querySelectorAll("main img")].map(i => i.complete && i.naturalWidth > 0)`)
	if len(imgs) != 3 {
		t.Errorf("%d screenshots, want 3", len(imgs))
	}
	for i, ok := range imgs {
		if ok != true {
			t.Errorf("screenshot %d did not load", i+1)
		}
	}
	if n := eval[int](t, page, `() => document.querySelectorAll("main section.step").length`); n != 5 {
		t.Errorf("%d steps shown, want 5", n)
	}
	if n := eval[int](t, page, `() => document.querySelectorAll("#end").length`); n != 0 {
		t.Error("the page shows an end the journal does not have")
	}
}
