package journal

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 23, 20, 0, 0, 0, time.UTC)

func boolp(b bool) *bool { return &b }

// sample is one entry of every kind, with every field the agent loop sets.
func sample() []Entry {
	return []Entry{
		{Time: t0, Event: KindRunStarted, Task: "Find the hours", Config: json.RawMessage(`{"model":"m","max_steps":6}`)},
		{Time: t0.Add(time.Second), Event: KindObserved, Step: 1, URL: "http://127.0.0.1:8080/", Title: "Home", Elements: 12, Tokens: 800, Image: "run-images/step-001-obs-001.jpg", Seq: 1},
		{Time: t0.Add(2 * time.Second), Event: KindReasoned, Step: 1, Content: "Looking.",
			Calls: []Call{{ID: "call_1_1", Tool: "click", Args: json.RawMessage(`{"target_id":3}`), Reasoning: "the link"}},
			Usage: &Usage{Prompt: 1500, Completion: 20, Total: 1520}},
		{Time: t0.Add(3 * time.Second), Event: KindGated, Step: 1, Tool: "click", Verdict: "ask", Rule: "actions[0]", Reason: "a purchase", Target: "http://127.0.0.1:8080/buy", Approved: boolp(false)},
		{Time: t0.Add(4 * time.Second), Event: KindActed, Step: 1, Tool: "click", Args: json.RawMessage(`{"target_id":3}`), Result: "clicked", Error: "", Duration: Duration(1234567 * time.Microsecond)},
		{Time: t0.Add(5 * time.Second), Event: KindCorrected, Step: 2, Tool: "click", Message: "the reply called no tool"},
		{Time: t0.Add(6 * time.Second), Event: KindRecovered, Step: 2, Message: "the browser was lost and relaunched"},
		{Time: t0.Add(7 * time.Second), Event: KindEnded, Step: 2, EndReason: EndAnswered, Answer: "10 to 2", Steps: 2,
			Usage: &Usage{Prompt: 3000, Completion: 40, Total: 3040}, Duration: Duration(7 * time.Second), Error: "x"},
	}
}

// wantLines is sample() as the journal writes it: the field order, the
// omitted zero values, the milliseconds with three decimals. Journals
// written before the journal had its own package read the same, and tools
// reading journals line by line see the same bytes.
const wantLines = `{"time":"2026-11-23T20:00:00Z","event":"run_started","task":"Find the hours","config":{"model":"m","max_steps":6}}
{"time":"2026-11-23T20:00:01Z","event":"observed","step":1,"url":"http://127.0.0.1:8080/","title":"Home","elements":12,"tokens":800,"image":"run-images/step-001-obs-001.jpg","seq":1}
{"time":"2026-11-23T20:00:02Z","event":"reasoned","step":1,"calls":[{"id":"call_1_1","tool":"click","args":{"target_id":3},"reasoning":"the link"}],"content":"Looking.","usage":{"prompt":1500,"completion":20,"total":1520}}
{"time":"2026-11-23T20:00:03Z","event":"gated","step":1,"tool":"click","verdict":"ask","rule":"actions[0]","reason":"a purchase","target":"http://127.0.0.1:8080/buy","approved":false}
{"time":"2026-11-23T20:00:04Z","event":"acted","step":1,"tool":"click","args":{"target_id":3},"result":"clicked","duration":1234.567}
{"time":"2026-11-23T20:00:05Z","event":"corrected","step":2,"tool":"click","message":"the reply called no tool"}
{"time":"2026-11-23T20:00:06Z","event":"recovered","step":2,"message":"the browser was lost and relaunched"}
{"time":"2026-11-23T20:00:07Z","event":"ended","step":2,"usage":{"prompt":3000,"completion":40,"total":3040},"error":"x","duration":7000.000,"end_reason":"answered","answer":"10 to 2","steps":2}
`

func TestWriteEncoding(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sample() {
		if err := w.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != wantLines {
		t.Errorf("the journal reads\n%s\nwant\n%s", b, wantLines)
	}
	got, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := sample(); !reflect.DeepEqual(got, want) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
}

func TestWriteSetsTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("X", 3600)) }
	w.Write(Entry{Event: KindEnded, EndReason: EndMaxSteps})
	w.Close()
	es, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || !es[0].Time.Equal(time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC)) || es[0].Time.Location() != time.UTC {
		t.Errorf("entries %+v; want one at 2030-01-02T02:04:05Z, in UTC", es)
	}
}

// TestWriteRedacts checks that every string an entry carries goes through
// the redact function, and that the caller's entry is left as it was.
func TestWriteRedacts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	w, err := Open(path, func(s string) string { return strings.ReplaceAll(s, "hunter2", "<secret:pw>") })
	if err != nil {
		t.Fatal(err)
	}
	const x = "hunter2"
	calls := []Call{{Tool: "input_text", Args: json.RawMessage(`{"text_value":"` + x + `"}`), Reasoning: "type " + x}}
	e := Entry{Event: KindActed, Task: x, Config: json.RawMessage(`{"k":"` + x + `"}`), URL: "http://h/?p=" + x, Title: x, Content: x,
		Calls: calls, Reason: x, Target: x, Args: json.RawMessage(`{"v":"` + x + `"}`), Result: x, Error: x, Message: x, Answer: x}
	if err := w.Write(e); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if strings.Contains(string(b), x) {
		t.Errorf("the journal holds the secret: %s", b)
	}
	if n := strings.Count(string(b), "secret:pw"); n != 14 {
		t.Errorf("%d placeholders; want one for each of the 14 strings: %s", n, b)
	}
	if !strings.Contains(string(calls[0].Args), x) || calls[0].Reasoning != "type "+x {
		t.Error("Write changed the caller's calls")
	}
}

func TestReadCutShort(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	lines := strings.SplitAfter(wantLines, "\n")
	cut := lines[0] + "\n" + lines[1] + lines[2][:40]
	if err := os.WriteFile(path, []byte(cut), 0o644); err != nil {
		t.Fatal(err)
	}
	es, err := Read(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4: ") {
		t.Fatalf("error %v; want one naming line 4 of %s", err, path)
	}
	if len(es) != 2 || es[0].Event != KindRunStarted || es[1].Event != KindObserved {
		t.Errorf("entries %+v; want the two before the cut line", es)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reading a missing journal: %v", err)
	}
}

func TestSaveImage(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(filepath.Join(dir, "runs", "run.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, c := range []struct {
		mime, want string
	}{
		{"image/png", filepath.Join("run-images", "step-002-obs-010.png")},
		{"image/jpeg", filepath.Join("run-images", "step-002-obs-010.jpg")},
	} {
		rel, err := w.SaveImage(2, 10, []byte("data "+c.mime), c.mime)
		if err != nil || rel != c.want {
			t.Errorf("SaveImage(%s) = %q, %v; want %q", c.mime, rel, err, c.want)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, "runs", rel)); err != nil || string(b) != "data "+c.mime {
			t.Errorf("the image beside the journal: %q, %v", b, err)
		}
	}
	if rel, err := w.SaveImage(3, 1, nil, "image/png"); rel != "" || err != nil {
		t.Errorf("SaveImage of no data = %q, %v; want nothing saved", rel, err)
	}
	if w.Path() != filepath.Join(dir, "runs", "run.jsonl") {
		t.Errorf("Path() = %q", w.Path())
	}
}

// TestNilWriter: a run without a journal passes a nil *Writer around.
func TestNilWriter(t *testing.T) {
	var w *Writer
	if err := w.Write(Entry{Event: KindObserved}); err != nil {
		t.Error(err)
	}
	if rel, err := w.SaveImage(1, 1, []byte("x"), "image/png"); rel != "" || err != nil {
		t.Errorf("SaveImage = %q, %v", rel, err)
	}
	if err := w.Close(); err != nil {
		t.Error(err)
	}
}

// TestWriteErrorReportedByClose: a failed write does not stop the run,
// but Close reports it.
func TestWriteErrorReportedByClose(t *testing.T) {
	w, err := Open(filepath.Join(t.TempDir(), "run.jsonl"), nil)
	if err != nil {
		t.Fatal(err)
	}
	w.f.Close() // the file goes away under the writer
	werr := w.Write(Entry{Event: KindObserved})
	if werr == nil {
		t.Fatal("a write to a closed file succeeded")
	}
	w.Write(Entry{Event: KindActed})
	if err := w.Close(); err != werr {
		t.Errorf("Close = %v; want the first write error %v", err, werr)
	}
}

func TestOpenFails(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(filepath.Join(file, "run.jsonl"), nil); err == nil || !strings.Contains(err.Error(), "journal") {
		t.Errorf("Open under a file: %v; want an error about the journal", err)
	}
}

func TestUsageAdd(t *testing.T) {
	u := Usage{Prompt: 1, Completion: 2, Total: 3}
	u.Add(Usage{Prompt: 10, Completion: 20, Total: 30})
	if u != (Usage{Prompt: 11, Completion: 22, Total: 33}) {
		t.Errorf("%+v", u)
	}
}

// FuzzRead reads arbitrary bytes as a journal: it never panics; it either
// returns one entry per non-empty line, or stops at a line it names, with
// the entries before it.
func FuzzRead(f *testing.F) {
	f.Add([]byte(wantLines))
	f.Add([]byte(wantLines[:len(wantLines)/2]))
	f.Add([]byte("\n\n{}\nnull\n"))
	f.Add([]byte(`{"event":"acted","duration":"12"}`))
	f.Add([]byte(`{"event":"acted","duration":1e308,"time":"0000-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"calls":[{"args":` + strings.Repeat("[", 100) + `}]}`))
	path := filepath.Join(f.TempDir(), "run.jsonl")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		es, err := Read(path)
		lines := strings.Split(string(data), "\n")
		nonEmpty := 0
		for i, l := range lines {
			if l == "" {
				continue
			}
			if err != nil && nonEmpty == len(es) {
				// the line Read stopped at
				if want := path + ":" + itoa(i+1) + ": "; !strings.HasPrefix(err.Error(), want) {
					t.Fatalf("error %q; want it to start %q", err, want)
				}
				return
			}
			nonEmpty++
		}
		if err != nil {
			t.Fatalf("error %v after reading every line", err)
		}
		if len(es) != nonEmpty {
			t.Fatalf("%d entries from %d non-empty lines", len(es), nonEmpty)
		}
	})
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestAddRedactor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	j, err := Open(path, func(s string) string { return strings.ReplaceAll(s, "hunter2", "<secret:pw>") })
	if err != nil {
		t.Fatal(err)
	}
	j.Write(Entry{Event: KindObserved, URL: "http://x/?q=plumviolet42&pw=hunter2"})
	j.AddRedactor(nil)
	j.AddRedactor(func(s string) string { return strings.ReplaceAll(s, "plumviolet42", "<typed-by-user>") })
	j.Write(Entry{Event: KindObserved, URL: "http://x/?q=plumviolet42&pw=hunter2", Args: json.RawMessage(`{"q":"plumviolet42"}`)})
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	es, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].URL != "http://x/?q=plumviolet42&pw=<secret:pw>" {
		t.Fatalf("before AddRedactor: %+v", es)
	}
	if es[1].URL != "http://x/?q=<typed-by-user>&pw=<secret:pw>" || strings.Contains(string(es[1].Args), "plumviolet42") {
		t.Errorf("after AddRedactor: %q %s", es[1].URL, es[1].Args)
	}
}

// TestOpenRefusesAnEarlierRun opens a journal where an earlier run's
// journal, or only its images, are: Open refuses with ErrExists and
// changes nothing; after Remove the path is free and nothing of the
// earlier run is left to mix with the new one.
func TestOpenRefusesAnEarlierRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	w, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Entry{Event: KindRunStarted, Task: "the first run"})
	img, err := w.SaveImage(1, 1, []byte("jpeg"), "image/jpeg")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)

	if err := Available(path); !errors.Is(err, ErrExists) {
		t.Errorf("Available on an earlier run: %v, want ErrExists", err)
	}
	if w, err := Open(path, nil); !errors.Is(err, ErrExists) {
		w.Close()
		t.Fatalf("Open on an earlier run: %v, want ErrExists", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) || len(before) == 0 {
		t.Errorf("the refused Open changed the earlier journal: %q, was %q", after, before)
	}
	if _, err := os.Stat(filepath.Join(dir, img)); err != nil {
		t.Errorf("the refused Open lost the earlier run's image: %v", err)
	}

	// The images alone (the journal removed by hand) still belong to a run.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if w, err := Open(path, nil); !errors.Is(err, ErrExists) {
		w.Close()
		t.Fatalf("Open beside an earlier run's images: %v, want ErrExists", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the refused Open created %s", path)
	}

	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := Available(path); err != nil {
		t.Fatalf("after Remove: %v", err)
	}
	w, err = Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, img)); !os.IsNotExist(err) {
		t.Errorf("the earlier run's image is beside the new journal (%v)", err)
	}
	if err := Remove(dir); err == nil {
		t.Error("Remove of a directory: no error")
	}
}

// BenchmarkStep times what the journal costs per step of a run: a step's
// entries (observed, reasoned, gated, acted), with and without the fsync
// at the step's end.
func BenchmarkStep(b *testing.B) {
	step := sample()[1:5]
	for _, sync := range []bool{false, true} {
		name := "nosync"
		if sync {
			name = "sync"
		}
		b.Run(name, func(b *testing.B) {
			w, err := Open(filepath.Join(b.TempDir(), "run.jsonl"), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			for b.Loop() {
				for _, e := range step {
					w.Write(e)
				}
				if sync {
					w.Sync()
				}
			}
		})
	}
}
