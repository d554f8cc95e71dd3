package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

func TestRemoveStale(t *testing.T) {
	if _, err := sandbox.RemoveStale(os.Getpid()); err == nil {
		t.Error("RemoveStale of a live process: no error")
	}
	if _, err := sandbox.RemoveStale(0); err == nil {
		t.Error("RemoveStale(0): no error")
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	stale := filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-session-1-test", pid))
	other := filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d0-session-1-test", pid)) // another pid's
	for _, d := range []string{stale, other} {
		if err := os.MkdirAll(filepath.Join(d, "profile"), 0o700); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	removed, err := sandbox.RemoveStale(pid)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != stale {
		t.Errorf("removed %q, want [%s]", removed, stale)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("%s is still there", stale)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another process's dir went too: %v", err)
	}
}
