package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/policy"
)

// harJSON builds a HAR document from entries written as Go values.
func harJSON(t testing.TB, entries ...any) []byte {
	t.Helper()
	if entries == nil {
		entries = []any{}
	}
	b, err := marshalJSON(map[string]any{"log": map[string]any{
		"version": "1.2",
		"creator": map[string]any{"name": "Playwright", "version": "1.52.0"},
		"pages":   []any{map[string]any{"id": "page@1", "title": "<Shop & co>"}, map[string]any{"id": "page@2", "title": "s3cret-value"}},
		"entries": entries,
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type hdr = map[string]string

func entry(method, url string, status int, reqHeaders, respHeaders []hdr, content map[string]any) map[string]any {
	if reqHeaders == nil {
		reqHeaders = []hdr{}
	}
	if respHeaders == nil {
		respHeaders = []hdr{}
	}
	if content == nil {
		content = map[string]any{"size": 0, "mimeType": "text/plain", "text": ""}
	}
	return map[string]any{
		"request":  map[string]any{"method": method, "url": url, "headers": reqHeaders},
		"response": map[string]any{"status": status, "headers": respHeaders, "content": content},
	}
}

func text(s string) map[string]any {
	return map[string]any{"size": len(s), "mimeType": "text/html", "text": s}
}

func withPost(e map[string]any, body, contentType string) map[string]any {
	req := e["request"].(map[string]any)
	req["postData"] = map[string]any{"mimeType": contentType, "text": body}
	req["headers"] = append(req["headers"].([]hdr), hdr{"name": "Content-Type", "value": contentType})
	return e
}

func TestWriteRecording(t *testing.T) {
	defer func(e, tot int) { harEntryLimit, harTotalLimit = e, tot }(harEntryLimit, harTotalLimit)
	harEntryLimit, harTotalLimit = 3000, 6000
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{{Host: "a.test"}},
		Secrets: []policy.Secret{{Name: "pw", Value: "s3cret-value", Hosts: []policy.HostRule{{Host: "a.test"}}}},
	})
	fulfilled := entry("GET", "http://a.test/popup", 200, nil, nil, text("<script>location.replace()</script>"))
	fulfilled["_wasFulfilled"] = true
	failed := entry("GET", "http://a.test/refused", -1, nil, nil, map[string]any{"size": -1, "mimeType": "x-unknown"})
	cut := entry("GET", "http://a.test/cut", 200, nil, nil, map[string]any{"size": -1, "mimeType": "text/html"})
	aborted := entry("GET", "http://a.test/aborted", 200, nil, nil, text("half"))
	aborted["response"].(map[string]any)["_failureText"] = "net::ERR_ABORTED"
	raw := harJSON(t,
		entry("GET", "http://a.test/", 200,
			[]hdr{{"name": "Accept", "value": "*/*"}, {"name": "Proxy-Authorization", "value": "Basic c3VyZjpzZWNyZXQ="}, {"name": "proxy-connection", "value": "keep-alive"}},
			[]hdr{{"name": "Content-Type", "value": "text/html"}},
			text("<p>hello & welcome, s3cret-value</p>")),
		fulfilled, failed, cut, aborted,
		entry("GET", "http://a.test/r", 302, nil, []hdr{{"name": "Location", "value": "/"}}, map[string]any{"size": -1, "mimeType": "text/html"}),
		entry("GET", "http://"+proxyCheckHost+"/token", 200, nil, nil, text("surf proxy ok")),
		entry("GET", "http://a.test/big", 200, nil, nil, text(strings.Repeat("x", 4000))),
		entry("GET", "http://a.test/one", 200, nil, nil, text(strings.Repeat("1", 2000))),
		entry("GET", "http://a.test/two", 200, nil, nil, text(strings.Repeat("2", 2000))),
		entry("GET", "http://a.test/three", 200, nil, nil, text(strings.Repeat("3", 2000))),
	)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "raw.har"), filepath.Join(dir, "site.har")
	if err := os.WriteFile(src, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := writeRecording(dst, src, pol)
	if err != nil {
		t.Fatal(err)
	}
	if st.kept != 4 || st.fulfilled != 1 || st.failed != 3 || st.tooBig != 1 || st.overTotal != 1 {
		t.Errorf("stats %+v; want 4 kept (/, /r, /one, /two), 1 fulfilled, 3 failed, 1 too big, 1 over the total", st)
	}
	out, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Log struct {
			Version string            `json:"version"`
			Creator map[string]string `json:"creator"`
			Pages   []map[string]any  `json:"pages"`
			Comment string            `json:"comment"`
			Entries []harHead         `json:"entries"`
		} `json:"log"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("the recording is not JSON: %v\n%s", err, out)
	}
	var urls []string
	for _, e := range doc.Log.Entries {
		urls = append(urls, e.Request.URL)
		for _, h := range e.Request.Headers {
			if strings.HasPrefix(strings.ToLower(h.Name), "proxy-") {
				t.Errorf("%s keeps request header %s", e.Request.URL, h.Name)
			}
		}
	}
	if fmt.Sprint(urls) != "[http://a.test/ http://a.test/r http://a.test/one http://a.test/two]" {
		t.Errorf("kept %v", urls)
	}
	if doc.Log.Version != "1.2" || doc.Log.Creator["name"] != "Playwright" || len(doc.Log.Pages) != 2 {
		t.Errorf("the log's other members were not kept: %+v", doc.Log)
	}
	if !strings.Contains(doc.Log.Comment, "left out 2 responses") {
		t.Errorf("comment %q", doc.Log.Comment)
	}
	for _, want := range []string{"<p>hello & welcome, <secret:pw></p>", `"title": "<Shop & co>"`, "\n      {\n        \"request\""} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the recording lacks %q", want)
		}
	}
	if bytes.Contains(out, []byte("s3cret-value")) {
		t.Error("the recording holds the secret")
	}
	x, err := readHARIndex(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if x.info.Entries != 4 || x.info.Comment != doc.Log.Comment || fmt.Sprint(x.info.Origins) != "[http://a.test]" {
		t.Errorf("info %+v", x.info)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".surf-har-*")); len(left) != 0 {
		t.Errorf("temp files left: %v", left)
	}

	// An empty recording is still a HAR.
	if err := os.WriteFile(src, harJSON(t), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := writeRecording(dst, src, policy.MustNew(policy.Config{})); err != nil {
		t.Fatal(err)
	}
	if info, err := InspectHAR(dst); err != nil || info.Entries != 0 {
		t.Errorf("empty recording: %+v, %v", info, err)
	}
}

func TestHARLookup(t *testing.T) {
	gz := []hdr{{"name": "Content-Type", "value": "image/png"}, {"name": "Content-Encoding", "value": "gzip"},
		{"name": "Content-Length", "value": "3"}, {"name": "Set-Cookie", "value": "a=1"}, {"name": "set-cookie", "value": "b=2"},
		{"name": "Vary", "value": "Accept"}, {"name": "Vary", "value": "Origin"}}
	raw := harJSON(t,
		entry("GET", "http://a.test/a", 200, nil, nil, text("a")),
		entry("GET", "http://a.test/bin", 200, nil, gz, map[string]any{"size": 4, "mimeType": "image/png",
			"encoding": "base64", "text": base64.StdEncoding.EncodeToString([]byte{0x89, 0xff, 0x00, 0x80})}),
		entry("GET", "http://a.test/r1", 302, nil, []hdr{{"name": "location", "value": "/r2"}}, nil),
		entry("GET", "http://a.test/r2", 301, nil, []hdr{{"name": "Location", "value": "http://b.test/x?y=1"}}, nil),
		entry("GET", "http://b.test/x?y=1", 200, nil, nil, text("end of chain")),
		withPost(entry("POST", "http://a.test/form", 303, nil, []hdr{{"name": "Location", "value": "thanks"}}, nil), "q=1", "application/x-www-form-urlencoded"),
		withPost(entry("POST", "http://a.test/form", 200, nil, nil, text("two")), "q=2", "application/x-www-form-urlencoded"),
		entry("GET", "http://a.test/thanks", 200, nil, nil, text("thanks")),
		withPost(entry("POST", "http://a.test/keep", 307, nil, []hdr{{"name": "Location", "value": "/kept"}}, nil), "k", "text/plain"),
		withPost(entry("POST", "http://a.test/kept", 200, nil, nil, text("kept a POST")), "k", "text/plain"),
		withPost(entry("POST", "http://a.test/up", 200, nil, nil, text("uploaded")),
			"--AAA\r\ncontent\r\n--AAA--", "multipart/form-data; boundary=AAA"),
		entry("GET", "http://a.test/h", 200, []hdr{{"name": "X-A", "value": "1"}}, nil, text("one")),
		entry("GET", "http://a.test/h", 200, []hdr{{"name": "X-A", "value": "2"}}, nil, text("two")),
		entry("GET", "http://a.test/c1", 302, nil, []hdr{{"name": "Location", "value": "/c2"}}, nil),
		entry("GET", "http://a.test/c2", 302, nil, []hdr{{"name": "Location", "value": "/c1"}}, nil),
		entry("GET", "http://a.test/304", 304, nil, nil, nil),
		entry("GET", "http://a.test/failed", -1, nil, nil, nil),
	)
	x, err := readHARIndex(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if x.info.Entries != 17 || fmt.Sprint(x.info.Origins) != "[http://a.test http://b.test]" {
		t.Errorf("info %+v", x.info)
	}
	for _, c := range []struct {
		method, url string
		headers     hdr
		post        string
		want        string // body, "" for not found
		hops        string
	}{
		{"GET", "http://a.test/a", nil, "", "a", "[]"},
		{"GET", "http://a.test/a#frag", nil, "", "a", "[]"},
		{"HEAD", "http://a.test/a", nil, "", "", ""},
		{"GET", "http://a.test/nope", nil, "", "", ""},
		{"GET", "http://a.test/r1", nil, "", "end of chain", "[http://a.test/r2 http://b.test/x?y=1]"},
		{"POST", "http://a.test/form", hdr{"content-type": "application/x-www-form-urlencoded"}, "q=1", "thanks", "[http://a.test/thanks]"},
		{"POST", "http://a.test/form", hdr{"content-type": "application/x-www-form-urlencoded"}, "q=2", "two", "[]"},
		{"POST", "http://a.test/form", hdr{"content-type": "application/x-www-form-urlencoded"}, "q=3", "", ""},
		{"POST", "http://a.test/keep", nil, "k", "kept a POST", "[http://a.test/kept]"},
		{"POST", "http://a.test/up", hdr{"content-type": "multipart/form-data; boundary=BBB"}, "--BBB\r\ncontent\r\n--BBB--", "uploaded", "[]"},
		{"POST", "http://a.test/up", hdr{"content-type": "multipart/form-data; boundary=BBB"}, "--BBB\r\nother\r\n--BBB--", "", ""},
		{"GET", "http://a.test/h", nil, "", "one", "[]"},
		{"GET", "http://a.test/h", hdr{"x-a": "2"}, "", "two", "[]"},
		{"GET", "http://a.test/c1", nil, "", "", ""},
		{"GET", "http://a.test/304", nil, "", "", ""},
		{"GET", "http://a.test/failed", nil, "", "", ""},
	} {
		var post []byte
		if c.post != "" {
			post = []byte(c.post)
		}
		ans, err := x.lookup(c.method, c.url, c.headers, post)
		if c.want == "" {
			if ans != nil {
				t.Errorf("%s %s: found %+v; want nothing", c.method, c.url, ans.entry)
			}
			if (c.url == "http://a.test/c1") != (err != nil) {
				t.Errorf("%s %s: error %v", c.method, c.url, err)
			}
			continue
		}
		if ans == nil || err != nil {
			t.Errorf("%s %s: not found (%v); want %q", c.method, c.url, err, c.want)
			continue
		}
		_, _, body, err := ans.entry.response()
		if err != nil || string(body) != c.want || fmt.Sprint(ans.hops) != c.hops {
			t.Errorf("%s %s: %q via %v (%v); want %q via %s", c.method, c.url, body, ans.hops, err, c.want, c.hops)
		}
	}

	ans, _ := x.lookup("GET", "http://a.test/bin", nil, nil)
	status, headers, body, err := ans.entry.response()
	if err != nil || status != 200 || !bytes.Equal(body, []byte{0x89, 0xff, 0x00, 0x80}) {
		t.Errorf("binary body: %d %x %v", status, body, err)
	}
	want := map[string]string{"content-type": "image/png", "set-cookie": "a=1\nb=2", "vary": "Accept, Origin"}
	if fmt.Sprint(headers) != fmt.Sprint(want) {
		t.Errorf("headers %v; want %v (no length or encoding: the body is whole and decoded)", headers, want)
	}
}

func TestLookupReportsEveryHop(t *testing.T) {
	// A chain that leaves and comes back: only the middle hop is denied.
	raw := harJSON(t,
		entry("GET", "http://a.test/go", 302, nil, []hdr{{"name": "Location", "value": "http://evil.test/bounce"}}, nil),
		entry("GET", "http://evil.test/bounce", 302, nil, []hdr{{"name": "Location", "value": "http://a.test/back"}}, nil),
		entry("GET", "http://a.test/back", 200, nil, nil, text("back")),
	)
	x, err := readHARIndex(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	ans, err := x.lookup("GET", "http://a.test/go", nil, nil)
	if err != nil || ans == nil || fmt.Sprint(ans.hops) != "[http://evil.test/bounce http://a.test/back]" {
		t.Fatalf("lookup: %+v, %v", ans, err)
	}
}

func TestWalkHARRejects(t *testing.T) {
	for _, in := range []string{``, `[]`, `{}`, `{"log": []}`, `{"log": {}}`, `{"log": {"entries": {}}}`,
		`{"log": {"entries": [}}`, `{"log": {"entries": []}`, `{"log": {"entries": [1]}}`, `null`} {
		if _, err := readHARIndex(strings.NewReader(in)); err == nil {
			t.Errorf("%q: read as a HAR", in)
		}
	}
	if x, err := readHARIndex(strings.NewReader(`{"x": 1, "log": {"comment": "c", "entries": [null]}}`)); err != nil || x.info.Entries != 1 || x.info.Comment != "c" {
		t.Errorf("a minimal HAR: %+v, %v", x, err)
	}
}

// FuzzHAR: reading any input as a recording never panics, and what
// writeRecording makes of a readable input reads back.
func FuzzHAR(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "site.har")); err == nil {
		f.Add(b)
	}
	f.Add(harJSON(f, entry("GET", "http://a.test/r", 302, nil, []hdr{{"name": "Location", "value": "//b.test/x"}}, nil),
		withPost(entry("POST", "http://a.test/f", 200, nil, nil, text("x")), "a=1", "multipart/form-data; boundary=z")))
	f.Add([]byte(`{"log":{"entries":[{"request":{"method":"GET","url":"http://a.test/"},"response":{"status":200,"content":{"text":"!!","encoding":"base64"}}}]}}`))
	f.Add([]byte(`{"log":{"entries":[]},"log":{"entries":[null]}}`))
	pol := policy.MustNew(policy.Config{Secrets: []policy.Secret{{Name: "s", Value: "x", Hosts: []policy.HostRule{{Host: "a.test"}}}}})
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := readHARIndex(bytes.NewReader(data))
		if err != nil {
			return
		}
		for k, es := range x.byKey {
			method, url, _ := strings.Cut(k, " ")
			x.lookup(method, url, map[string]string{"content-type": "multipart/form-data; boundary=q"}, []byte("q"))
			for _, e := range es {
				e.response()
			}
		}
		dir := t.TempDir()
		src, dst := filepath.Join(dir, "raw"), filepath.Join(dir, "out")
		os.WriteFile(src, data, 0o600)
		if _, err := writeRecording(dst, src, pol); err != nil {
			return // entries the index skips can still be malformed for the writer
		}
		out, _ := os.ReadFile(dst)
		if !json.Valid(out) {
			t.Fatalf("writeRecording wrote invalid JSON:\n%s", out)
		}
		if _, err := readHARIndex(bytes.NewReader(out)); err != nil {
			t.Fatalf("writeRecording's output does not read back: %v\n%s", err, out)
		}
	})
}

func TestProxyOfflineRefusesEverything(t *testing.T) {
	site, hits := serveOn(t, "127.0.0.1", http.HandlerFunc(hello))
	p := newTestProxy(t, mustPolicy(t, "127.0.0.1"), nil, "", "", func(c *proxyConfig) {
		c.offline = true
		c.checkToken = "tok"
	})
	c := p.client("", "")
	code, body, h := get(t, c, site.URL+"/x?y=1")
	if code != http.StatusForbidden || h.Get("X-Surf-Denied") != RuleReplay || !strings.Contains(body, "not in recording: "+site.URL+"/x?y=1") {
		t.Errorf("GET through an offline proxy: %d %q %v", code, body, h)
	}
	canary, canaryHits := serveOn(t, "127.0.0.2", http.HandlerFunc(hello))
	if code, body, h := get(t, c, canary.URL+"/c"); code != http.StatusForbidden || h.Get("X-Surf-Denied") == RuleReplay || !strings.Contains(body, "denied") {
		t.Errorf("a request the policy denies: %d %q %v; want the policy's denial", code, body, h)
	}
	if code, body, _ := get(t, c, "http://"+proxyCheckHost+"/tok"); code != 200 || strings.TrimSpace(body) != "surf proxy ok" {
		t.Errorf("the reachability check: %d %q", code, body)
	}
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	target := site.Listener.Addr().String()
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	head, _ := io.ReadAll(io.LimitReader(conn, 512))
	if !bytes.HasPrefix(head, []byte("HTTP/1.1 403")) {
		t.Errorf("CONNECT through an offline proxy: %q", head)
	}
	if hits.Load()+canaryHits.Load() != 0 {
		t.Errorf("the offline proxy connected to the sites %d times", hits.Load()+canaryHits.Load())
	}
	ds := p.denied()
	if len(ds) != 3 || ds[1].Layer != LayerProxy || ds[1].Host != "127.0.0.2" {
		t.Fatalf("denials %+v; want the GET, the canary's (by the policy) and the CONNECT", ds)
	}
	ds = append(ds[:1], ds[2])
	for i, want := range []string{site.URL + "/x?y=1", target} {
		if d := ds[i]; d.Layer != LayerReplay || d.URL != want || d.Host != "127.0.0.1" || d.Decision.Rule != RuleReplay {
			t.Errorf("denial %d = %+v; want %s not in recording", i, d, want)
		}
	}
}

// benchHAR is a recording of n pages, each with a few subresources.
func benchHAR(b *testing.B, n int) []byte {
	var entries []any
	for i := range n {
		page := fmt.Sprintf("http://a.test/p%d", i)
		entries = append(entries,
			entry("GET", page, 200, []hdr{{"name": "Accept", "value": "text/html"}}, nil, text(strings.Repeat("<p>page</p>", 200))),
			entry("GET", page+".css", 200, nil, nil, text(strings.Repeat("p{}", 300))),
			entry("GET", page+".png", 200, nil, nil, map[string]any{"size": 3000, "mimeType": "image/png",
				"encoding": "base64", "text": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0x89}, 3000))}),
			entry("GET", page+"/r", 302, nil, []hdr{{"name": "Location", "value": page}}, nil))
	}
	return harJSON(b, entries...)
}

// BenchmarkHARIndex: reading a 1000-page recording for replay.
func BenchmarkHARIndex(b *testing.B) {
	raw := benchHAR(b, 1000)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := readHARIndex(bytes.NewReader(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHARLookup: answering one request (a redirect to a page) from
// a 1000-page recording, body decoded.
func BenchmarkHARLookup(b *testing.B) {
	x, err := readHARIndex(bytes.NewReader(benchHAR(b, 1000)))
	if err != nil {
		b.Fatal(err)
	}
	headers := map[string]string{"accept": "text/html"}
	i := 0
	for b.Loop() {
		ans, err := x.lookup("GET", fmt.Sprintf("http://a.test/p%d/r", i%1000), headers, nil)
		if err != nil || ans == nil {
			b.Fatal("not found", err)
		}
		if _, _, _, err := ans.entry.response(); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkWriteRecording: turning Playwright's HAR of 1000 pages into a
// recording.
func BenchmarkWriteRecording(b *testing.B) {
	raw := benchHAR(b, 1000)
	dir := b.TempDir()
	src, dst := filepath.Join(dir, "raw.har"), filepath.Join(dir, "site.har")
	if err := os.WriteFile(src, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	pol := policy.MustNew(policy.Config{})
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := writeRecording(dst, src, pol); err != nil {
			b.Fatal(err)
		}
	}
}
