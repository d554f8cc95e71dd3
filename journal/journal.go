package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Writer writes a run's entries as JSON lines, each written straight to
// the file as it happens, so a killed run keeps every finished line; Sync
// (at each step's end) and Close flush them to stable storage, so a
// machine that crashes or loses power keeps every finished step.
// Set-of-mark images are saved beside it. Every string goes through the
// redact function first, so secret values never reach the file. A nil
// *Writer writes nothing. It is safe for concurrent use.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	images string
	redact func(string) string
	// more are redactors added with AddRedactor, applied after redact.
	more []func(string) string
	now  func() time.Time
	err  error
}

// ErrExists is returned (wrapped) by Open and Available when a journal,
// or the images directory of one, is already at the path: an earlier run
// that Open will not destroy or mix with a new one.
var ErrExists = errors.New("an earlier run's journal is there")

// Open creates a journal at path, with an images directory beside it
// ("run.jsonl" keeps its images in "run-images"). It refuses, with an
// error wrapping ErrExists, when the file or the images directory exists
// already: one run per journal, never truncated, never mixed with another
// run's images. To replace an earlier run, Remove it first. redact may be
// nil.
func Open(path string, redact func(string) string) (*Writer, error) {
	if redact == nil {
		redact = func(s string) string { return s }
	}
	if err := Available(path); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating the journal's directory: %w", err)
	}
	// O_EXCL: a run that started meanwhile at the same path keeps its journal.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err != nil {
		return nil, fmt.Errorf("opening the journal: %w", err)
	}
	return &Writer{f: f, path: path, images: imagesDir(path), redact: redact, now: time.Now}, nil
}

// Available reports whether Open can create a journal at path: an error
// wrapping ErrExists if a journal or its images directory is there, nil
// if neither is. A caller checks it before work that should not start if
// the journal cannot be written (launching a browser, say).
func Available(path string) error {
	for _, p := range []string{path, imagesDir(path)} {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s: %w", p, ErrExists)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("checking the journal's path: %w", err)
		}
	}
	return nil
}

// Remove removes the journal at path and its images directory, for a new
// run to replace it. Neither being there is not an error.
func Remove(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a journal", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing the journal: %w", err)
	}
	if err := os.RemoveAll(imagesDir(path)); err != nil {
		return fmt.Errorf("removing the journal's images: %w", err)
	}
	return nil
}

// imagesDir is where the journal at path keeps its images.
func imagesDir(path string) string {
	return filepath.Join(filepath.Dir(path), trimExt(filepath.Base(path))+"-images")
}

func trimExt(s string) string { return s[:len(s)-len(filepath.Ext(s))] }

// Path is the journal file.
func (j *Writer) Path() string { return j.path }

// Write appends an entry. A failed write is remembered and returned by
// Close; the run goes on.
func (j *Writer) Write(e Entry) error {
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

// AddRedactor adds a redact function every string goes through from now
// on, after Open's: for text learned during the run, such as what a person
// typed into the page during a takeover (see policy.Redactions). Nil is
// ignored.
func (j *Writer) AddRedactor(f func(string) string) {
	if j == nil || f == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.more = append(j.more, f)
}

// clean redacts every string an entry carries.
func (j *Writer) clean(e Entry) Entry {
	j.mu.Lock()
	more := j.more
	j.mu.Unlock()
	r := j.redact
	if len(more) > 0 {
		r = func(s string) string {
			s = j.redact(s)
			for _, f := range more {
				s = f(s)
			}
			return s
		}
	}
	e.Task, e.URL, e.Title, e.Content = r(e.Task), r(e.URL), r(e.Title), r(e.Content)
	e.Reason, e.Target, e.Result, e.Error = r(e.Reason), r(e.Target), r(e.Result), r(e.Error)
	e.Message, e.Answer = r(e.Message), r(e.Answer)
	if len(e.Args) > 0 {
		e.Args = json.RawMessage(r(string(e.Args)))
	}
	if len(e.Data) > 0 {
		e.Data = json.RawMessage(r(string(e.Data)))
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
func (j *Writer) SaveImage(step int, seq int, data []byte, mime string) (string, error) {
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

// Sync flushes the entries written so far to stable storage (fsync). The
// agent loop calls it at the end of each step. A failure is remembered
// like a failed write and returned by Close.
func (j *Writer) Sync() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if err := j.f.Sync(); err != nil {
		if j.err == nil {
			j.err = err
		}
		return err
	}
	return nil
}

// Close flushes the journal to stable storage, closes the file and reports
// the first write error, if any.
func (j *Writer) Close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.f.Sync()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	if j.err != nil {
		return j.err
	}
	return err
}

// Read reads a journal's entries. A line that does not parse (a line cut
// short by a kill) ends the reading: it is reported in the error with its
// number, and the entries before it are returned.
func Read(path string) ([]Entry, error) {
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
