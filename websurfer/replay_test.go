package websurfer

// Replay scenarios: whole agent runs, recorded once from the fixture sites
// under ../testdata/replay/<name>/site with a scripted model, then replayed
// by every `go test` from the recording alone: pages from site.har, model
// replies from model.json, in a real browser, with no network and no
// model. The run's journal, redacted of what changes between runs (times,
// durations, call ids, image paths, the session's machine details), must
// equal journal.golden.jsonl.
//
// Re-record after changing a site, a script, the prompts, the tools or the
// observation format (anything the model sees):
//
//	go generate ./websurfer
//
// which runs `go test -run '^TestReplayScenarios$' -record`: for each
// scenario it serves the site on 127.0.0.1:<port> (pinned in
// scenario.yaml, so that re-recording keeps the URLs), runs the task
// against the scripted model (script.yaml, whose expectations must hold),
// writes site.har and model.json, then replays them and writes the golden
// journal. `-update` rewrites only the golden journals.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"gopkg.in/yaml.v3"
)

//go:generate go test -run ^TestReplayScenarios$ -record

var record = flag.Bool("record", false, "re-record the replay scenarios under ../testdata/replay (pages, model replies and golden journals) and the perception fixtures' CDP payloads under ../perception/testdata/recorded")

// replayDir holds the scenarios.
const replayDir = "../testdata/replay"

// replayModel is the model name the scenarios are recorded with.
const replayModel = "replay-model"

// scenario is a scenario.yaml.
type scenario struct {
	dir  string
	name string

	Task     string    `yaml:"task"`
	Port     int       `yaml:"port"`
	Start    string    `yaml:"start"`  // path of the start page; empty starts blank
	Search   string    `yaml:"search"` // path of the search engine, with %s
	Policy   yaml.Node `yaml:"policy"` // a policy file's content
	MaxSteps int       `yaml:"max_steps"`
}

func (sc *scenario) origin() string { return fmt.Sprintf("http://127.0.0.1:%d", sc.Port) }

func loadScenarios(t *testing.T) []*scenario {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(replayDir, "*", "scenario.yaml"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios under %s (%v)", replayDir, err)
	}
	var out []*scenario
	for _, p := range dirs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sc := &scenario{dir: filepath.Dir(p), name: filepath.Base(filepath.Dir(p))}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(sc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if sc.Task == "" || sc.Port == 0 || sc.MaxSteps == 0 {
			t.Fatalf("%s: task, port and max_steps are required", p)
		}
		out = append(out, sc)
	}
	return out
}

// replayRun is what one run of a scenario gave.
type replayRun struct {
	journal  []byte // redacted, one JSON object per line
	err      error  // the run's runtime error, if any
	left     int    // recorded model replies not used
	answer   string
	denials  []sandbox.Denial
	lastText string // the last observation's text
}

// runScenario runs sc in a fresh session of the shared browser. With
// recordTo set it records: pages come from the live fixture server and the
// model is the scripted fake; recordTo.har and recordTo.model receive the
// recordings. Otherwise it replays har and cassette.
func runScenario(t *testing.T, sc *scenario, har, cassette string, recording bool) replayRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	data, err := yaml.Marshal(&sc.Policy)
	if err != nil {
		t.Fatal(err)
	}
	pcfg, err := policy.LoadBytes(sc.name+" policy", data, policy.LoadOptions{})
	if err != nil {
		t.Fatalf("%s policy: %v", sc.name, err)
	}
	pol, err := policy.New(pcfg)
	if err != nil {
		t.Fatalf("%s policy: %v", sc.name, err)
	}
	scfg := sandbox.SessionConfig{Policy: pol}
	mcfg := llm.Config{Model: replayModel, MaxRetries: -1}
	var fake *fakeopenai.Server
	if recording {
		scfg.RecordHAR = har
		script, err := fakeopenai.Load(filepath.Join(sc.dir, "script.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		fake = fakeopenai.New(script)
		defer fake.Close()
		mcfg.BaseURL, mcfg.Record = fake.URL(), cassette
	} else {
		scfg.ReplayHAR = har
		mcfg.Replay = cassette
	}
	sess, err := browsertest.Sandbox(t).NewSession(ctx, scfg)
	if err != nil {
		t.Fatalf("opening the session: %v", err)
	}
	defer sess.Close()
	model, err := llm.New(ctx, mcfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Session: sess, Model: model, ModelName: replayModel}
	if sc.Search != "" {
		cfg.SearchURL = sc.origin() + sc.Search
	}
	s, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	jpath := filepath.Join(t.TempDir(), "journal.jsonl")
	j, err := journal.Open(jpath, pol.Redact)
	if err != nil {
		t.Fatal(err)
	}
	opts := RunOptions{MaxSteps: sc.MaxSteps, Journal: j}
	if sc.Start != "" {
		opts.StartURL = sc.origin() + sc.Start
	}
	var out replayRun
	for st, err := range s.Run(ctx, sc.Task, opts) {
		if err != nil {
			out.err = err
		}
		if st != nil {
			if st.Observation != nil {
				out.lastText = st.Observation.Text()
			}
			if st.Done {
				out.answer = st.Answer
			}
		}
	}
	if err := j.Close(); err != nil {
		t.Fatalf("closing the journal: %v", err)
	}
	out.left = model.Unreplayed()
	out.denials = sess.TakeDenials()
	if err := s.Close(); err != nil {
		t.Errorf("closing the surfer: %v", err)
	}
	if err := sess.Close(); err != nil {
		t.Fatalf("closing the session: %v", err)
	}
	if fake != nil {
		if err := fake.Err(); err != nil {
			t.Fatalf("the scripted model's expectations failed while recording %s: %v", sc.name, err)
		}
	}
	entries, err := journal.Read(jpath)
	if err != nil {
		t.Fatalf("reading the journal: %v", err)
	}
	out.journal = redactJournal(t, entries)
	return out
}

// redactJournal writes entries as canonical JSON lines without what
// changes from one run to the next.
func redactJournal(t *testing.T, entries []journal.Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range entries {
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "time")
		delete(m, "duration")
		if m["event"] == string(journal.KindObserved) {
			// The data fence's random nonce is one to three tokens.
			delete(m, "tokens")
		}
		if _, ok := m["image"]; ok {
			m["image"] = "<image>"
		}
		if calls, ok := m["calls"].([]any); ok {
			for _, c := range calls {
				if c, ok := c.(map[string]any); ok && c["id"] != nil {
					c["id"] = "<id>"
				}
			}
		}
		if cfg, ok := m["config"].(map[string]any); ok {
			// The session's paths, ids and browser build are the machine's.
			delete(cfg, "session")
		}
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

// journalDiff compares two redacted journals and names the first step
// where they part.
func journalDiff(want, got []byte) string {
	wl := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	gl := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w == g {
			continue
		}
		where := entryPlace(w)
		if where == "" {
			where = entryPlace(g)
		}
		return fmt.Sprintf("journal differs from the golden at line %d, %s:\n- golden: %s\n+ got:    %s", i+1, where, orNone(w), orNone(g))
	}
	return ""
}

// entryPlace describes a journal line as "step N (event)".
func entryPlace(line string) string {
	var e struct {
		Step  int    `json:"step"`
		Event string `json:"event"`
	}
	if line == "" || json.Unmarshal([]byte(line), &e) != nil {
		return ""
	}
	if e.Step == 0 {
		return fmt.Sprintf("before step 1 (%s)", e.Event)
	}
	return fmt.Sprintf("step %d (%s)", e.Step, e.Event)
}

func orNone(s string) string {
	if s == "" {
		return "(nothing)"
	}
	return s
}

func TestReplayScenarios(t *testing.T) {
	scenarios := loadScenarios(t)
	if len(scenarios) < 5 {
		t.Errorf("want at least 5 replay scenarios, have %d", len(scenarios))
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			har := filepath.Join(sc.dir, "site.har")
			cassette := filepath.Join(sc.dir, "model.json")
			golden := filepath.Join(sc.dir, "journal.golden.jsonl")
			if *record {
				recordScenario(t, sc, har, cassette)
			}
			run := runScenario(t, sc, har, cassette, false)
			if run.err != nil {
				t.Errorf("replaying %s: %v", sc.name, run.err)
			}
			if run.left != 0 {
				t.Errorf("replaying %s: %d recorded model replies were not asked for", sc.name, run.left)
			}
			if run.answer == "" {
				t.Errorf("replaying %s: the run did not end with an answer", sc.name)
			}
			for _, d := range run.denials {
				if d.Layer == sandbox.LayerReplay {
					t.Errorf("replaying %s: a request is not in the recording: %s", sc.name, d.Decision.Reason)
				}
			}
			if (*record || *update) && !t.Failed() {
				if err := os.WriteFile(golden, run.journal, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (record the scenario with go generate ./websurfer)", err)
			}
			if d := journalDiff(want, run.journal); d != "" {
				t.Errorf("%s: %s", sc.name, d)
			}
		})
	}
}

// recordScenario records sc afresh from its site and script.
func recordScenario(t *testing.T, sc *scenario, har, cassette string) {
	t.Helper()
	site := filepath.Join(sc.dir, "site")
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", sc.Port))
	if err != nil {
		t.Fatalf("serving %s on its pinned port: %v", sc.name, err)
	}
	srv := &http.Server{Handler: siteHandler(site, nil)}
	go srv.Serve(ln)
	defer srv.Close()

	tmp := t.TempDir()
	tmpHAR, tmpCassette := filepath.Join(tmp, "site.har"), filepath.Join(tmp, "model.json")
	run := runScenario(t, sc, tmpHAR, tmpCassette, true)
	if run.err != nil {
		t.Fatalf("recording %s: %v", sc.name, run.err)
	}
	if run.answer == "" {
		t.Fatalf("recording %s: the run did not end with an answer", sc.name)
	}
	for _, pair := range [][2]string{{tmpHAR, har}, {tmpCassette, cassette}} {
		data, err := os.ReadFile(pair[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pair[1], data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// siteHandler serves a fixture site: /dir/ is /dir/index.html, a path
// without an extension is that path plus .html, and any method gets the
// file (a form's POST gets its result page). hits, if set, counts
// requests.
func siteHandler(root string, hits *atomic.Int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		p := path.Clean("/" + r.URL.Path)
		if strings.HasSuffix(r.URL.Path, "/") {
			p = path.Join(p, "index.html")
		}
		if path.Ext(p) == "" {
			p += ".html"
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ct := "text/html; charset=utf-8"
		if path.Ext(p) != ".html" {
			ct = "application/octet-stream"
		}
		w.Header().Set("Content-Type", ct)
		w.Header().Set("Cache-Control", "no-store")
		w.Write(data)
	})
}

// TestReplayDetectsChange changes one byte of one recorded page in a copy
// of a scenario: the replay must fail, and the report must name the step
// where the run parted from the golden.
func TestReplayDetectsChange(t *testing.T) {
	var sc *scenario
	for _, s := range loadScenarios(t) {
		if s.name == "paginate" {
			sc = s
		}
	}
	if sc == nil {
		t.Fatal("no paginate scenario")
	}
	dir := t.TempDir()
	har := filepath.Join(dir, "site.har")
	cassette := filepath.Join(dir, "model.json")
	copyFile(t, filepath.Join(sc.dir, "model.json"), cassette)
	// Page 2 of the catalogue is what the model sees at step 2.
	n := changeHARByte(t, filepath.Join(sc.dir, "site.har"), har, "/catalog/2.html", "Pepper mill: 24.00", "Pepper mill: 25.00")
	if n != 1 {
		t.Fatalf("changed %d recorded responses, want 1", n)
	}
	run := runScenario(t, sc, har, cassette, false)
	want, err := os.ReadFile(filepath.Join(sc.dir, "journal.golden.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	d := journalDiff(want, run.journal)
	if d == "" {
		t.Fatal("a changed page replayed exactly like the golden")
	}
	t.Logf("as expected:\n%s\nrun error: %v", d, run.err)
	if !strings.Contains(d, "step 2 ") {
		t.Errorf("the diff does not name step 2, where the changed page is seen:\n%s", d)
	}
	var mm *llm.MismatchError
	if !errors.As(run.err, &mm) {
		t.Fatalf("the run did not fail on the model request: %v", run.err)
	}
	if !strings.Contains(mm.Got, "25.00") {
		t.Errorf("the mismatch does not show the changed text: %v", mm)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// changeHARByte copies the HAR from to, with old replaced by repl (one
// byte apart) in the body of the responses to URLs ending in suffix, and
// returns how many responses it changed.
func changeHARByte(t *testing.T, from, to, suffix, old, repl string) int {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	var har map[string]any
	if err := json.Unmarshal(data, &har); err != nil {
		t.Fatal(err)
	}
	changed := 0
	entries, _ := har["log"].(map[string]any)["entries"].([]any)
	for _, e := range entries {
		e := e.(map[string]any)
		u, _ := e["request"].(map[string]any)["url"].(string)
		if !strings.HasSuffix(u, suffix) {
			continue
		}
		c := e["response"].(map[string]any)["content"].(map[string]any)
		text, _ := c["text"].(string)
		b64 := c["encoding"] == "base64"
		body := []byte(text)
		if b64 {
			if body, err = base64.StdEncoding.DecodeString(text); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Contains(body, []byte(old)) {
			continue
		}
		body = bytes.Replace(body, []byte(old), []byte(repl), 1)
		if b64 {
			c["text"] = base64.StdEncoding.EncodeToString(body)
		} else {
			c["text"] = string(body)
		}
		changed++
	}
	out, err := json.Marshal(har)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return changed
}

// TestReplayNotInRecording records a page whose script asks for a fresh
// URL on each load (a cache-buster) and replays it with the origin still
// listening: the observation says "not in recording" for the request and
// for a page the recording lacks, and the origin sees no request at all.
func TestReplayNotInRecording(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "index.html"), []byte(`<!doctype html><title>Live prices</title>
<h1>Live prices</h1><p id="p">Prices as of the last load.</p><a href="/more.html">More</a>
<script>fetch('/prices.json?t=' + Date.now() + Math.random()).catch(() => {});</script>`), 0o644)
	os.WriteFile(filepath.Join(root, "prices.json"), []byte(`{"tea": 3}`), 0o644)
	os.WriteFile(filepath.Join(root, "more.html"), []byte(`<!doctype html><title>More</title><p>More prices.</p>`), 0o644)
	var hits atomic.Int64
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: siteHandler(root, &hits)}
	go srv.Serve(ln)
	defer srv.Close()
	origin := "http://" + ln.Addr().String()
	pol := policy.MustNew(policy.Config{Allow: []policy.HostRule{mustHostRule(t, ln.Addr().String())}})
	har := filepath.Join(t.TempDir(), "site.har")

	// Record the home page only.
	ctx := context.Background()
	sess, err := browsertest.Sandbox(t).NewSession(ctx, sandbox.SessionConfig{Policy: pol, RecordHAR: har})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, Config{Session: sess})
	if err != nil {
		sess.Close()
		t.Fatal(err)
	}
	if _, err := s.VisitURL(ctx, origin+"/"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	recorded := hits.Load()
	if recorded < 2 {
		t.Fatalf("recording made %d requests, want the page and its fetch", recorded)
	}

	// Replay with the origin still up.
	sess = browsertest.Session(t, sandbox.SessionConfig{Policy: pol, ReplayHAR: har})
	s = newSurfer(t, Config{Session: sess})
	res, err := s.VisitURL(ctx, origin+"/")
	if err != nil {
		t.Fatal(err)
	}
	// The fetch may be refused after the page settles: it is reported by
	// the observation after the refusal.
	text := res.Text()
	for i := 0; i < 3 && !strings.Contains(text, "not in recording"); i++ {
		text += "\n" + observe(t, s).Text()
	}
	if !strings.Contains(text, "Live prices") {
		t.Errorf("the recorded page did not replay:\n%s", text)
	}
	if !strings.Contains(text, "not in recording") || !strings.Contains(text, "/prices.json?t=") {
		t.Errorf("the observation does not report the fetch missing from the recording:\n%s", text)
	}
	if res, err = s.VisitURL(ctx, origin+"/more.html"); err != nil {
		t.Fatal(err)
	}
	if text := res.Text(); !strings.Contains(text, "blocked: not in recording: "+origin+"/more.html") {
		t.Errorf("the observation does not report the page missing from the recording:\n%s", text)
	}
	if n := hits.Load() - recorded; n != 0 {
		t.Errorf("the replay sent %d requests to the origin", n)
	}
}
