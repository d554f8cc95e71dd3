package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// A cassette file is JSON:
//
//	{
//	  "version": 1,
//	  "interactions": [
//	    {
//	      "request": {"method": "POST", "path": "/v1/chat/completions",
//	                  "fingerprint": {"model": "...", "tools": [...], "messages": [...]}},
//	      "response": {"status": 200, "header": {"Content-Type": "application/json"},
//	                   "body": {...the response JSON as received...}}
//	    }
//	  ]
//	}
//
// Requests are stored as their Fingerprint (images as type, size and hash,
// never their bytes); responses as status, Content-Type and body ("body"
// when it is JSON, "body_text" otherwise). A transport error is stored as
// "error". Secrets are replaced by "[REDACTED]" everywhere; request headers
// (where API keys travel) are not stored at all.

// CassetteVersion is the version of the cassette format written.
const CassetteVersion = 1

// Redacted replaces secrets in cassettes.
const Redacted = "[REDACTED]"

var (
	// ErrReplayMismatch is wrapped by *MismatchError.
	ErrReplayMismatch = errors.New("request does not match the cassette")
	// ErrCassetteExhausted is returned when a replayed run sends more
	// requests than were recorded.
	ErrCassetteExhausted = errors.New("cassette exhausted")
)

// Cassette is a recording of model traffic.
type Cassette struct {
	Version      int           `json:"version"`
	Interactions []Interaction `json:"interactions"`
}

// Interaction is one request and what answered it.
type Interaction struct {
	Request  RecordedRequest   `json:"request"`
	Response *RecordedResponse `json:"response,omitempty"`
	Error    string            `json:"error,omitempty"`
}

// RecordedRequest identifies a request.
type RecordedRequest struct {
	Method      string      `json:"method"`
	Path        string      `json:"path"`
	Fingerprint Fingerprint `json:"fingerprint"`
}

// RecordedResponse is a response as received, secrets scrubbed.
type RecordedResponse struct {
	Status   int               `json:"status"`
	Header   map[string]string `json:"header,omitempty"`
	Body     json.RawMessage   `json:"body,omitempty"`
	BodyText string            `json:"body_text,omitempty"`
}

func (r *RecordedResponse) body() []byte {
	if len(r.Body) > 0 {
		return r.Body
	}
	return []byte(r.BodyText)
}

// MismatchError reports a replayed request that differs from the next
// recorded one.
type MismatchError struct {
	Request  int    // 1-based number of the request in this run
	Field    string // e.g. "messages[5].content[0].text"
	Recorded string // quoted excerpts around the first difference
	Got      string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("replay request %d: %s differs: recorded %s, got %s", e.Request, e.Field, e.Recorded, e.Got)
}

func (e *MismatchError) Unwrap() error { return ErrReplayMismatch }

// LoadCassette reads a cassette file.
func LoadCassette(path string) (*Cassette, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("loading cassette: %w", err)
	}
	var c Cassette
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("loading cassette %s: %w", path, err)
	}
	if c.Version != CassetteVersion {
		return nil, fmt.Errorf("loading cassette %s: version %d, want %d", path, c.Version, CassetteVersion)
	}
	for i, in := range c.Interactions {
		if in.Response == nil && in.Error == "" {
			return nil, fmt.Errorf("loading cassette %s: interaction %d has neither response nor error", path, i+1)
		}
	}
	return &c, nil
}

// WriteFile writes c to path atomically (a temporary file renamed over it).
func (c *Cassette) WriteFile(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("writing cassette: %w", err)
	}
	return writeAtomic(path, append(b, '\n'))
}

func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing cassette: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing cassette %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing cassette: %w", err)
	}
	return nil
}

// Recorder is an http.RoundTripper that passes requests to Next and records
// each exchange to a cassette file, rewritten after every exchange so an
// interrupted run keeps what it recorded. Exchanges are stored in the order
// they complete. Put it above the retrying Transport: it records what the
// client finally got.
type Recorder struct {
	path  string
	next  http.RoundTripper
	scrub *scrubber

	mu sync.Mutex
	c  Cassette
}

var _ http.RoundTripper = (*Recorder)(nil)

// NewRecorder returns a Recorder writing to path (created or truncated now,
// with its directory if need be, so a bad path fails before any request). Secrets (the API key and any
// other value that must not be stored) are scrubbed from the cassette.
func NewRecorder(path string, next http.RoundTripper, secrets []string) (*Recorder, error) {
	if next == nil {
		next = http.DefaultTransport
	}
	r := &Recorder{path: path, next: next, scrub: newScrubber(secrets), c: Cassette{Version: CassetteVersion, Interactions: []Interaction{}}}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("writing cassette: %w", err)
	}
	if err := r.c.WriteFile(path); err != nil {
		return nil, err
	}
	return r, nil
}

// Cassette returns a copy of what has been recorded so far.
func (r *Recorder) Cassette() *Cassette {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.c
	c.Interactions = append([]Interaction(nil), r.c.Interactions...)
	return &c
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	out.ContentLength = int64(len(body))

	in := Interaction{Request: RecordedRequest{
		Method:      req.Method,
		Path:        r.scrub.String(req.URL.Path),
		Fingerprint: FingerprintRequest(body),
	}}
	in.Request.Fingerprint.scrub(r.scrub)

	resp, err := r.next.RoundTrip(out)
	if err != nil {
		in.Error = r.scrub.String(err.Error())
		if serr := r.add(in); serr != nil {
			return nil, errors.Join(err, serr)
		}
		return nil, err
	}
	rb, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("recording response: %w", err)
	}
	rec := &RecordedResponse{Status: resp.StatusCode}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		rec.Header = map[string]string{"Content-Type": ct}
	}
	if sb := r.scrub.Bytes(rb); json.Valid(sb) {
		rec.Body = json.RawMessage(sb)
	} else {
		rec.BodyText = string(sb)
	}
	in.Response = rec
	if err := r.add(in); err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(rb))
	return resp, nil
}

func (r *Recorder) add(in Interaction) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c.Interactions = append(r.c.Interactions, in)
	b, err := json.MarshalIndent(&r.c, "", "  ")
	if err != nil {
		return fmt.Errorf("writing cassette: %w", err)
	}
	// Structured scrubbing above covers the strings; this catches a secret
	// anywhere else in the encoded file.
	return writeAtomic(r.path, append(r.scrub.Bytes(b), '\n'))
}

// ReplayOptions tunes a Replayer.
type ReplayOptions struct {
	// StrictImages also compares the hash of image bytes; by default images
	// must only agree in presence, type, size and detail, since screenshots
	// of the same page can differ by a pixel between runs.
	StrictImages bool
	// Secrets are scrubbed from live requests before they are compared, as
	// they were when recorded.
	Secrets []string
}

// Replayer is an http.RoundTripper that answers from a cassette and never
// touches the network. Each request is matched to the first unused recorded
// interaction with an equal fingerprint, which is the recorded order for a
// sequential run and tolerates concurrent requests arriving in another
// order. A request that matches none fails with a *MismatchError naming the
// first field where it differs from the first unused interaction.
type Replayer struct {
	c     *Cassette
	opts  ReplayOptions
	scrub *scrubber

	mu   sync.Mutex
	used []bool
	n    int
}

var _ http.RoundTripper = (*Replayer)(nil)

// NewReplayer returns a Replayer for c.
func NewReplayer(c *Cassette, opts ReplayOptions) *Replayer {
	return &Replayer{c: c, opts: opts, scrub: newScrubber(opts.Secrets), used: make([]bool, len(c.Interactions))}
}

// Remaining returns how many recorded interactions have not been replayed.
func (r *Replayer) Remaining() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, u := range r.used {
		if !u {
			n++
		}
	}
	return n
}

// RoundTrip implements http.RoundTripper.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := readBody(req)
	if err != nil {
		return nil, err
	}
	fp := FingerprintRequest(body)
	fp.scrub(r.scrub)

	r.mu.Lock()
	r.n++
	n := r.n
	first := -1
	match := -1
	for i, in := range r.c.Interactions {
		if r.used[i] {
			continue
		}
		if first < 0 {
			first = i
		}
		if _, _, _, differ := diffFingerprints(in.Request.Fingerprint, fp, r.opts.StrictImages); !differ {
			match = i
			break
		}
	}
	if match >= 0 {
		r.used[match] = true
	}
	r.mu.Unlock()

	if match < 0 {
		if first < 0 {
			return nil, fmt.Errorf("replay request %d: %w: all %d recorded requests were replayed", n, ErrCassetteExhausted, len(r.c.Interactions))
		}
		field, rec, got, _ := diffFingerprints(r.c.Interactions[first].Request.Fingerprint, fp, r.opts.StrictImages)
		return nil, &MismatchError{Request: n, Field: field, Recorded: rec, Got: got}
	}
	in := r.c.Interactions[match]
	if in.Response == nil {
		return nil, fmt.Errorf("replay request %d: recorded transport error: %s", n, in.Error)
	}
	rb := in.Response.body()
	h := make(http.Header, len(in.Response.Header))
	keys := make([]string, 0, len(in.Response.Header))
	for k := range in.Response.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h.Set(k, in.Response.Header[k])
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", in.Response.Status, http.StatusText(in.Response.Status)),
		StatusCode:    in.Response.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(rb)),
		ContentLength: int64(len(rb)),
		Request:       req,
	}, nil
}

// readBody reads and closes req's body.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	defer req.Body.Close()
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, fmt.Errorf("reading request body: %w", err)
	}
	return b, nil
}

// scrubber replaces secrets, as written and as escaped in JSON strings,
// then applies redact (if set).
type scrubber struct {
	r      *strings.Replacer
	redact func(string) string
}

func newScrubber(secrets []string) *scrubber {
	var forms []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			forms = append(forms, s)
		}
	}
	for _, s := range secrets {
		add(s)
		for _, html := range []bool{true, false} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			if enc.Encode(s) == nil {
				q := strings.TrimSuffix(b.String(), "\n")
				add(q[1 : len(q)-1])
			}
		}
	}
	if len(forms) == 0 {
		return &scrubber{}
	}
	// Longer first, so a secret containing another is replaced whole.
	sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
	pairs := make([]string, 0, 2*len(forms))
	for _, f := range forms {
		pairs = append(pairs, f, Redacted)
	}
	return &scrubber{r: strings.NewReplacer(pairs...)}
}

func (s *scrubber) String(v string) string {
	if s.r != nil {
		v = s.r.Replace(v)
	}
	if s.redact != nil {
		v = s.redact(v)
	}
	return v
}

func (s *scrubber) Bytes(b []byte) []byte {
	if s.r == nil && s.redact == nil {
		return b
	}
	return []byte(s.String(string(b)))
}
