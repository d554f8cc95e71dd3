package daemon_test

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/surfkit/surf/cmd/surf/internal/daemon"
)

func TestReadyReporterWritesOnceAndCloses(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	fd, err := syscall.Dup(int(pw.Fd())) // the reporter owns this one
	if err != nil {
		t.Fatal(err)
	}
	pw.Close()
	report := daemon.ReadyReporter(fd)
	report(daemon.Response{OK: true, Text: "4242"})
	report(daemon.Fail(daemon.ExitUsage, os.ErrNotExist, "")) // ignored
	// ReadAll ends only when the reporter closed its end.
	b, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) != 1 {
		t.Fatalf("the reporter wrote %q, want one line", b)
	}
	var resp daemon.Response
	if err := json.Unmarshal([]byte(lines[0]), &resp); err != nil || !resp.OK || resp.Text != "4242" {
		t.Fatalf("the report is %q (%v), want the first response", lines[0], err)
	}
}
