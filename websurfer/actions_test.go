package websurfer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/tools"
)

// fixture is a surfer on the fixture sites, with its tools.
type fixture struct {
	t     *testing.T
	sites *browsertest.Sites
	s     *Surfer
	reg   *tools.Registry
}

// loopbackPolicy allows the two fixture origins, and nothing else of
// loopback.
func loopbackPolicy(t testing.TB, sites *browsertest.Sites) *policy.Policy {
	t.Helper()
	var rules []policy.HostRule
	for _, u := range []string{sites.A, sites.B} {
		r, err := policy.ParseHostRule(strings.TrimPrefix(u, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	p, err := policy.New(policy.Config{Allow: rules})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newFixture(t *testing.T, cfg Config, scfg sandbox.SessionConfig) *fixture {
	t.Helper()
	sites := browsertest.ServeSites(t)
	serveActionHandlers(sites)
	if cfg.Policy == nil {
		cfg.Policy = loopbackPolicy(t, sites)
	}
	if cfg.SearchURL == "" {
		cfg.SearchURL = sites.A + "/search?q=%s"
	}
	if scfg.Policy == nil {
		scfg.Policy = cfg.Policy
	}
	cfg.Session = browsertest.Session(t, scfg)
	s := newSurfer(t, cfg)
	return &fixture{t: t, sites: sites, s: s, reg: s.Tools()}
}

// serveActionHandlers adds the dynamic pages the action fixtures use.
func serveActionHandlers(sites *browsertest.Sites) {
	sites.Handle("/search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		fmt.Fprintf(w, `<!doctype html><title>Results for %[1]s</title><h1>Results for %[1]s</h1><ol><li><a href="/actions/article.html">Riverside Library: opening hours</a></li></ol>`, htmlEscape(q))
	})
	sites.Handle("/download/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		io.WriteString(w, "month,total\njan,42\n")
	})
	sites.Handle("/download/huge.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="huge.bin"`)
		w.Write(bytes.Repeat([]byte{'x'}, 3<<20))
	})
	sites.Handle("/upload", func(w http.ResponseWriter, r *http.Request) {
		f, h, err := r.FormFile("cv")
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		b, _ := io.ReadAll(f)
		fmt.Fprintf(w, `<title>Uploaded</title><p id=got>%s %d bytes</p>`, htmlEscape(h.Filename), len(b))
	})
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// call dispatches a tool the way the agent loop does: validated, and only
// if offered for the current page.
func (f *fixture) call(name string, args string) *tools.Result {
	f.t.Helper()
	res, err := f.reg.Call(context.Background(), name, json.RawMessage(args), f.s.Offered()...)
	if err != nil {
		f.t.Fatalf("%s(%s): runtime error: %v", name, args, err)
	}
	return res
}

// ok dispatches a tool that must succeed.
func (f *fixture) ok(name, args string) *tools.Result {
	f.t.Helper()
	res := f.call(name, args)
	if res.IsError {
		f.t.Fatalf("%s(%s) failed: %s", name, args, res.Text)
	}
	return res
}

// fail dispatches a tool that must fail with a message containing want.
func (f *fixture) fail(name, args, want string) *tools.Result {
	f.t.Helper()
	res := f.call(name, args)
	if !res.IsError {
		f.t.Fatalf("%s(%s) succeeded; want an error containing %q\n%s", name, args, want, res.Text)
	}
	if !strings.Contains(res.Text, want) {
		f.t.Fatalf("%s(%s) error %q does not say %q", name, args, res.Text, want)
	}
	return res
}

func (f *fixture) visit(path string) *Observation {
	f.t.Helper()
	f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+path))
	return f.s.last
}

// id finds the id of the listed element with a role and name.
func (f *fixture) id(role, name string) int {
	f.t.Helper()
	for _, e := range f.s.last.Elements {
		if e.Role == role && e.Name == name {
			return e.ID
		}
	}
	f.t.Fatalf("no %s %q in the observation:\n%s", role, name, f.s.last.Text())
	return 0
}

// js evaluates an expression in the active page (the test's view of the
// page-side effect).
func (f *fixture) js(expr string) any {
	f.t.Helper()
	v, err := f.s.Page().Evaluate(expr)
	if err != nil {
		f.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

func TestVisitURLAndWebSearch(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/form.html"))
	if !strings.Contains(res.Text, `"Search form"`) || len(res.Images) != 1 {
		t.Errorf("visit result lacks the page or its image:\n%s", res.Text)
	}
	// No scheme and a space means a web search (the engine is loopback here).
	f.ok("visit_url", `{"url": "opening hours riverside"}`)
	if !f.sites.Requested("/search?q=opening+hours+riverside") {
		t.Errorf("the search engine was not asked: %v", f.sites.Requests())
	}
	f.ok("web_search", `{"query": "library & more"}`)
	if !f.sites.Requested("/search?q=library+%26+more") {
		t.Errorf("web_search did not reach the engine")
	}
	if got := f.js("document.title"); got != "Results for library & more" {
		t.Errorf("title after web_search = %v", got)
	}
}

func TestNormalizeURL(t *testing.T) {
	s := &Surfer{cfg: Config{SearchURL: "https://search.test/?q=%s"}}
	for _, c := range []struct{ in, want string }{
		{"example.com", "https://example.com"},
		{"example.com/a b", "https://search.test/?q=example.com%2Fa+b"},
		{"cheap flights to Oslo", "https://search.test/?q=cheap+flights+to+Oslo"},
		{"http://x.test/y", "http://x.test/y"},
		{"  HTTPS://X.test  ", "HTTPS://X.test"},
		{"localhost:8080/x", "https://localhost:8080/x"},
		{"about:blank", "about:blank"},
		{"javascript:alert(1)", "javascript:alert(1)"},
	} {
		if got, _ := s.normalizeURL(c.in); got != c.want {
			t.Errorf("normalizeURL(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestInputTextAndSubmit(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/form.html")
	q := f.id("textbox", "Query")
	// Without Enter and without clearing: the old text stays, nothing is sent.
	f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": " more", "press_enter": false, "delete_existing_text": false}`, q))
	if got := f.js(`document.getElementById('q').value`); got != "old text more" {
		t.Errorf("value = %v; want the text appended", got)
	}
	if f.sites.Requested("/search*") {
		t.Fatal("a search was sent without Enter")
	}
	// Defaults: clear, type, press Enter.
	q = f.id("textbox", "Query")
	res := f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "opening hours"}`, q))
	if !f.sites.Requested("/search?q=opening+hours") {
		t.Errorf("the form was not submitted with the typed text: %v", f.sites.Requests())
	}
	if !strings.Contains(res.Text, "navigated") {
		t.Errorf("the result does not say the page navigated:\n%s", res.Text)
	}
}

func TestClickLinkAndHistory(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/form.html")
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "An article")))
	if f.js("location.pathname") != "/actions/article.html" || !strings.Contains(res.Text, "navigated") {
		t.Fatalf("click on a link did not navigate:\n%s", res.Text)
	}
	f.ok("history_back", `{}`)
	if f.js("location.pathname") != "/actions/form.html" {
		t.Errorf("back went to %v", f.js("location.href"))
	}
	f.ok("history_forward", `{}`)
	if f.js("location.pathname") != "/actions/article.html" {
		t.Errorf("forward went to %v", f.js("location.href"))
	}
	f.fail("history_forward", `{}`, "not available")
	n := len(f.sites.Requests())
	f.ok("refresh_page", `{}`)
	if len(f.sites.Requests()) <= n {
		t.Error("refresh_page sent no request")
	}
}

func TestNativeSelectStaysChosen(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/select.html")
	colour := f.id("combobox", "Colour")
	res := f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "option": "green"}`, colour))
	if got := f.js(`document.getElementById('colour').value + ' ' + document.getElementById('log').textContent`); got != "g native:g" {
		t.Errorf("native select: %v (the change event must fire and the choice stay)", got)
	}
	if !strings.Contains(res.Text, `"Green"`) {
		t.Errorf("result: %s", res.Text)
	}
	f.fail("select_option", fmt.Sprintf(`{"target_id": %d, "option": "Purple"}`, f.id("combobox", "Colour")), `"Red", "Blue", "Green"`)
}

func TestARIASelect(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/select.html")
	f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "option": "Banana"}`, f.id("combobox", "Fruit")))
	if got := f.js(`document.getElementById('fruitlog').textContent`); got != "aria:Banana" {
		t.Errorf("ARIA combobox choice: %v", got)
	}
}

func TestInnerScrollContainer(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/actions/inner-scroll.html")
	box := f.id("log", "Messages")
	deep := 0
	for _, e := range obs.Elements {
		if e.Name == "Deep button" {
			deep = e.ID
			if e.Where != Clipped || e.Container != box {
				t.Errorf("the deep button should be clipped inside %d: %+v", box, e)
			}
		}
	}
	if deep == 0 {
		t.Fatalf("the button inside the container is not listed:\n%s", obs.Text())
	}
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, deep), fmt.Sprintf("inside element %d", box))
	for i := 0; i < 6 && f.js(`document.getElementById('box').scrollTop`) != f.js(`document.getElementById('box').scrollHeight - document.getElementById('box').clientHeight`); i++ {
		f.ok("scroll_element_down", fmt.Sprintf(`{"target_id": %d}`, f.id("log", "Messages")))
	}
	if top, _ := f.js(`document.getElementById('box').scrollTop`).(int); top == 0 {
		t.Fatal("the inner container did not scroll")
	}
	if f.js("scrollY") != 0 {
		t.Errorf("the page scrolled instead of the container")
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Deep button")))
	if f.js(`document.getElementById('deep').textContent`) != "deep clicked" {
		t.Error("the button in the scrolled container was not clicked")
	}
	f.ok("scroll_element_up", fmt.Sprintf(`{"target_id": %d}`, f.id("log", "Messages")))
}

func TestCoveredButton(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/covered.html")
	buy := f.id("button", "Buy now")
	accept := f.id("button", "Accept cookies")
	res := f.fail("click", fmt.Sprintf(`{"target_id": %d}`, buy), "covered by dialog \"Cookie consent\"")
	if !strings.Contains(res.Text, fmt.Sprintf("id %d", accept)) {
		t.Errorf("the error does not point at the cover's button %d: %s", accept, res.Text)
	}
	if f.js("document.title") == "bought" {
		t.Fatal("the covered button was clicked through the banner")
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, accept))
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Buy now")))
	if f.js("document.title") != "bought" {
		t.Error("after the banner closed, the button still was not clicked")
	}
}

func TestPopupsAndBackAfterPopup(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/popup.html")
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Open in new tab")))
	if !strings.Contains(res.Text, "new tab") || len(f.s.tabs) != 2 || f.s.active != 1 {
		t.Fatalf("the popup did not become the active tab (%d tabs, active %d):\n%s", len(f.s.tabs), f.s.active, res.Text)
	}
	if f.js("location.search") != "?via=link" {
		t.Errorf("active tab is %v", f.js("location.href"))
	}
	if !strings.Contains(res.Text, "tabs: 0 ") {
		t.Errorf("the observation does not list the tabs:\n%s", res.Text)
	}
	// Back in a popup with no history returns to the page that opened it.
	res = f.ok("history_back", `{}`)
	if len(f.s.tabs) != 1 || f.js("location.pathname") != "/actions/popup.html" {
		t.Fatalf("back after a popup: %d tabs, at %v\n%s", len(f.s.tabs), f.js("location.href"), res.Text)
	}
	// window.open from a script.
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Open a window")))
	if len(f.s.tabs) != 2 || f.js("location.search") != "?via=script" {
		t.Fatalf("window.open: %d tabs, active at %v", len(f.s.tabs), f.js("location.href"))
	}
	f.ok("switch_tab", `{"index": 0}`)
	if f.js("location.pathname") != "/actions/popup.html" {
		t.Errorf("switch_tab 0 is at %v", f.js("location.href"))
	}
	f.ok("close_tab", `{"index": 1}`)
	if len(f.s.tabs) != 1 {
		t.Errorf("close_tab left %d tabs", len(f.s.tabs))
	}
	f.fail("close_tab", `{"index": 0}`, "not available")
}

func TestCreateTab(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/form.html")
	f.ok("create_tab", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/article.html"))
	if len(f.s.tabs) != 2 || f.s.active != 1 || f.js("document.title") != "Opening hours" {
		t.Fatalf("create_tab: %d tabs, active %d, title %v", len(f.s.tabs), f.s.active, f.js("document.title"))
	}
	f.fail("switch_tab", `{"index": 5}`, "no tab 5")
}

func TestDownload(t *testing.T) {
	f := newFixture(t, Config{MaxDownloadBytes: 1 << 20}, sandbox.SessionConfig{})
	f.visit("/actions/download.html")
	// The event is in the click's own observation, or a later one if
	// the download took longer than the action's wait.
	seen := func(res *tools.Result, want string) string {
		text := res.Text
		for i := 0; i < 100 && !strings.Contains(text, want); i++ {
			time.Sleep(50 * time.Millisecond)
			text += observe(t, f.s).Text()
		}
		return text
	}
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Get the report")))
	path := filepath.Join(f.s.sess.Info().DownloadsDir, "report.csv")
	text := seen(res, "report.csv")
	b, err := os.ReadFile(path)
	if err != nil || string(b) != "month,total\njan,42\n" {
		t.Fatalf("the download is not in the session's downloads dir: %q %v", b, err)
	}
	if !strings.Contains(text, "event: download: downloaded") || !strings.Contains(text, path) {
		t.Errorf("no observation gives the download's path:\n%s", text)
	}
	// Over the cap: discarded and said so.
	res = f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "Get the huge file")))
	if text := seen(res, "huge.bin"); !strings.Contains(text, "over the cap") {
		t.Errorf("a download over the cap is not reported:\n%s", text)
	}
	if _, err := os.Stat(filepath.Join(f.s.sess.Info().DownloadsDir, "huge.bin")); !os.IsNotExist(err) {
		t.Errorf("the oversized download was kept: %v", err)
	}
}

func uploadsDir(t *testing.T) string {
	d, err := filepath.Abs(filepath.Join("..", "testdata", "uploads"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestUpload(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{UploadsDir: uploadsDir(t)})
	f.visit("/actions/upload.html")
	cv := 0
	for _, e := range f.s.last.Elements {
		if e.InputType == "file" {
			cv = e.ID
		}
	}
	if cv == 0 {
		t.Fatalf("no file input listed:\n%s", f.s.last.Text())
	}
	f.fail("upload_file", fmt.Sprintf(`{"target_id": %d, "path": "../../go.mod"}`, cv), "outside the uploads directory")
	f.fail("upload_file", fmt.Sprintf(`{"target_id": %d, "path": "/etc/passwd"}`, cv), "outside the uploads directory")
	f.fail("upload_file", fmt.Sprintf(`{"target_id": %d, "path": "nope.txt"}`, cv), "no file")
	if got := f.js(`document.getElementById('cv').files.length`); got != 0 {
		t.Fatalf("a refused upload set files: %v", got)
	}
	f.ok("upload_file", fmt.Sprintf(`{"target_id": %d, "path": "cv.txt"}`, cv))
	if got := f.js(`document.getElementById('cv').files[0].name`); got != "cv.txt" {
		t.Fatalf("file input holds %v", got)
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Send")))
	if got := f.js(`document.getElementById('got').textContent`); got != "cv.txt 18 bytes" {
		t.Errorf("the server received %v", got)
	}
}

// An alert is dismissed at once; a confirm or prompt waits for
// answer_dialog (dialogs_test.go), and the next other action dismisses it:
// no dialog hangs a tool, and the page's script goes on with the safe
// answer.
func TestDialogsNeverHang(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/dialog.html")
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Alert")))
	if got := f.js(`document.getElementById('r').textContent`); got != "after alert" {
		t.Errorf("Alert: page shows %v", got)
	}
	if !strings.Contains(res.Text, `alert "Saved!" was dismissed`) {
		t.Errorf("Alert: the dialog is not reported:\n%s", res.Text)
	}
	for _, c := range []struct{ button, result, text string }{
		{"Confirm", "cancelled", `confirm "Delete everything?" was dismissed`},
		{"Prompt", "prompt:null", `prompt "Your name?" was dismissed`},
	} {
		f.openDialog(c.button, "")
		res := f.ok("sleep", `{"seconds": 0.1}`)
		if got := f.js(`document.getElementById('r').textContent`); got != c.result {
			t.Errorf("%s: page shows %v; want %q", c.button, got, c.result)
		}
		if !strings.Contains(res.Text, c.text) {
			t.Errorf("%s: the dialog is not reported:\n%s", c.button, res.Text)
		}
	}
}

func TestKeypressChords(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/keys.html")
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("textbox", "Editor")))
	f.ok("keypress", `{"keys": ["Control+A", "Backspace", "X", "Shift+ArrowLeft"]}`)
	if got := f.js(`document.getElementById('ed').value`); got != "X" {
		t.Errorf("after Control+A Backspace X the field holds %v", got)
	}
	keys, _ := f.js(`document.getElementById('keys').textContent`).(string)
	if !strings.HasSuffix(keys, "Control Control+A Backspace X Shift ArrowLeft") {
		t.Errorf("key events: %q (keys are pressed in sequence, chords together)", keys)
	}
	f.fail("keypress", `{"keys": ["NoSuchKey"]}`, "NoSuchKey")
	f.fail("keypress", `{"keys": []}`, "keys")
}

func TestHover(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/hover.html")
	f.ok("hover", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Hover me")))
	if got := f.js(`document.getElementById('tip').textContent`); got != "tooltip shown" {
		t.Errorf("hover: %v", got)
	}
}

func TestPageUpDown(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	obs := f.visit("/actions/long.html")
	if contains(f.s.Offered(), "page_up") || !contains(f.s.Offered(), "page_down") {
		t.Errorf("at the top, offered %v", f.s.Offered())
	}
	f.ok("page_down", `{}`)
	if got := f.js("scrollY"); got != obs.Viewport.Height-pageOverlap {
		t.Errorf("page_down scrolled to %v; want %d", got, obs.Viewport.Height-pageOverlap)
	}
	f.ok("page_up", `{}`)
	if got := f.js("scrollY"); got != 0 {
		t.Errorf("page_up scrolled to %v", got)
	}
	f.fail("page_up", `{}`, "not available")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestReadPage(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/article.html")
	res := f.ok("read_page", `{}`)
	for _, want := range []string{"page 1 of 1", "# Riverside Library", "**Monday to Friday, 9:00 to 18:00**", "- Reading room"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("read_page lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "© Riverside") {
		t.Errorf("read_page kept the footer:\n%s", res.Text)
	}
	f.fail("read_page", `{"page": 2}`, "no page 2")
	// Long content is paginated within the token budget.
	md := strings.Repeat("A paragraph of words that goes on and on about the library.\n\n", 600)
	pages := paginate(md, ReadPageTokens)
	if len(pages) < 3 {
		t.Fatalf("%d pages for %d bytes", len(pages), len(md))
	}
	for i, p := range pages {
		if n := tokensOf(p); n > ReadPageTokens {
			t.Errorf("page %d is %d tokens", i+1, n)
		}
	}
}

func TestModelToolsWithoutModel(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/article.html")
	f.fail("summarize_page", `{}`, "no model is configured")
	f.fail("answer_question", `{"question": "When is it open?"}`, "no model is configured")
}

func TestSleepAndStop(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/form.html")
	start := time.Now()
	f.ok("sleep", `{"seconds": 0.2}`)
	if time.Since(start) < 200*time.Millisecond {
		t.Error("sleep returned early")
	}
	f.fail("sleep", `{"seconds": 100}`, "seconds")
	res := f.ok("stop_action", `{"answer": "9:00 to 18:00"}`)
	if !strings.Contains(res.Text, "9:00 to 18:00") {
		t.Errorf("stop_action: %s", res.Text)
	}
}

// TestBadArguments checks each kind of bad input comes back as an error
// result naming the problem, and changes nothing in the page.
func TestBadArguments(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{UploadsDir: uploadsDir(t)})
	f.visit("/actions/form.html")
	old := f.id("textbox", "Query")
	before := f.js(`document.documentElement.outerHTML + document.getElementById('q').value`)
	reqs := len(f.sites.Requests())
	f.fail("click", `{"target_id": 999}`, "no element 999")
	f.fail("click", `{"target_id": "seven"}`, "target_id")
	f.fail("click", `{}`, "target_id")
	f.fail("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": %q}`, old, strings.Repeat("x", 1<<20)), "text_value")
	f.fail("input_text", fmt.Sprintf(`{"input_field_id": %d}`, old), "text_value")
	f.fail("select_option", `{"target_id": 1, "option": 5}`, "option")
	f.fail("frobnicate", `{}`, "frobnicate")
	f.fail("page_up", `{}`, "not available")
	f.fail("upload_file", `{"target_id": 1, "path": "../go.mod"}`, "outside the uploads directory")
	if after := f.js(`document.documentElement.outerHTML + document.getElementById('q').value`); after != before {
		t.Error("a refused call changed the page")
	}
	if len(f.sites.Requests()) != reqs {
		t.Errorf("a refused call sent requests: %v", f.sites.Requests()[reqs:])
	}
	// An id from the previous page.
	f.visit("/actions/article.html")
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, 50), "no element 50")
	if _, err := f.s.Page().Goto(f.sites.A + "/actions/select.html"); err != nil {
		t.Fatal(err)
	}
	f.fail("click", `{"target_id": 1}`, "navigated")
}

func TestDeniedNavigationIsAToolError(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/form.html")
	res := f.fail("visit_url", `{"url": "http://127.0.0.9:1/secret"}`, "denied")
	if !strings.Contains(res.Text, "127.0.0.9") {
		t.Errorf("the denial does not name the host: %s", res.Text)
	}
	if f.js("location.pathname") != "/actions/form.html" {
		t.Error("a denied visit left the page")
	}
	obs := observe(t, f.s)
	if !strings.Contains(obs.Text(), "blocked: denied: 127.0.0.9") {
		t.Errorf("the next observation does not list the denial:\n%s", obs.Text())
	}
}

func TestBlockedSubresourcesAreListed(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/tracked", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Tracked</title><p>hello</p><img src="http://127.0.0.9:9/pixel.gif"><script src="http://127.0.0.10:9/t.js"></script>`)
	})
	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/tracked"))
	text := res.Text
	for i := 0; i < 20 && !strings.Contains(text, "subresource requests"); i++ {
		time.Sleep(50 * time.Millisecond)
		text += observe(t, f.s).Text()
	}
	for _, want := range []string{"blocked: 2 subresource requests by the policy", `"127.0.0.9"`, `"127.0.0.10"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the observation does not say %q:\n%s", want, text)
		}
	}
}

// A navigation that fails (an empty 404 commits Chromium's error page a
// moment after Playwright reports the failure) must not interrupt the next
// one.
func TestVisitAfterFailedNavigation(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/empty404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	for i := range 4 {
		res := f.call("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/empty404"))
		t.Logf("round %d, the empty 404: error=%v %s", i, res.IsError, textcut.FirstLine(res.Text))
		res = f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/form.html"))
		if !strings.Contains(res.Text, `"Search form"`) {
			t.Fatalf("round %d: the page after the failed one did not load:\n%s", i, res.Text)
		}
	}
}

// A page served with an HTTP error status is reported as one: the model
// reads the status in the step's summary, with the standard reason phrase
// (never the server's own), whether the browser shows the page's body or
// an empty page (Chromium's headless shell, frames on demand).
func TestVisitReportsHTTPError(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.sites.Handle("/gone", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusGone)
		fmt.Fprint(w, "<title>Gone</title><h1>This item is gone</h1>")
	})
	f.sites.Handle("/oops", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprint(w, "<h1>Something broke</h1>")
	})
	f.sites.Handle("/empty404", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
	})
	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/gone"))
	if first := textcut.FirstLine(res.Text); !strings.HasSuffix(first, "; the server answered HTTP 410 (Gone)") {
		t.Errorf("the 410's summary is %q; want it to end with the status", first)
	}
	if !strings.Contains(res.Text, "This item is gone") {
		t.Errorf("the 410's page is not observed:\n%s", res.Text)
	}
	res = f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/oops"))
	if first := textcut.FirstLine(res.Text); !strings.Contains(first, "the server answered HTTP 500 (Internal Server Error)") {
		t.Errorf("the 500's summary is %q; want the status", first)
	}
	res = f.call("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/empty404"))
	if first := textcut.FirstLine(res.Text); !strings.Contains(first, "HTTP_RESPONSE_CODE_FAILURE") && !strings.Contains(first, "the server answered HTTP 404 (Not Found)") {
		t.Errorf("the empty 404 gives %q (error %v); want the status in either a failure or the summary", first, res.IsError)
	}
	res = f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/form.html"))
	if first := textcut.FirstLine(res.Text); strings.Contains(first, "answered") {
		t.Errorf("a page served with 200 is reported with a status: %q", first)
	}
}

// TestFragmentLands visits a URL with a fragment, and follows a link to
// one from another page: the page is scrolled to the fragment's element
// and the observation's URL keeps the fragment (issue 29, point 1).
func TestFragmentLands(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	check := func(how, frag, heading string) {
		t.Helper()
		if got := f.s.last.URL; !strings.HasSuffix(got, "/actions/sections.html#"+frag) {
			t.Errorf("%s: the observation's URL is %q; want it to end in #%s", how, got, frag)
		}
		if got := f.js("location.hash"); got != "#"+frag {
			t.Errorf("%s: location.hash = %v; want #%s", how, got, frag)
		}
		top := f.js(fmt.Sprintf("Math.round(document.getElementById(%q).getBoundingClientRect().top)", frag))
		if n, ok := top.(int); !ok || n < -2 || n > 2 {
			t.Errorf("%s: section #%s is at %v px from the top; want it scrolled to the top", how, frag, top)
		}
		if !strings.Contains(f.s.last.Text(), heading) {
			t.Errorf("%s: the observation does not show %q:\n%s", how, heading, f.s.last.Text())
		}
	}
	f.visit("/actions/sections.html#prices")
	check("visit_url", "prices", "Prices")
	f.visit("/actions/to-sections.html")
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("link", "See the opening hours")))
	check("click on a link", "hours", "Opening hours")
}

// idNamed finds the id of the listed element with a name, whatever its
// role.
func (f *fixture) idNamed(name string) int {
	f.t.Helper()
	for _, e := range f.s.last.Elements {
		if e.Name == name {
			return e.ID
		}
	}
	f.t.Fatalf("no element %q in the observation:\n%s", name, f.s.last.Text())
	return 0
}

// TestInputTextDateAndTimeFields types into date, time, month, week and
// datetime-local inputs in the formats a model writes, and the form posts
// them (issue 29, point 2). The values are set as Playwright's Fill sets
// them, so the browser's locale (the order of a date's segments) does not
// matter.
func TestInputTextDateAndTimeFields(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/booking.html")
	for _, c := range []struct{ name, value string }{
		{"Arrival date", "2027-09-14"},
		{"Arrival time", "13:45"},
		{"Billing month", "2027-09"},
		{"Week", "2027-W37"},
		{"Departure", "2027-09-14T13:45"},
	} {
		f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": %q, "press_enter": false}`, f.idNamed(c.name), c.value))
	}
	// A malformed date is refused with the format, and changes nothing.
	res := f.fail("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "14/09/2027", "press_enter": false}`, f.idNamed("Arrival date")), "2027-09-14")
	if !strings.Contains(res.Text, "YYYY-MM-DD") {
		t.Errorf("the refusal does not say the format: %s", res.Text)
	}
	if got := f.js(`document.getElementById('date').value`); got != "2027-09-14" {
		t.Errorf("after a malformed date the field holds %v; want 2027-09-14 kept", got)
	}
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Book")))
	want := "/search?q=booking&date=2027-09-14&time=13%3A45&month=2027-09&week=2027-W37&departure=2027-09-14T13%3A45"
	if !f.sites.Requested(want) {
		t.Errorf("the form did not post the typed values; want %s, requests: %v", want, f.sites.Requests())
	}
}

// TestInputTextSendsKeys types into a search box that suggests on keyup:
// the suggestions show, so keys were sent (issue 29, point 2).
func TestInputTextSendsKeys(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/suggest.html")
	res := f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "Os", "press_enter": false}`, f.idNamed("City")))
	for _, want := range []string{"Suggested: Oslo", "Suggested: Osaka"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the observation after typing lacks %q:\n%s", want, res.Text)
		}
	}
	if strings.Contains(res.Text, "Suggested: Ottawa") {
		t.Errorf("a suggestion that does not match the typed text shows:\n%s", res.Text)
	}
	if got := f.js(`document.getElementById('city').value`); got != "Os" {
		t.Errorf("the field holds %v; want Os", got)
	}
}

// TestMultiSelectExactly sets a multi-select to exactly the options named,
// deselecting the others, then clears it (issue 29, point 7).
func TestMultiSelectExactly(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/multiselect.html")
	selected := func() any {
		return f.js(`Array.from(document.getElementById('toppings').selectedOptions, o => o.value).join(',') + ' ' + document.getElementById('log').textContent`)
	}
	// Cheese and Ham are selected; the model wants Cheese and Olives.
	f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "options": ["Cheese", "olives"]}`, f.idNamed("Toppings")))
	if got := selected(); got != "cheese,olives cheese,olives" {
		t.Errorf("after options [Cheese, olives]: %v; want exactly cheese and olives (and the change event)", got)
	}
	// One option alone: the selection becomes that one.
	f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "option": "Basil"}`, f.idNamed("Toppings")))
	if got := selected(); got != "basil basil" {
		t.Errorf("after option Basil: %v; want exactly basil", got)
	}
	// A missing option is refused and changes nothing.
	f.fail("select_option", fmt.Sprintf(`{"target_id": %d, "options": ["Ham", "Pineapple"]}`, f.idNamed("Toppings")), `"Pineapple"`)
	if got := selected(); got != "basil basil" {
		t.Errorf("after a refused choice: %v; want basil kept", got)
	}
	f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "options": ["Ham", "Onion"]}`, f.idNamed("Toppings")))
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Order")))
	if want := "/search?q=pizza&t=ham&t=onion"; !f.sites.Requested(want) {
		t.Errorf("the form did not post exactly the options chosen; want %s, requests: %v", want, f.sites.Requests())
	}
	f.visit("/actions/multiselect.html")
	f.ok("select_option", fmt.Sprintf(`{"target_id": %d, "options": []}`, f.idNamed("Toppings")))
	if got := selected(); got != " none" {
		t.Errorf("after options []: %v; want nothing selected", got)
	}
	// A single select takes one option.
	f.visit("/actions/select.html")
	f.fail("select_option", fmt.Sprintf(`{"target_id": %d, "options": ["Red", "Blue"]}`, f.id("combobox", "Colour")), "allows one choice")
	f.fail("select_option", fmt.Sprintf(`{"target_id": %d}`, f.id("combobox", "Colour")), "needs option")
}

// shotPoint is the point of the latest screenshot, in its pixels, at
// fraction fx, fy of the box of the element a selector finds.
func (f *fixture) shotPoint(sel string, fx, fy float64) (float64, float64) {
	f.t.Helper()
	v := f.js(fmt.Sprintf(`(() => { const r = document.querySelector(%q).getBoundingClientRect(); return [r.left + %g * r.width, r.top + %g * r.height]; })()`, sel, fx, fy))
	xy, ok := v.([]any)
	if !ok || len(xy) != 2 {
		f.t.Fatalf("box of %s: %v", sel, v)
	}
	num := func(a any) float64 {
		switch n := a.(type) {
		case int:
			return float64(n)
		case float64:
			return n
		}
		f.t.Fatalf("not a number: %v", a)
		return 0
	}
	o := f.s.last
	scale := 1.0
	if o.ImageWidth > 0 {
		scale = float64(o.ImageWidth) / float64(o.Viewport.Width)
	}
	return math.Round(num(xy[0]) * scale), math.Round(num(xy[1]) * scale)
}

// TestPointerActions drags a slider drawn in divs to a value, reorders a
// sortable list by drag, and clicks a canvas by click_at, all on points
// of the screenshot (issue 29, point 8).
func TestPointerActions(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/pointer.html")
	// The slider: from its thumb to three quarters of its track.
	fx, fy := f.shotPoint("#thumb", 0.5, 0.5)
	tx, ty := f.shotPoint("#track", 0.75, 0.5)
	res := f.ok("drag", fmt.Sprintf(`{"from": {"x": %g, "y": %g}, "to": {"x": %g, "y": %g}}`, fx, fy, tx, ty))
	if got := f.js(`+document.getElementById('volume').textContent`); got != 75 && got != 74 && got != 76 {
		t.Errorf("after dragging the slider to 3/4 of its track the volume is %v; want 75\n%s", got, res.Text)
	}
	// The sortable list: Alpha dropped on Charlie goes after it.
	fx, fy = f.shotPoint("#list li:nth-child(1)", 0.5, 0.5)
	tx, ty = f.shotPoint("#list li:nth-child(3)", 0.5, 0.5)
	f.ok("drag", fmt.Sprintf(`{"from": {"x": %g, "y": %g}, "to": {"x": %g, "y": %g}}`, fx, fy, tx, ty))
	if got := f.js(`document.getElementById('order').textContent`); got != "Bravo,Charlie,Alpha" {
		t.Errorf("after dragging Alpha onto Charlie the order is %v; want Bravo,Charlie,Alpha", got)
	}
	// The canvas: a click at its (100, 40) reaches the page there.
	cx, cy := f.shotPoint("#canvas", 100.0/302, 40.0/122)
	res = f.ok("click_at", fmt.Sprintf(`{"x": %g, "y": %g}`, cx, cy))
	got, _ := f.js(`document.getElementById('canvaslog').textContent`).(string)
	var x, y int
	if _, err := fmt.Sscanf(got, "clicked at %d,%d", &x, &y); err != nil || x < 97 || x > 103 || y < 37 || y > 43 {
		t.Errorf("after click_at on the canvas it says %q; want clicked at about 100,40", got)
	}
	if !strings.Contains(res.Text, "canvas") {
		t.Errorf("the summary does not say what was clicked:\n%s", res.Text)
	}
	// Outside the screenshot: refused.
	f.fail("click_at", `{"x": 100000, "y": 5}`, "outside the screenshot")
	// A drag end needs an id or a point.
	f.fail("drag", `{"from": {"target_id": 1, "x": 3, "y": 4}, "to": {"x": 5, "y": 5}}`, "not both")
}

// TestClickAtCoveredPoint: click_at on a point where a banner covers a
// listed button is refused, naming the cover, and nothing is clicked;
// drag from there too.
func TestClickAtCoveredPoint(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/covered.html")
	f.js(`void (document.getElementById('banner').onclick = () => { document.title = 'banner clicked'; })`)
	bx, by := f.shotPoint("#buy", 0.5, 0.5)
	f.fail("click_at", fmt.Sprintf(`{"x": %g, "y": %g}`, bx, by), "covered by dialog \"Cookie consent\"")
	f.fail("drag", fmt.Sprintf(`{"from": {"x": %g, "y": %g}, "to": {"x": 5, "y": 5}}`, bx, by), "covered by dialog \"Cookie consent\"")
	if got := f.js("document.title"); got != "Covered" {
		t.Fatalf("a refused click_at reached the page: the title is %v", got)
	}
}

// TestPointerActionsAreGated: click_at on a button is judged by the action
// rules for click too, and drag by its own, like any action.
func TestPointerActionsAreGated(t *testing.T) {
	sites := browsertest.ServeSites(t)
	var rules []policy.HostRule
	for _, u := range []string{sites.A, sites.B} {
		r, err := policy.ParseHostRule(strings.TrimPrefix(u, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, r)
	}
	pol, err := policy.New(policy.Config{Allow: rules, Actions: []policy.ActionRule{
		{Rule: "no-delete", Tools: []string{"click"}, Role: "button", Name: "^Delete", Verdict: policy.Deny},
		{Rule: "no-drag", Tools: []string{"drag"}, Name: "^Delete", Verdict: policy.Deny},
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Policy: pol}
	cfg.Session = browsertest.Session(t, sandbox.SessionConfig{Policy: pol})
	s := newSurfer(t, cfg)
	f := &fixture{t: t, sites: sites, s: s, reg: s.Tools()}
	f.visit("/actions/pointer.html")
	bx, by := f.shotPoint("button", 0.5, 0.5)
	f.js(`void (document.querySelector('button').onclick = () => { document.title = 'deleted'; })`)
	f.fail("click_at", fmt.Sprintf(`{"x": %g, "y": %g}`, bx, by), "no-delete")
	if got := f.js(`document.title`); got != "Pointer page" {
		t.Errorf("a denied click_at reached the button: title %v", got)
	}
	f.fail("drag", fmt.Sprintf(`{"from": {"x": 1, "y": 1}, "to": {"x": %g, "y": %g}}`, bx, by), "no-drag")
	if got := f.js(`document.title`); got != "Pointer page" {
		t.Errorf("a denied drag reached the button: title %v", got)
	}
	// Elsewhere on the page click_at is allowed.
	cx, cy := f.shotPoint("#canvas", 0.5, 0.5)
	f.ok("click_at", fmt.Sprintf(`{"x": %g, "y": %g}`, cx, cy))
}
