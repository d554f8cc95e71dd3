package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The OS sandbox runs Chromium inside bubblewrap (bwrap): a mount
// namespace where the whole file system is read-only, /tmp, /var/tmp,
// /home, /root and the user's home directory are empty tmpfs, and only the
// sandbox's own temp dir (the browser's HOME and downloads), the profile
// directory Playwright chose and, read-only, the upload staging directory
// are visible from the outside. It also gets its own pid, IPC and UTS
// namespaces and dies with its parent. The network namespace is shared:
// the browser must reach the egress proxy on loopback.

// bwrapSpec is what the launcher needs to build bwrap's command line. The
// profile directory is only known to the launcher (Playwright passes it as
// --user-data-dir), so the command line is built there.
type bwrapSpec struct {
	Path string `json:"path"`
	// Hide are directories covered with an empty tmpfs.
	Hide []string `json:"hide,omitempty"`
	// Writable are directories bound read-write, after the hiding.
	Writable []string `json:"writable,omitempty"`
	// ReadOnly are directories bound read-only, after Writable.
	ReadOnly []string `json:"read_only,omitempty"`
	// Chdir is the working directory inside.
	Chdir string `json:"chdir"`
	// UID, when not zero, runs the browser in a user namespace of its own
	// as this unprivileged user and group (surf running as root maps to
	// it), so that Chromium's own sandbox, which refuses to run as root,
	// can run: see [sandboxUID].
	UID int `json:"uid,omitempty"`
}

// sandboxUID is the user (and group) a local browser runs as inside
// bubblewrap's user namespace when surf runs as root. Chromium's own
// sandbox (seccomp-bpf plus namespaces for every renderer) refuses to run
// as root; as this user, with no capabilities outside the namespace, it
// runs.
const sandboxUID = 1000

// args is bwrap's command line (without the command), for a browser
// whose profile is userDataDir ("" if none).
func (b *bwrapSpec) args(userDataDir string) []string {
	a := []string{b.Path,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--tmpfs", "/dev/shm",
	}
	for _, h := range b.Hide {
		a = append(a, "--tmpfs", h)
	}
	for _, w := range b.Writable {
		a = append(a, "--bind", w, w)
	}
	if userDataDir != "" {
		a = append(a, "--bind", userDataDir, userDataDir)
	}
	for _, r := range b.ReadOnly {
		a = append(a, "--ro-bind", r, r)
	}
	if b.UID != 0 {
		id := strconv.Itoa(b.UID)
		a = append(a, "--unshare-user", "--uid", id, "--gid", id)
	}
	a = append(a,
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--die-with-parent",
		"--chdir", b.Chdir,
		"--")
	return a
}

// findBwrap locates bubblewrap: Env.Bwrap, else bwrap on PATH.
func findBwrap(explicit string) (string, error) {
	if explicit != "" {
		if fi, err := os.Stat(explicit); err != nil || fi.IsDir() {
			return "", fmt.Errorf("bubblewrap %s not found", explicit)
		}
		return explicit, nil
	}
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("bwrap not found")
	}
	return p, nil
}

// newBwrapSpec builds the OS sandbox for a browser whose sandbox temp dir
// is tmp (holding its HOME and downloads), staging uploads in uploads,
// running the executable chromium. home is the surf user's real home.
func newBwrapSpec(path, tmp, uploads, chromium, home string) *bwrapSpec {
	b := &bwrapSpec{Path: path, Chdir: filepath.Join(tmp, "home")}
	hide := []string{"/tmp", "/var/tmp", "/home", "/root"}
	if home != "" && home != "/" && filepath.IsAbs(home) {
		hide = append(hide, filepath.Clean(home))
	}
	for _, h := range hide {
		if fi, err := os.Stat(h); err == nil && fi.IsDir() && !containsDir(hide, h) && !slices.Contains(b.Hide, h) {
			b.Hide = append(b.Hide, h)
		}
	}
	b.Writable = []string{tmp}
	if uploads != "" {
		b.ReadOnly = append(b.ReadOnly, uploads)
	}
	// A browser installed under a hidden directory (such as a home
	// directory cache) stays visible, read-only.
	if dir := filepath.Dir(chromium); chromium != "" && hiddenBy(b.Hide, dir) {
		b.ReadOnly = append(b.ReadOnly, dir)
	}
	return b
}

// containsDir reports whether another entry of dirs is a parent of d.
func containsDir(dirs []string, d string) bool {
	for _, o := range dirs {
		if o != d && isWithin(o, d) {
			return true
		}
	}
	return false
}

func hiddenBy(hidden []string, d string) bool {
	for _, h := range hidden {
		if isWithin(h, d) {
			return true
		}
	}
	return false
}

// isWithin reports whether path p is dir or inside it.
func isWithin(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// checkBwrap runs /bin/true (or any true) through the spec's command line,
// so that a bwrap that cannot work here fails with its own words before
// the browser launch would fail with Playwright's.
func checkBwrap(ctx context.Context, b *bwrapSpec) error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("bubblewrap is Linux-only")
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		return fmt.Errorf("checking bubblewrap: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	argv := append(b.args(""), truePath)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("bubblewrap %s does not work here: %s", b.Path, msg)
	}
	return nil
}
