package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surfkit/surf/journal"
)

// ErrNotJournal is returned (wrapped) by Read when the file holds no
// journal entry at all: it is empty, or not a surf journal.
var ErrNotJournal = errors.New("not a surf journal")

// Journal is a run's journal as the report reads it.
type Journal struct {
	// Path is the journal file; the page shows its base name. May be empty.
	Path string
	// Dir is the directory that the entries' image paths are relative to;
	// empty means the current directory. Images are read only from inside
	// it.
	Dir string
	// Entries are the journal's lines, in order.
	Entries []journal.Entry
	// Notes are problems found reading the journal (a line cut short by a
	// kill, a line that is not an entry). The page shows them at the top.
	Notes []string
}

// maxNotes bounds the notes Read keeps about bad lines.
const maxNotes = 8

// Read reads the journal at path leniently: a line that does not parse is
// skipped and described in Notes, and the entries around it are kept, so
// that the journal of a killed run (its last line cut short) still makes a
// report. It fails when the file cannot be read or holds no entry at all
// (ErrNotJournal).
func Read(path string) (*Journal, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the journal: %w", err)
	}
	j := parse(b)
	j.Path, j.Dir = path, filepath.Dir(path)
	if len(j.Entries) == 0 {
		if len(j.Notes) == 0 {
			return nil, fmt.Errorf("%s: %w: the file is empty", path, ErrNotJournal)
		}
		return nil, fmt.Errorf("%s: %w: %s", path, ErrNotJournal, j.Notes[0])
	}
	return j, nil
}

// parse splits a journal into entries and notes. A line is an entry when
// it is a JSON object with an "event".
func parse(b []byte) *Journal {
	j := &Journal{}
	skipped := 0
	note := func(format string, args ...any) {
		skipped++
		if skipped <= maxNotes {
			j.Notes = append(j.Notes, fmt.Sprintf(format, args...))
		}
	}
	for n := 1; len(b) > 0; n++ {
		raw, rest, complete := bytes.Cut(b, []byte{'\n'})
		b = rest
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var e journal.Entry
		err := json.Unmarshal(raw, &e)
		switch {
		case err != nil && (!complete || truncated(err)) && len(bytes.TrimSpace(b)) == 0:
			note("line %d is cut short (the run was probably killed while writing it); it is left out", n)
		case err != nil && truncated(err):
			note("line %d is cut short; it is left out", n)
		case err != nil:
			note("line %d is not a journal entry (%s); it is left out", n, jsonProblem(err))
		case e.Event == "":
			note("line %d has no event; it is left out", n)
		default:
			j.Entries = append(j.Entries, e)
		}
	}
	if skipped > maxNotes {
		j.Notes = append(j.Notes, fmt.Sprintf("%d more lines are left out", skipped-maxNotes))
	}
	return j
}

// truncated reports whether a JSON error means the text ended early.
func truncated(err error) bool {
	return strings.Contains(err.Error(), "unexpected end of JSON input")
}

// jsonProblem describes a JSON error briefly, without echoing the line.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("field %q has the wrong type", te.Field)
		}
		return "not a JSON object"
	}
	return "invalid JSON"
}
