package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// probeScript tries to read and write where the browser must not, and
// where it must, and checks that the pipe fds 3 and 4 survive.
const probeScript = `
w() { if ( echo probe > "$1" ) 2>/dev/null; then echo "WRITE-OK $1"; else echo "WRITE-DENIED $1"; fi; }
w "$REAL_HOME/surf-probe-write"
w /usr/surf-probe-write
w /etc/surf-probe-write
w "$OUTSIDE"
w "$UDD/probe"
w "$SBTMP/home/probe"
w "$UPLOADS/probe"
if cat "$PLANTED" >/dev/null 2>&1; then echo "READ-OK planted"; else echo "READ-DENIED planted"; fi
for fd in 3 4; do if [ -e /proc/self/fd/$fd ]; then echo "FD-OK $fd"; else echo "FD-MISSING $fd"; fi; done
`

// runProbe runs probeScript through the launcher exactly as the browser
// is run: the test binary re-executed with the launch spec, which execs
// bwrap (built by the same code as for Chromium) around /bin/sh.
func runProbe(t *testing.T, spec launchSpec, script, udd string, env []string) string {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	r3, w3, _ := os.Pipe()
	r4, w4, _ := os.Pipe()
	defer r3.Close()
	defer w3.Close()
	defer r4.Close()
	defer w4.Close()
	cmd := exec.Command(os.Args[0], "-c", script, "sh", "--user-data-dir="+udd)
	cmd.Env = append(append(os.Environ(), launcherEnv+"="+string(b)), env...)
	cmd.ExtraFiles = []*os.File{r3, w4} // fds 3 and 4, as Playwright's pipes
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("probe: %v\n%s", err, out.String())
	}
	return out.String()
}

func TestOSSandboxProbe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux-only")
	}
	bw, err := findBwrap("")
	if err != nil {
		t.Fatalf("%v: install bubblewrap ('surf install --with-deps')", err)
	}
	realHome, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	sbtmp, err := os.MkdirTemp("", "surf-probe-sandbox-") // like the sandbox's temp dir
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sbtmp)
	udd, err := os.MkdirTemp("", "surf-probe-profile-") // like Playwright's profile
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(udd)
	uploads := filepath.Join(sbtmp, "uploads")
	for _, d := range []string{filepath.Join(sbtmp, "home"), uploads} {
		os.MkdirAll(d, 0o700)
	}
	planted := filepath.Join(realHome, ".surf-probe-planted-"+randomToken(4))
	if err := os.WriteFile(planted, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(planted)
	outside := filepath.Join(os.TempDir(), "surf-probe-outside-"+randomToken(4))
	defer os.Remove(outside)
	env := []string{"REAL_HOME=" + realHome, "OUTSIDE=" + outside, "UDD=" + udd, "SBTMP=" + sbtmp,
		"UPLOADS=" + uploads, "PLANTED=" + planted}
	for _, p := range []string{filepath.Join(realHome, "surf-probe-write"), "/usr/surf-probe-write", "/etc/surf-probe-write"} {
		defer os.Remove(p)
	}

	spec := launchSpec{Exec: "/bin/sh", PIDFile: filepath.Join(sbtmp, "pid"),
		Bwrap: newBwrapSpec(bw, sbtmp, uploads, "/bin/sh", realHome)}
	out := runProbe(t, spec, probeScript, udd, env)
	t.Logf("probe in the OS sandbox:\n%s", out)
	for _, want := range []string{
		"WRITE-DENIED /usr/surf-probe-write",
		"WRITE-DENIED /etc/surf-probe-write",
		"WRITE-OK " + udd + "/probe",
		"WRITE-OK " + sbtmp + "/home/probe",
		"WRITE-DENIED " + uploads + "/probe",
		"READ-DENIED planted",
		"FD-OK 3",
		"FD-OK 4",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q", want)
		}
	}
	// /tmp and the home directory inside are empty tmpfs: what the
	// browser writes there stays there.
	for _, p := range []string{outside, filepath.Join(realHome, "surf-probe-write")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("a write to %s inside the sandbox reached the real file system", p)
		}
	}
	// The writable directories are the real ones.
	for _, p := range []string{filepath.Join(udd, "probe"), filepath.Join(sbtmp, "home", "probe")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s written inside the sandbox is not outside: %v", p, err)
		}
	}
	var rec launchRecord
	if b, err := os.ReadFile(spec.PIDFile); err != nil || json.Unmarshal(b, &rec) != nil || rec.PID == 0 || rec.UserDataDir != udd {
		t.Errorf("launch record %+v, %v", rec, err)
	}

	// Control: the same probe without the OS sandbox reads the planted
	// file and writes the real /tmp (the only writes it is safe to try
	// for real).
	spec.Bwrap = nil
	control := `if cat "$PLANTED" >/dev/null 2>&1; then echo "READ-OK planted"; fi; echo probe > "$OUTSIDE" && echo "WRITE-OK $OUTSIDE"`
	out = runProbe(t, spec, control, udd, env)
	if !strings.Contains(out, "READ-OK planted") || !strings.Contains(out, "WRITE-OK "+outside) {
		t.Errorf("without the OS sandbox the probe should read the planted file and write %s:\n%s", outside, out)
	}
}

func TestOSSandboxModes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("bubblewrap is Linux-only")
	}
	mk := func(cfg Config) (*Sandbox, *bytes.Buffer) {
		var buf bytes.Buffer
		s := &Sandbox{cfg: cfg, tmp: t.TempDir(), log: slog.New(slog.NewTextHandler(&buf, nil))}
		os.MkdirAll(filepath.Join(s.tmp, "home"), 0o700)
		os.MkdirAll(s.uploadsDir(), 0o700)
		return s, &buf
	}
	s, _ := mk(Config{DisableOSSandbox: true})
	if spec, err := s.osSandbox("/usr/bin/chromium"); spec != nil || err != nil || s.info.OSSandbox != "off: disabled by Config.DisableOSSandbox" {
		t.Errorf("disabled: %v %v %q", spec, err, s.info.OSSandbox)
	}

	s, _ = mk(Config{})
	if spec, err := s.osSandbox("/usr/bin/chromium"); spec == nil || err != nil || s.info.OSSandbox != "bwrap" {
		t.Errorf("installed: %v %v %q", spec, err, s.info.OSSandbox)
	}

	// A bwrap that exists but fails: the sandbox must not start.
	bad := filepath.Join(t.TempDir(), "bwrap")
	os.WriteFile(bad, []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755)
	s, _ = mk(Config{Env: Env{Bwrap: bad}})
	if _, err := s.osSandbox("/usr/bin/chromium"); err == nil || !strings.Contains(err.Error(), "No permissions") {
		t.Errorf("failing bwrap: %v; want an error quoting it", err)
	}
	// An explicit bwrap that is missing is a configuration error.
	s, _ = mk(Config{Env: Env{Bwrap: filepath.Join(t.TempDir(), "missing")}})
	if _, err := s.osSandbox("/usr/bin/chromium"); err == nil {
		t.Error("missing explicit bwrap: no error")
	}
	// No bwrap at all: the OS sandbox is on by default, so the sandbox
	// must not start, and the error says how to get it or go without.
	t.Setenv("PATH", t.TempDir())
	s, _ = mk(Config{})
	_, err := s.osSandbox("/usr/bin/chromium")
	var le *LayerError
	if !errors.As(err, &le) || !strings.Contains(le.Hint(), "--no-os-sandbox") || !strings.Contains(le.Hint(), "surf install --with-deps") {
		t.Errorf("no bwrap: %v; want a *LayerError naming the install and the opt-out", err)
	}
}

// TestChromiumSandboxFailsClosed: Chromium's own sandbox is on unless it
// is turned off explicitly. As root it can only run inside the OS sandbox,
// as an unprivileged user; without the OS sandbox that is an error, never
// a silent --no-sandbox.
func TestChromiumSandboxFailsClosed(t *testing.T) {
	s := &Sandbox{cfg: Config{DisableChromiumSandbox: true}, log: slog.New(slog.DiscardHandler)}
	if on, err := s.chromiumSandbox(nil); on || err != nil || !s.info.NoSandbox || !strings.HasPrefix(s.info.ChromiumSandbox, "off: disabled") {
		t.Errorf("disabled: %v %v %+v", on, err, s.info)
	}
	s = &Sandbox{cfg: Config{DisableOSSandbox: true}, log: slog.New(slog.DiscardHandler)}
	on, err := s.chromiumSandbox(nil)
	if os.Geteuid() != 0 {
		if !on || err != nil || s.info.ChromiumSandbox != "on" {
			t.Errorf("not root, no OS sandbox: %v %v %+v", on, err, s.info)
		}
		return
	}
	var le *LayerError
	if on || !errors.As(err, &le) || !strings.Contains(le.Hint(), "--no-chromium-sandbox") {
		t.Errorf("root without the OS sandbox: %v %v; want a *LayerError naming --no-chromium-sandbox", on, err)
	}
	s = &Sandbox{cfg: Config{}, log: slog.New(slog.DiscardHandler)}
	if on, err := s.chromiumSandbox(&bwrapSpec{UID: sandboxUID}); !on || err != nil || s.info.NoSandbox {
		t.Errorf("root inside bwrap's user namespace: %v %v %+v", on, err, s.info)
	}
}

func TestBwrapSpecHidesHomes(t *testing.T) {
	b := newBwrapSpec("/usr/bin/bwrap", "/tmp/surf-1-x", "/tmp/surf-1-x/uploads", "/root/.cache/chromium/chrome", "/root")
	args := strings.Join(b.args("/tmp/playwright_chromiumdev_profile-x"), " ")
	for _, want := range []string{
		"--ro-bind / /", "--tmpfs /tmp", "--tmpfs /root",
		"--bind /tmp/surf-1-x /tmp/surf-1-x",
		"--bind /tmp/playwright_chromiumdev_profile-x /tmp/playwright_chromiumdev_profile-x",
		"--ro-bind /tmp/surf-1-x/uploads /tmp/surf-1-x/uploads",
		"--ro-bind /root/.cache/chromium /root/.cache/chromium", // a browser under a hidden dir stays visible
		"--die-with-parent", "--unshare-pid",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, args)
		}
	}
	if strings.Count(args, "--tmpfs /root ") != 1 {
		t.Errorf("/root hidden twice: %s", args)
	}
	if !strings.HasSuffix(args, " --") {
		t.Errorf("args do not end the options with --: %s", args)
	}
}
