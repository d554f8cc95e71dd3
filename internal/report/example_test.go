package report_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/surfkit/surf/internal/report"
	"github.com/surfkit/surf/journal"
)

// A run's journal becomes one HTML page with a single call.
func ExampleWriteFile() {
	dir, err := os.MkdirTemp("", "report-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	j, err := journal.Open(filepath.Join(dir, "journal.jsonl"), nil)
	if err != nil {
		log.Fatal(err)
	}
	j.Write(journal.Entry{Event: journal.KindRunStarted, Task: "Say hello"})
	j.Write(journal.Entry{Event: journal.KindGated, Step: 1, Tool: "visit_url", Verdict: "deny", Reason: "host not in the allowlist"})
	j.Write(journal.Entry{Event: journal.KindEnded, EndReason: journal.EndAnswered, Answer: "hello", Steps: 1})
	if err := j.Close(); err != nil {
		log.Fatal(err)
	}

	sum, err := report.WriteFile(filepath.Join(dir, "journal.jsonl"), "", report.Options{})
	if err != nil {
		log.Fatal(err)
	}
	_, err = os.Stat(filepath.Join(dir, "journal.html"))
	fmt.Printf("steps %d, denied %d, ended %v, written %v\n", sum.Steps, sum.Denied, sum.Ended, err == nil)
	// Output: steps 1, denied 1, ended true, written true
}
