// Package report turns a run's journal into one self-contained HTML page
// that a person can read offline.
//
// The page shows the task and the run's configuration, then each step with its set-of-mark screenshot (inlined as a data URL,
// click to enlarge), the model's tool calls and reasoning, the gate's
// verdict, the result, timings and tokens, and finally how the run ended.
// Denials, errors and recoveries stand out. The page fetches nothing: its
// CSS and its few lines of script are inline, and its Content-Security-Policy
// allows nothing else, while every string from the journal (which comes
// from web pages and models) is escaped.
package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Defaults for the zero Options.
const (
	// DefaultMaxText is how many bytes of one text (a result, an answer,
	// the model's content, a call's arguments) the report holds.
	DefaultMaxText = 64 << 10
	// DefaultMaxImageBytes is the largest image file the report inlines.
	DefaultMaxImageBytes = 8 << 20
)

// Options tune a report. The zero value is ready to use.
type Options struct {
	// Title is the page's title; empty means "surf run: " and the task.
	Title string
	// MaxText bounds each text the report holds, in bytes; the rest is
	// cut with a note. Zero means DefaultMaxText.
	MaxText int
	// MaxImageBytes bounds each inlined image file; a larger one is shown
	// as a placeholder. Zero means DefaultMaxImageBytes.
	MaxImageBytes int64
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxText < 0 {
		return o, fmt.Errorf("report options: MaxText %d is negative", o.MaxText)
	}
	if o.MaxImageBytes < 0 {
		return o, fmt.Errorf("report options: MaxImageBytes %d is negative", o.MaxImageBytes)
	}
	if o.MaxText == 0 {
		o.MaxText = DefaultMaxText
	}
	if o.MaxImageBytes == 0 {
		o.MaxImageBytes = DefaultMaxImageBytes
	}
	return o, nil
}

// Summary says what a report shows.
type Summary struct {
	Steps     int   `json:"steps"`     // steps in the journal
	Denied    int   `json:"denied"`    // steps with a call the gate denied (or a person refused)
	Errors    int   `json:"errors"`    // steps with a failed action
	Recovered int   `json:"recovered"` // steps with a recovery
	Ended     bool  `json:"ended"`     // the journal has an ended entry
	Images    int   `json:"images"`    // screenshots inlined
	Missing   int   `json:"missing"`   // screenshots shown as placeholders (missing, unreadable, too large)
	Bytes     int64 `json:"bytes"`     // size of the page
	// Notes are the warnings shown at the top of the page: lines of the
	// journal left out, a missing end.
	Notes []string `json:"notes,omitempty"`
}

// Write renders j as an HTML page to w. The page is built in memory and
// written at once, so w receives nothing when rendering fails.
func Write(w io.Writer, j *Journal, opts Options) (Summary, error) {
	if j == nil {
		return Summary{}, errors.New("report: no journal")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return Summary{}, err
	}
	p, sum := build(j, opts)
	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return Summary{}, fmt.Errorf("rendering the report: %w", err)
	}
	n, err := w.Write(buf.Bytes())
	sum.Bytes = int64(n)
	if err != nil {
		return sum, fmt.Errorf("writing the report: %w", err)
	}
	return sum, nil
}

// WriteFile reads the journal at journalPath and writes its report to
// outPath (empty means the journal's path with the extension .html). The
// file is replaced atomically: a failed report leaves no partial file.
// This is the one call a run needs for its --report flag.
func WriteFile(journalPath, outPath string, opts Options) (Summary, error) {
	j, err := Read(journalPath)
	if err != nil {
		return Summary{}, err
	}
	if outPath == "" {
		outPath = DefaultOutput(journalPath)
	}
	if abs, err1 := filepath.Abs(outPath); err1 == nil {
		if jabs, err2 := filepath.Abs(journalPath); err2 == nil && abs == jabs {
			return Summary{}, fmt.Errorf("writing the report: %s is the journal itself", outPath)
		}
	}
	dir := filepath.Dir(outPath)
	f, err := os.CreateTemp(dir, "."+filepath.Base(outPath)+".*.tmp")
	if err != nil {
		return Summary{}, fmt.Errorf("writing the report: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename there is nothing to remove
	bw := bufio.NewWriter(f)
	sum, err := Write(bw, j, opts)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), outPath)
	}
	if err != nil {
		return Summary{}, fmt.Errorf("writing the report: %w", err)
	}
	return sum, nil
}

// DefaultOutput is where WriteFile puts the report of a journal by
// default: beside it, with the extension .html ("run/journal.jsonl" gives
// "run/journal.html").
func DefaultOutput(journalPath string) string {
	ext := filepath.Ext(journalPath)
	base := strings.TrimSuffix(journalPath, ext)
	if ext == ".html" {
		base += ext // never the journal itself
	}
	return base + ".html"
}
