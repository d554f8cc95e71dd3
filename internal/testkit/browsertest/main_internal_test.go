package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.RunLauncher()
	os.Exit(m.Run())
}

// runFunc stands in for testing.M: its Run is the test binary's tests.
type runFunc func() int

func (f runFunc) Run() int { return f() }

// TestForeignStaleProfileIgnored runs the harness (Main without the exit)
// around "tests" that start the shared browser and, meanwhile, plant a
// stale Playwright profile in the shared temp dir, as a killed surf or
// another test run on the machine leaves one. The harness must judge only
// what its binary made: the run passes, the browser's profile was in the
// binary's own temp dir, and that dir is gone at the end.
func TestForeignStaleProfileIgnored(t *testing.T) {
	sharedTemp := os.TempDir()
	oldTMPDIR, hadTMPDIR := os.LookupEnv("TMPDIR")
	var private, profile string
	code := run(runFunc(func() int {
		private = os.TempDir()
		stale, err := os.MkdirTemp(sharedTemp, "playwright_chromiumdev_profile-")
		if err != nil {
			t.Error(err)
			return 1
		}
		t.Cleanup(func() { os.RemoveAll(stale) })
		sb := Sandbox(t)
		profile = userDataDir(t, sb.Info().PID)
		return 0
	}))
	if code != 0 {
		t.Errorf("the run failed (exit code %d) over a profile it did not make", code)
	}
	if private == sharedTemp {
		t.Fatalf("the tests ran in the shared temp dir %s, not one of their own", sharedTemp)
	}
	if !strings.HasPrefix(profile, private+string(filepath.Separator)) {
		t.Errorf("the browser's profile %s is not in the binary's temp dir %s", profile, private)
	}
	if _, err := os.Stat(private); !os.IsNotExist(err) {
		t.Errorf("the binary's temp dir %s outlived the run (%v)", private, err)
	}
	if v, ok := os.LookupEnv("TMPDIR"); v != oldTMPDIR || ok != hadTMPDIR {
		t.Errorf("TMPDIR is %q (set: %v) after the run, want %q (set: %v)", v, ok, oldTMPDIR, hadTMPDIR)
	}
}

// TestOwnLeakCaught checks that the harness still fails a run whose
// tests leave a Playwright profile behind in the binary's temp dir.
func TestOwnLeakCaught(t *testing.T) {
	var private string
	code := run(runFunc(func() int {
		private = os.TempDir()
		if _, err := os.MkdirTemp("", "playwright_chromiumdev_profile-"); err != nil {
			t.Error(err)
		}
		return 0
	}))
	if code == 0 {
		t.Error("a run that left a Playwright profile passed")
	}
	if _, err := os.Stat(private); !os.IsNotExist(err) {
		t.Errorf("the binary's temp dir %s outlived the run (%v)", private, err)
	}
}

// userDataDir is the --user-data-dir of the browser process pid.
func userDataDir(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatalf("browser pid %d: %v", pid, err)
	}
	for _, a := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			return v
		}
	}
	t.Fatalf("browser %d has no --user-data-dir", pid)
	return ""
}
