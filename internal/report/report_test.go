package report_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/journal"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

func TestMain(m *testing.M) { browsertest.Main(m) }

// Strings from pages and models that must render as text.
const (
	hostileTitle  = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">Shop & "Save"`
	hostileResult = "line one\n</pre><script>window.__pwned=3</script>\nline three\nline four\nline five\nline six"
	hostileURL    = `http://127.0.0.1:8080/?q="><img src=x onerror=window.__pwned=4>`
)

// t0 is the test journal's start; fixed so the golden file is stable.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// testJPEG encodes a small set-of-mark-like screenshot: a page colour with
// a box, so each step's image differs.
func testJPEG(t testing.TB, w, h int, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{250, 250, 250, 255})
			if x > w/8 && x < w/2 && y > h/6 && y < h/3 {
				img.Set(x, y, c)
			}
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func boolp(b bool) *bool { return &b }

// writeJournal writes a run of five steps into dir with the real journal
// writer: an allowed visit, a denied click, a failed typing with a
// recovery, a corrected reply, and an answer. Images are w×h JPEGs.
func writeJournal(t testing.TB, dir string, w, h int) string {
	t.Helper()
	path := filepath.Join(dir, "run.jsonl")
	j, err := journal.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	write := func(e journal.Entry) {
		t.Helper()
		if err := j.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	observe := func(step, ms int, url, title string, c color.RGBA) {
		t.Helper()
		img, err := j.SaveImage(step, step, testJPEG(t, w, h, c), "image/jpeg")
		if err != nil {
			t.Fatal(err)
		}
		write(journal.Entry{Time: at(ms), Event: journal.KindObserved, Step: step, URL: url, Title: title, Elements: 12 + step, Tokens: 800 + step, Image: img, Seq: step})
	}
	usage := func(p, c int) *journal.Usage { return &journal.Usage{Prompt: p, Completion: c, Total: p + c} }

	write(journal.Entry{Time: at(0), Event: journal.KindRunStarted, Task: "Find the <b>Saturday</b> opening hours of the Harbour branch",
		Config: json.RawMessage(`{"model":"gpt-4o","max_steps":20,"allow":["127.0.0.1"],"note":"<script>alert(1)</script>"}`)})

	observe(1, 40, "http://127.0.0.1:8080/", "Riverside Library", color.RGBA{48, 86, 211, 255})
	write(journal.Entry{Time: at(900), Event: journal.KindReasoned, Step: 1, Usage: usage(1500, 40),
		Calls: []journal.Call{{ID: "c1", Tool: "visit_url", Args: json.RawMessage(`{"url":"http://127.0.0.1:8080/branches"}`), Reasoning: "The branches page should list the hours."}}})
	write(journal.Entry{Time: at(901), Event: journal.KindGated, Step: 1, Tool: "visit_url", Verdict: "allow", Rule: "allow", Target: "127.0.0.1:8080"})
	write(journal.Entry{Time: at(1400), Event: journal.KindActed, Step: 1, Tool: "visit_url", Args: json.RawMessage(`{"url":"http://127.0.0.1:8080/branches"}`),
		Result: hostileResult, Duration: journal.Duration(498 * time.Millisecond)})

	observe(2, 1500, hostileURL, hostileTitle, color.RGBA{180, 35, 24, 255})
	write(journal.Entry{Time: at(2300), Event: journal.KindReasoned, Step: 2, Usage: usage(1700, 35),
		Calls: []journal.Call{{ID: "c2", Tool: "click", Args: json.RawMessage(`{"target_id":7}`), Reasoning: "The ad says the hours are on another site."}}})
	write(journal.Entry{Time: at(2301), Event: journal.KindGated, Step: 2, Tool: "click", Verdict: "deny", Rule: "deny:*.evil.test",
		Target: "http://ads.evil.test/hours", Reason: "host ads.evil.test is not in the allowlist"})
	write(journal.Entry{Time: at(2302), Event: journal.KindActed, Step: 2, Tool: "click", Args: json.RawMessage(`{"target_id":7}`),
		Error: "denied: host ads.evil.test is not in the allowlist"})

	observe(3, 2400, "http://127.0.0.1:8080/branches", "Branches", color.RGBA{6, 118, 71, 255})
	write(journal.Entry{Time: at(3100), Event: journal.KindReasoned, Step: 3, Usage: usage(1800, 30),
		Calls: []journal.Call{{ID: "c3", Tool: "input_text", Args: json.RawMessage(`{"input_field_id":99,"text_value":"harbour"}`)}}})
	write(journal.Entry{Time: at(3101), Event: journal.KindGated, Step: 3, Tool: "input_text", Verdict: "allow"})
	write(journal.Entry{Time: at(3300), Event: journal.KindActed, Step: 3, Tool: "input_text", Args: json.RawMessage(`{"input_field_id":99,"text_value":"harbour"}`),
		Error: "no element 99 on this page; the ids on the page are 1 to 15", Duration: journal.Duration(200 * time.Millisecond)})
	write(journal.Entry{Time: at(3400), Event: journal.KindRecovered, Step: 3, Message: "the tab crashed; reopened http://127.0.0.1:8080/branches"})

	write(journal.Entry{Time: at(4200), Event: journal.KindCorrected, Step: 4, Message: "the reply had no tool call; the model was asked again"})

	observe(5, 4300, "http://127.0.0.1:8080/branch/harbour", "Harbour Branch", color.RGBA{181, 71, 8, 255})
	write(journal.Entry{Time: at(5000), Event: journal.KindReasoned, Step: 5, Usage: usage(2000, 25),
		Calls: []journal.Call{{ID: "c5", Tool: "ask", Args: json.RawMessage(`{"question":"may I submit?"}`)}}})
	write(journal.Entry{Time: at(5001), Event: journal.KindGated, Step: 5, Tool: "ask", Verdict: "ask", Approved: boolp(true), Rule: "actions[0]"})
	write(journal.Entry{Time: at(5100), Event: journal.KindActed, Step: 5, Tool: "stop_action", Result: "I finished with the answer: 10:00 to 14:00.", Duration: journal.Duration(5 * time.Millisecond)})

	write(journal.Entry{Time: at(5200), Event: journal.KindEnded, EndReason: journal.EndAnswered, Answer: "The Harbour branch opens on Saturdays from 10:00 to 14:00.", Steps: 5, Tokens: 7130})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func render(t testing.TB, path string) (string, report.Summary) {
	t.Helper()
	j, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sum, err := report.Write(&buf, j, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return buf.String(), sum
}

func TestSummary(t *testing.T) {
	_, sum := render(t, writeJournal(t, t.TempDir(), 32, 18))
	want := report.Summary{Steps: 5, Denied: 1, Errors: 1, Recovered: 1, Ended: true, Images: 4}
	sum.Bytes = 0
	if !reflect.DeepEqual(sum, want) {
		t.Errorf("summary = %+v, want %+v", sum, want)
	}
}

// TestGolden pins the page for a fixed journal. Regenerate with -update
// and look at the diff.
func TestGolden(t *testing.T) {
	dir := t.TempDir()
	html, _ := render(t, writeJournal(t, dir, 16, 9))
	golden := filepath.Join("testdata", "run.golden.html")
	if *update {
		if err := os.WriteFile(golden, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if html != string(want) {
		t.Errorf("the page differs from %s; run with -update and review the diff", golden)
	}
}

func TestEscapes(t *testing.T) {
	html, _ := render(t, writeJournal(t, t.TempDir(), 16, 9))
	for _, raw := range []string{hostileTitle, "<script>window.__pwned", "<img src=x", "<b>Saturday</b>", "<script>alert(1)"} {
		if strings.Contains(html, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	if n := strings.Count(strings.ToLower(html), "<script"); n != 1 {
		t.Errorf("the page has %d script elements, want only its own", n)
	}
	for _, esc := range []string{"&lt;script&gt;window.__pwned=1&lt;/script&gt;", "&lt;b&gt;Saturday&lt;/b&gt;"} {
		if !strings.Contains(html, esc) {
			t.Errorf("the page lacks the escaped text %q", esc)
		}
	}
}

func TestSelfContained(t *testing.T) {
	html, _ := render(t, writeJournal(t, t.TempDir(), 16, 9))
	lower := strings.ToLower(html)
	for _, ref := range []string{"http://", "https://", "src=\"/", "src=\"file", "<link", "@import", "url("} {
		// Journal strings hold URLs as text; only attributes and CSS
		// could fetch, so look for the fetching forms.
		if ref == "http://" || ref == "https://" {
			for _, attr := range []string{`src="` + ref, `href="` + ref} {
				if strings.Contains(lower, attr) {
					t.Errorf("the page fetches from the network: %q", attr)
				}
			}
			continue
		}
		if strings.Contains(lower, ref) {
			t.Errorf("the page refers to something outside itself: %q", ref)
		}
	}
	if !strings.Contains(html, `http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; img-src data:;`) {
		t.Error("the page has no restrictive Content-Security-Policy")
	}
}

func TestCutShort(t *testing.T) {
	path := writeJournal(t, t.TempDir(), 16, 9)
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The kill came halfway through the line after step 3's recovery.
	lines := bytes.SplitAfter(full, []byte("\n"))
	var cut []byte
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"event":"corrected"`)) {
			cut = append(cut, l[:len(l)/2]...)
			break
		}
		cut = append(cut, l...)
	}
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	html, sum := render(t, path)
	if sum.Steps != 3 || sum.Ended || sum.Images != 3 {
		t.Errorf("summary = %+v, want 3 steps, no end, 3 images", sum)
	}
	if len(sum.Notes) != 2 || !strings.Contains(sum.Notes[0], "line 15 is cut short") || !strings.Contains(sum.Notes[1], "no end") {
		t.Errorf("notes = %q, want the cut line and the missing end", sum.Notes)
	}
	if !strings.Contains(html, `<ul class="notes">`) || !strings.Contains(html, "line 15 is cut short") {
		t.Error("the page does not show the note about the cut line")
	}
	if !strings.Contains(html, `id="step-3"`) {
		t.Error("the page lost the steps before the cut")
	}
}

func TestBadLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "j.jsonl")
	body := `{"event":"run_started","task":"t"}
not json at all
{"no_event":true}
{"event":"reasoned","step":"one"}

{"event":"acted","step":1,"tool":"click","result":"ok"}
`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := report.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Entries) != 2 {
		t.Errorf("entries = %d, want 2", len(j.Entries))
	}
	want := []string{
		"line 2 is not a journal entry (invalid JSON at byte 2); it is left out",
		"line 3 has no event; it is left out",
		`line 4 is not a journal entry (field "step" has the wrong type); it is left out`,
	}
	if strings.Join(j.Notes, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(j.Notes, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.Read(filepath.Join(dir, "nope.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	for name, body := range map[string]string{"empty": "", "blank": "\n\n", "html": "<html><body>hi</body></html>\n", "cut": `{"event":"run_sta`} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Read(p); !errors.Is(err, report.ErrNotJournal) {
			t.Errorf("%s: err = %v, want ErrNotJournal", name, err)
		}
	}
	if _, err := report.Write(&bytes.Buffer{}, &report.Journal{}, report.Options{MaxText: -1}); err == nil {
		t.Error("a negative MaxText was accepted")
	}
	if _, err := report.Write(&bytes.Buffer{}, nil, report.Options{}); err == nil {
		t.Error("a nil journal was accepted")
	}
}

// TestImages checks that only JPEG and PNG files inside the journal's
// directory are inlined; anything else becomes a placeholder.
func TestImages(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "run")
	if err := os.MkdirAll(filepath.Join(jdir, "imgs"), 0o755); err != nil {
		t.Fatal(err)
	}
	pic := testJPEG(t, 16, 9, color.RGBA{1, 2, 3, 255})
	files := map[string][]byte{
		"secret.jpg":          pic, // outside the journal's directory
		"run/imgs/ok.jpg":     pic,
		"run/imgs/text.jpg":   []byte("password=hunter2\n"),
		"run/imgs/broken.jpg": pic[:20],
		"run/imgs/big.jpg":    bytes.Repeat(pic, 200),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "secret.jpg"), filepath.Join(jdir, "imgs", "link.jpg")); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ image, want string }{
		{"imgs/ok.jpg", ""},
		{"imgs/gone.jpg", `image &#34;imgs/gone.jpg&#34; is missing`},
		{"../secret.jpg", "is outside the journal&#39;s directory"},
		{filepath.Join(dir, "secret.jpg"), "is outside the journal&#39;s directory"},
		{"imgs/link.jpg", "cannot be read"},
		{"imgs/text.jpg", "is not a JPEG or PNG"},
		{"imgs/broken.jpg", "is damaged"},
		{"imgs/big.jpg", "too large to inline"},
		{"", "no screenshot was saved"},
	}
	for _, c := range cases {
		j := &report.Journal{Dir: jdir, Entries: []journal.Entry{{Event: journal.KindObserved, Step: 1, Image: c.image}}}
		var buf bytes.Buffer
		sum, err := report.Write(&buf, j, report.Options{MaxImageBytes: int64(len(pic) * 100)})
		if err != nil {
			t.Fatal(err)
		}
		html := buf.String()
		if c.want == "" {
			if sum.Images != 1 || !strings.Contains(html, `src="data:image/jpeg;base64,`) {
				t.Errorf("%q: not inlined (summary %+v)", c.image, sum)
			}
			continue
		}
		if sum.Images != 0 || sum.Missing != 1 || strings.Contains(html, "data:image") {
			t.Errorf("%q: inlined, want a placeholder (summary %+v)", c.image, sum)
		}
		if !strings.Contains(html, `<div class="missing"`) || !strings.Contains(html, c.want) {
			t.Errorf("%q: the placeholder does not say %q", c.image, c.want)
		}
	}
}

func TestLongText(t *testing.T) {
	long := strings.Repeat("0123456789", 1000) // 10,000 bytes on one line
	j := &report.Journal{Entries: []journal.Entry{{Event: journal.KindActed, Step: 1, Tool: "read_page", Result: long}}}
	var buf bytes.Buffer
	if _, err := report.Write(&buf, j, report.Options{MaxText: 4000}); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	if !strings.Contains(html, `<details class="more">`) || !strings.Contains(html, "(6,000 more bytes not shown)") {
		t.Error("a long result is not shown as a preview with the rest cut")
	}
	if strings.Contains(html, long[:4001]) {
		t.Error("more than MaxText bytes of the result are on the page")
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := writeJournal(t, dir, 16, 9)
	sum, err := report.WriteFile(path, "", report.Options{Title: "my run"})
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run.html")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != sum.Bytes || !bytes.Contains(b, []byte("<title>my run</title>")) {
		t.Errorf("%s: %d bytes (summary says %d), title missing?", out, len(b), sum.Bytes)
	}
	if _, err := report.WriteFile(path, path, report.Options{}); err == nil {
		t.Error("WriteFile overwrote the journal with its report")
	}
	if _, err := report.WriteFile(path, filepath.Join(dir, "no", "such", "dir.html"), report.Options{}); err == nil {
		t.Error("WriteFile into a missing directory did not fail")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("a temp file was left behind: %s", e.Name())
		}
	}
}

// BenchmarkWrite renders the five-step test run with 1280×720
// screenshots, the size of surf's own.
func BenchmarkWrite(b *testing.B) {
	j, err := report.Read(writeJournal(b, b.TempDir(), 1280, 720))
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for b.Loop() {
		sum, err := report.Write(io.Discard, j, report.Options{})
		if err != nil {
			b.Fatal(err)
		}
		size = sum.Bytes
	}
	b.ReportMetric(float64(size), "page-bytes")
}

// TestTakenOver: a takeover between steps is shown as one, with the note
// the model got, not as an unknown entry.
func TestTakenOver(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := journal.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []journal.Entry{
		{Time: at(0), Event: journal.KindRunStarted, Task: "log in"},
		{Time: at(100), Event: journal.KindTakenOver, Step: 1, Message: "The user took over the browser for 42s and handed it back.", Duration: journal.Duration(42 * time.Second)},
		{Time: at(200), Event: journal.KindEnded, EndReason: journal.EndAnswered, Answer: "done", Steps: 1},
	} {
		if err := j.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	html, _ := render(t, path)
	for _, want := range []string{"taken over", "The user took over the browser for 42s and handed it back."} {
		if !strings.Contains(html, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(html, "ev-other") {
		t.Error("the takeover is shown as an unknown entry")
	}
}
