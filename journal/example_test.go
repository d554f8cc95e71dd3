package journal_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/surfkit/surf/journal"
)

// Example writes a short journal, with a secret redacted, and reads it
// back.
func Example() {
	dir, _ := os.MkdirTemp("", "journal-example-")
	defer os.RemoveAll(dir)
	redact := func(s string) string { return strings.ReplaceAll(s, "hunter2", "<secret:password>") }

	w, err := journal.Open(filepath.Join(dir, "run.jsonl"), redact)
	if err != nil {
		panic(err)
	}
	w.Write(journal.Entry{Event: journal.KindRunStarted, Task: "Sign in with hunter2"})
	w.Write(journal.Entry{Event: journal.KindObserved, Step: 1, URL: "http://127.0.0.1:8080/login", Title: "Sign in"})
	w.Write(journal.Entry{Event: journal.KindEnded, Step: 1, Steps: 1, EndReason: journal.EndAnswered, Answer: "signed in"})
	if err := w.Close(); err != nil {
		panic(err)
	}

	entries, err := journal.Read(filepath.Join(dir, "run.jsonl"))
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		switch e.Event {
		case journal.KindRunStarted:
			fmt.Println("task:", e.Task)
		case journal.KindObserved:
			fmt.Printf("step %d: %s %q\n", e.Step, e.URL, e.Title)
		case journal.KindEnded:
			fmt.Printf("%s after %d step: %s\n", e.EndReason, e.Steps, e.Answer)
		}
	}
	// Output:
	// task: Sign in with <secret:password>
	// step 1: http://127.0.0.1:8080/login "Sign in"
	// answered after 1 step: signed in
}
