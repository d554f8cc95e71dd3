package websurfer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Journal events, one JSON line each.
const (
	EventRunStarted = "run_started"
	EventObserved   = "observed"
	EventReasoned   = "reasoned"
	EventGated      = "gated"
	EventActed      = "acted"
	EventRecovered  = "recovered"
	EventCorrected  = "corrected" // the model's reply was malformed and it was told so
	EventEnded      = "ended"
)

// Entry is one line of the journal. Which fields are set depends on Event.
type Entry struct {
	Time  time.Time `json:"time"`
	Event string    `json:"event"`
	Step  int       `json:"step,omitempty"`

	// run_started
	Task   string          `json:"task,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`

	// observed
	URL      string `json:"url,omitempty"`
	Title    string `json:"title,omitempty"`
	Elements int    `json:"elements,omitempty"`
	Tokens   int    `json:"tokens,omitempty"`
	Image    string `json:"image,omitempty"` // path of the set-of-mark image, relative to the journal
	Seq      int    `json:"seq,omitempty"`

	// reasoned
	Calls   []Call `json:"calls,omitempty"`
	Content string `json:"content,omitempty"`
	Usage   *Usage `json:"usage,omitempty"`

	// gated
	Tool     string `json:"tool,omitempty"`
	Verdict  string `json:"verdict,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Target   string `json:"target,omitempty"`
	Approved *bool  `json:"approved,omitempty"`

	// acted
	Args     json.RawMessage `json:"args,omitempty"`
	Result   string          `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Duration Duration        `json:"duration,omitempty"`

	// recovered, corrected
	Message string `json:"message,omitempty"`

	// ended
	EndReason string `json:"end_reason,omitempty"`
	Answer    string `json:"answer,omitempty"`
	Steps     int    `json:"steps,omitempty"`
}

// Call is a tool call as the model made it.
type Call struct {
	ID        string          `json:"id,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Reasoning string          `json:"reasoning,omitempty"`
}

// Usage is token usage.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Total      int `json:"total"`
}

// Duration is a time.Duration written as milliseconds.
type Duration time.Duration

// MarshalJSON writes milliseconds with three decimals.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.3f", float64(time.Duration(d).Microseconds())/1000)), nil
}

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(time.Duration(ms * float64(time.Millisecond)))
	return nil
}

// Journal writes a run's events as JSON lines, each written straight to
// the file as it happens, so a killed run keeps every finished line. Set-of
// mark images are saved beside it. Every string goes through Redact first,
// so secret values never reach the file.
type Journal struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	images string
	redact func(string) string
	now    func() time.Time
	err    error
}

// OpenJournal creates (or truncates) a journal at path, with an images
// directory beside it. redact may be nil.
func OpenJournal(path string, redact func(string) string) (*Journal, error) {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the journal's directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the journal: %w", err)
	}
	base := filepath.Base(path)
	images := filepath.Join(filepath.Dir(path), trimExt(base)+"-images")
	return &Journal{f: f, path: path, images: images, redact: redact, now: time.Now}, nil
}

func trimExt(s string) string { return s[:len(s)-len(filepath.Ext(s))] }

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Write appends an entry. A failed write is remembered and returned by
// Close; the run goes on.
func (j *Journal) Write(e Entry) error {
	if j == nil {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = j.now().UTC()
	}
	e = j.clean(e)
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(b); err != nil && j.err == nil {
		j.err = err
		return err
	}
	return nil
}

// clean redacts every string an entry carries.
func (j *Journal) clean(e Entry) Entry {
	r := j.redact
	e.Task, e.URL, e.Title, e.Content = r(e.Task), r(e.URL), r(e.Title), r(e.Content)
	e.Reason, e.Target, e.Result, e.Error = r(e.Reason), r(e.Target), r(e.Result), r(e.Error)
	e.Message, e.Answer = r(e.Message), r(e.Answer)
	if len(e.Args) > 0 {
		e.Args = json.RawMessage(r(string(e.Args)))
	}
	if len(e.Config) > 0 {
		e.Config = json.RawMessage(r(string(e.Config)))
	}
	calls := make([]Call, len(e.Calls))
	for i, c := range e.Calls {
		c.Args = json.RawMessage(r(string(c.Args)))
		c.Reasoning = r(c.Reasoning)
		calls[i] = c
	}
	if len(calls) > 0 {
		e.Calls = calls
	}
	return e
}

// SaveImage writes an observation's image beside the journal and returns
// its path relative to the journal's directory.
func (j *Journal) SaveImage(step int, seq int, data []byte, mime string) (string, error) {
	if j == nil || len(data) == 0 {
		return "", nil
	}
	if err := os.MkdirAll(j.images, 0o755); err != nil {
		return "", err
	}
	ext := ".jpg"
	if mime == "image/png" {
		ext = ".png"
	}
	name := fmt.Sprintf("step-%03d-obs-%03d%s", step, seq, ext)
	if err := os.WriteFile(filepath.Join(j.images, name), data, 0o644); err != nil {
		return "", err
	}
	return filepath.Join(filepath.Base(j.images), name), nil
}

// Close closes the file and reports the first write error, if any.
func (j *Journal) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.f.Close()
	if j.err != nil {
		return j.err
	}
	return err
}

// ReadJournal reads a journal's entries. Lines that do not parse (a line
// cut short by a kill) are reported in the error with their number; the
// entries before them are returned.
func ReadJournal(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Entry
	line := 0
	for len(b) > 0 {
		line++
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		raw := b[:i]
		if i < len(b) {
			b = b[i+1:]
		} else {
			b = nil
		}
		if len(raw) == 0 {
			continue
		}
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, e)
	}
	return out, nil
}
