package sandbox

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// DriverVersion is the Playwright driver version that playwright-go
// v0.5200.1 speaks to. surf installs exactly this version of the npm
// package playwright-core.
const DriverVersion = "1.52.0"

// minNodeMajor is the oldest Node.js that Playwright 1.52 supports.
const minNodeMajor = 18

// DefaultRegistry is the npm registry the driver comes from when no other is
// configured.
const DefaultRegistry = "https://registry.npmjs.org/"

// Env holds the machine settings that surf reads from the environment. The
// library never reads the environment itself: the CLI (or a test) builds an
// Env with [EnvFrom] and passes it in.
type Env struct {
	// Chromium is an explicit Chromium executable (SURF_CHROMIUM).
	Chromium string
	// DriverDir is the Playwright driver directory (PLAYWRIGHT_DRIVER_PATH);
	// empty means DefaultDriverDir.
	DriverDir string
	// Node is the Node.js executable (PLAYWRIGHT_NODEJS_PATH); empty means
	// "node" on PATH.
	Node string
	// Registry is the npm registry base URL (npm_config_registry); empty
	// means DefaultRegistry.
	Registry string
	// Bwrap is an explicit bubblewrap executable for the OS sandbox
	// (SURF_BWRAP); empty means bwrap on PATH.
	Bwrap string
	// HeadlessShell is an explicit Chromium headless shell executable
	// (SURF_HEADLESS_SHELL), the browser of frame mode on-demand.
	HeadlessShell string
	// FrameMode is the frame mode of sandboxes whose Config.FrameMode is
	// unset (SURF_FRAME_MODE): "clock" (empty) or "on-demand".
	FrameMode string
}

// EnvFrom reads an Env through getenv (usually os.Getenv).
func EnvFrom(getenv func(string) string) Env {
	return Env{
		Chromium:  getenv("SURF_CHROMIUM"),
		DriverDir: getenv("PLAYWRIGHT_DRIVER_PATH"),
		Node:      getenv("PLAYWRIGHT_NODEJS_PATH"),
		Registry:  firstNonEmpty(getenv("npm_config_registry"), getenv("NPM_CONFIG_REGISTRY")),
		Bwrap:     getenv("SURF_BWRAP"),

		HeadlessShell: getenv("SURF_HEADLESS_SHELL"),
		FrameMode:     getenv("SURF_FRAME_MODE"),
	}
}

// DefaultDriverDir is where playwright-go itself looks for the driver:
// the user cache directory plus ms-playwright-go/<version>.
func DefaultDriverDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user cache directory: %w", err)
	}
	return filepath.Join(cache, "ms-playwright-go", DriverVersion), nil
}

func (e Env) driverDir() (string, error) {
	if e.DriverDir != "" {
		return filepath.Abs(e.DriverDir)
	}
	return DefaultDriverDir()
}

// Status is what [Check] found on the machine.
type Status struct {
	DriverDir       string `json:"driver_dir"`
	DriverVersion   string `json:"driver_version,omitempty"`
	Node            string `json:"node,omitempty"`
	NodeVersion     string `json:"node_version,omitempty"`
	Chromium        string `json:"chromium,omitempty"`
	ChromiumVersion string `json:"chromium_version,omitempty"`
	Bubblewrap      string `json:"bubblewrap,omitempty"`
	// FrameMode is the frame mode sandboxes start in ("clock" or
	// "on-demand"), and Browser the binary they then launch: Chromium, or
	// its headless shell for on-demand.
	FrameMode      string `json:"frame_mode"`
	Browser        string `json:"browser,omitempty"`
	BrowserVersion string `json:"browser_version,omitempty"`
	// ChromiumSandbox says whether Chromium's own sandbox can run with the
	// default configuration, and how, or why not.
	ChromiumSandbox string `json:"chromium_sandbox"`
	// Problems lists what is missing or broken; empty means ready.
	Problems []string `json:"problems,omitempty"`
}

// Ready reports whether a browser can be launched locally.
func (s *Status) Ready() bool { return len(s.Problems) == 0 }

// Err returns a *NotReadyError describing the problems, or nil when ready.
func (s *Status) Err() error {
	if s.Ready() {
		return nil
	}
	return &NotReadyError{Problems: s.Problems}
}

// ErrNotReady is matched by errors.Is for every *NotReadyError.
var ErrNotReady = errors.New("machine not ready for surf")

// NotReadyError says what is missing on the machine. Its Hint tells the user
// the command that fixes it.
type NotReadyError struct {
	Problems []string
}

func (e *NotReadyError) Error() string {
	return "machine not ready: " + strings.Join(e.Problems, "; ")
}

// Is makes errors.Is(err, ErrNotReady) true.
func (e *NotReadyError) Is(target error) bool { return target == ErrNotReady }

// Hint is the advice printed after the error.
func (e *NotReadyError) Hint() string { return InstallHint }

// InstallHint is the one piece of advice every command gives when the
// machine is not ready.
const InstallHint = "run 'surf install' (as root on Debian/Ubuntu, 'surf install --with-deps' also installs chromium, nodejs and bubblewrap)"

// Check inspects the machine without changing it: the driver, node, Chromium
// and bubblewrap.
func Check(ctx context.Context, env Env) *Status {
	st := &Status{}
	dir, err := env.driverDir()
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
	}
	st.DriverDir = dir

	node, nodeVersion, err := findNode(ctx, env.Node)
	st.Node, st.NodeVersion = node, nodeVersion
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
	}
	if dir != "" {
		if v, err := driverVersion(ctx, dir, node); err != nil {
			st.Problems = append(st.Problems, err.Error())
		} else {
			st.DriverVersion = v
		}
	}
	chromium, err := FindChromium(env.Chromium)
	if err != nil {
		st.Problems = append(st.Problems, err.Error())
	} else {
		st.Chromium = chromium
		v, err := chromiumVersion(ctx, chromium)
		if err != nil {
			st.Problems = append(st.Problems, err.Error())
		}
		st.ChromiumVersion = v
	}
	st.Browser, st.BrowserVersion = st.Chromium, st.ChromiumVersion
	mode, err := ParseFrameMode(env.FrameMode)
	st.FrameMode = mode.String()
	switch {
	case err != nil:
		st.Problems = append(st.Problems, "SURF_FRAME_MODE: "+err.Error())
	case mode == FrameOnDemand:
		st.Browser, st.BrowserVersion = "", ""
		shell, err := FindHeadlessShell(env.HeadlessShell)
		if err != nil {
			st.Problems = append(st.Problems, err.Error())
			break
		}
		st.Browser = shell
		if st.BrowserVersion, err = chromiumVersion(ctx, shell); err != nil {
			st.Problems = append(st.Problems, err.Error())
		}
	}
	st.ChromiumSandbox, st.Problems = checkSandboxes(ctx, env, st.Problems)
	if p, err := findBwrap(env.Bwrap); err == nil {
		st.Bubblewrap = p
	}
	return st
}

// checkSandboxes says whether the OS sandbox (bubblewrap) and Chromium's
// own sandbox can start as a default sandbox would start them, adding a
// problem for each that cannot: both are on unless turned off explicitly.
func checkSandboxes(ctx context.Context, env Env, problems []string) (string, []string) {
	root := os.Geteuid() == 0
	p, err := findBwrap(env.Bwrap)
	if err != nil {
		problems = append(problems, "bubblewrap (bwrap) not found: the OS sandbox cannot start (install it, or run browsers with --no-os-sandbox)")
		if root {
			return "cannot run: surf runs as root, where Chromium's sandbox runs only inside the OS sandbox (or turn it off with --no-chromium-sandbox)", problems
		}
		return "on", problems
	}
	spec := &bwrapSpec{Path: p, Chdir: "/"}
	if root {
		spec.UID = sandboxUID
	}
	if err := checkBwrap(ctx, spec); err != nil {
		problems = append(problems, err.Error()+": the OS sandbox cannot start (run browsers with --no-os-sandbox to go without it)")
		if root {
			return "cannot run: surf runs as root and bubblewrap cannot give the browser an unprivileged user (or turn it off with --no-chromium-sandbox)", problems
		}
		return "on", problems
	}
	if root {
		return fmt.Sprintf("on: surf runs as root, so the browser runs as uid %d in bubblewrap's user namespace, where Chromium's sandbox can run", sandboxUID), problems
	}
	return "on", problems
}

// findNode finds the Node.js executable and checks its version.
func findNode(ctx context.Context, explicit string) (path, version string, err error) {
	path = explicit
	if path == "" {
		path, err = exec.LookPath("node")
		if err != nil {
			return "", "", errors.New("node (Node.js) not found on PATH")
		}
	}
	out, err := runQuiet(ctx, path, "--version")
	if err != nil {
		return path, "", fmt.Errorf("node at %s does not run: %w", path, err)
	}
	version = strings.TrimSpace(out)
	major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(version, "v"), ".", 2)[0])
	if major < minNodeMajor {
		return path, version, fmt.Errorf("node %s is too old: Playwright %s needs Node.js %d or newer", version, DriverVersion, minNodeMajor)
	}
	return path, version, nil
}

// driverVersion runs the driver's CLI to read its version.
func driverVersion(ctx context.Context, dir, node string) (string, error) {
	cli := filepath.Join(dir, "package", "cli.js")
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("playwright driver %s not installed in %s", DriverVersion, dir)
	}
	if node == "" {
		return "", fmt.Errorf("playwright driver in %s cannot run without node", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, "node")); err != nil {
		return "", fmt.Errorf("playwright driver in %s has no node link", dir)
	}
	out, err := runQuiet(ctx, node, cli, "--version")
	if err != nil {
		return "", fmt.Errorf("playwright driver in %s does not run: %w", dir, err)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "Version "))
	if v != DriverVersion {
		return v, fmt.Errorf("playwright driver in %s is %s, surf needs %s", dir, v, DriverVersion)
	}
	return v, nil
}

// chromiumCandidates are tried in order after SURF_CHROMIUM.
var chromiumCandidates = []string{
	"/usr/bin/chromium",
	"/usr/bin/chromium-browser",
	"/usr/lib/chromium/chromium",
	"/usr/bin/google-chrome",
	"/usr/bin/google-chrome-stable",
	"/opt/google/chrome/chrome",
	"/snap/bin/chromium",
}

// wrapperTargets maps distribution launcher scripts to the real binary they
// exec. surf launches the binary itself: the scripts source extra flags
// (extensions, API keys) and add a shell between surf and the browser.
var wrapperTargets = map[string]string{
	"/usr/bin/chromium":                "/usr/lib/chromium/chromium",
	"/usr/bin/chromium-browser":        "/usr/lib/chromium-browser/chromium-browser",
	"/opt/google/chrome/google-chrome": "/opt/google/chrome/chrome",
}

// FindChromium returns the Chromium executable surf launches: explicit when
// set (SURF_CHROMIUM), else the first of the usual install paths. A
// distribution's launcher script is resolved to the binary it runs.
func FindChromium(explicit string) (string, error) {
	if explicit != "" {
		p, err := exec.LookPath(explicit)
		if err != nil {
			return "", fmt.Errorf("chromium %q (SURF_CHROMIUM) is not an executable: %w", explicit, err)
		}
		return resolveWrapper(p), nil
	}
	for _, c := range chromiumCandidates {
		if isExecutable(c) {
			return resolveWrapper(c), nil
		}
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return resolveWrapper(p), nil
		}
	}
	return "", errors.New("chromium not found (set SURF_CHROMIUM, or install the Debian package chromium)")
}

func resolveWrapper(p string) string {
	real := p
	if r, err := filepath.EvalSymlinks(p); err == nil {
		real = r
	}
	if !isScript(real) {
		return real
	}
	if t, ok := wrapperTargets[real]; ok && isExecutable(t) {
		return t
	}
	if t, ok := wrapperTargets[p]; ok && isExecutable(t) {
		return t
	}
	return p
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func isScript(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [2]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && string(head[:]) == "#!"
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+\.\d+`)

func chromiumVersion(ctx context.Context, path string) (string, error) {
	out, err := runQuiet(ctx, path, "--version")
	if err != nil {
		return "", fmt.Errorf("chromium at %s does not run: %w", path, err)
	}
	if v := versionRE.FindString(out); v != "" {
		return v, nil
	}
	return strings.TrimSpace(out), nil
}

func runQuiet(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return string(out), fmt.Errorf("%w: %s", err, lastLine(msg))
		}
		return string(out), err
	}
	return string(out), nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// InstallConfig controls [Install].
type InstallConfig struct {
	Env Env
	// WithDeps apt-installs what is missing (chromium, nodejs, npm,
	// bubblewrap). It needs root on Debian or Ubuntu.
	WithDeps bool
	// HTTPClient fetches from the npm registry; nil means a client with a
	// five minute timeout.
	HTTPClient *http.Client
	// Log receives progress lines for the user; nil discards them.
	Log io.Writer
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Install makes the machine ready: system packages when WithDeps is set,
// then the Playwright driver from the npm registry, linked to the system
// node. It is safe to run again: what is already in place is kept. It never
// downloads a browser or contacts Playwright's CDN.
func Install(ctx context.Context, cfg InstallConfig) (*Status, error) {
	logw := cfg.Log
	if logw == nil {
		logw = io.Discard
	}
	if cfg.WithDeps {
		if err := installDeps(ctx, cfg.Env, logw); err != nil {
			return nil, err
		}
	}
	node, _, err := findNode(ctx, cfg.Env.Node)
	if err != nil {
		return nil, withHint(err, "install Node.js 18 or newer (Debian: apt-get install nodejs), or run 'surf install --with-deps' as root")
	}
	dir, err := cfg.Env.driverDir()
	if err != nil {
		return nil, err
	}
	if v, err := driverVersion(ctx, dir, node); err == nil && v == DriverVersion {
		fmt.Fprintf(logw, "playwright driver %s already installed in %s\n", v, dir)
	} else {
		if err := installDriver(ctx, cfg, dir, logw); err != nil {
			return nil, err
		}
	}
	if err := linkNode(dir, node); err != nil {
		return nil, err
	}
	st := Check(ctx, cfg.Env)
	return st, st.Err()
}

// linkNode points <dir>/node at the system node, which is where
// playwright-go runs the driver from.
func linkNode(dir, node string) error {
	abs, err := exec.LookPath(node)
	if err != nil {
		return fmt.Errorf("finding node: %w", err)
	}
	if abs, err = filepath.Abs(abs); err != nil {
		return err
	}
	link := filepath.Join(dir, "node")
	if cur, err := os.Readlink(link); err == nil && cur == abs {
		return nil
	}
	tmp := link + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(abs, tmp); err != nil {
		return fmt.Errorf("linking node into the driver directory: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("linking node into the driver directory: %w", err)
	}
	return nil
}

type npmVersion struct {
	Dist struct {
		Tarball   string `json:"tarball"`
		Integrity string `json:"integrity"`
	} `json:"dist"`
}

// installDriver fetches playwright-core@DriverVersion from the npm registry,
// checks its integrity and unpacks it to <dir>/package atomically.
func installDriver(ctx context.Context, cfg InstallConfig, dir string, logw io.Writer) error {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Minute}
	}
	registry := cfg.Env.Registry
	if registry == "" {
		registry = DefaultRegistry
	}
	registry = strings.TrimSuffix(registry, "/") + "/"
	metaURL := registry + "playwright-core/" + DriverVersion
	fmt.Fprintf(logw, "fetching playwright-core %s from %s\n", DriverVersion, registry)
	body, err := fetch(ctx, client, metaURL, 4<<20)
	if err != nil {
		return withHint(fmt.Errorf("fetching the driver's metadata: %w", err), "surf needs the npm registry (set npm_config_registry for a mirror)")
	}
	var meta npmVersion
	if err := json.Unmarshal(body, &meta); err != nil {
		return fmt.Errorf("reading the driver's metadata from %s: %w", metaURL, err)
	}
	if meta.Dist.Tarball == "" || !strings.HasPrefix(meta.Dist.Integrity, "sha512-") {
		return fmt.Errorf("the registry's metadata for playwright-core %s has no tarball or sha512 integrity", DriverVersion)
	}
	tarURL, err := sameRegistryTarball(registry, meta.Dist.Tarball)
	if err != nil {
		return err
	}
	tgz, err := fetch(ctx, client, tarURL, 64<<20)
	if err != nil {
		return fmt.Errorf("fetching the driver: %w", err)
	}
	want, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(meta.Dist.Integrity, "sha512-"))
	if err != nil {
		return fmt.Errorf("reading the driver's integrity: %w", err)
	}
	got := sha512.Sum512(tgz)
	if !bytes.Equal(got[:], want) {
		return fmt.Errorf("the driver tarball from %s fails its sha512 integrity check", tarURL)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating the driver directory: %w", err)
	}
	staging, err := os.MkdirTemp(dir, ".staging-")
	if err != nil {
		return fmt.Errorf("creating the driver directory: %w", err)
	}
	defer os.RemoveAll(staging)
	if err := untgz(tgz, staging); err != nil {
		return fmt.Errorf("unpacking the driver: %w", err)
	}
	pkg := filepath.Join(dir, "package")
	old := filepath.Join(staging, "old")
	if _, err := os.Stat(pkg); err == nil {
		if err := os.Rename(pkg, old); err != nil {
			return fmt.Errorf("replacing the old driver: %w", err)
		}
	}
	if err := os.Rename(filepath.Join(staging, "package"), pkg); err != nil {
		return fmt.Errorf("installing the driver: %w", err)
	}
	fmt.Fprintf(logw, "installed playwright driver %s in %s\n", DriverVersion, dir)
	return nil
}

// sameRegistryTarball resolves the tarball URL and refuses one on another
// host than the registry (a registry mirror must serve its own tarballs).
func sameRegistryTarball(registry, tarball string) (string, error) {
	base, err := url.Parse(registry)
	if err != nil {
		return "", fmt.Errorf("bad registry URL %q: %w", registry, err)
	}
	t, err := base.Parse(tarball)
	if err != nil {
		return "", fmt.Errorf("bad tarball URL %q: %w", tarball, err)
	}
	if t.Host != base.Host {
		// Mirrors commonly rewrite metadata but not always tarball hosts;
		// fetch the tarball from the registry's own path instead.
		t = base.JoinPath("playwright-core", "-", "playwright-core-"+DriverVersion+".tgz")
	}
	return t.String(), nil
}

func fetch(ctx context.Context, client *http.Client, u string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("GET %s: response larger than %d bytes", u, limit)
	}
	return b, nil
}

// untgz unpacks an npm tarball into dst, refusing entries that escape it.
func untgz(tgz []byte, dst string) error {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Clean(filepath.FromSlash(h.Name))
		if filepath.IsAbs(name) || name == ".." || strings.HasPrefix(name, ".."+string(filepath.Separator)) {
			return fmt.Errorf("tar entry %q escapes the destination", h.Name)
		}
		target := filepath.Join(dst, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := os.FileMode(0o644)
			if h.Mode&0o111 != 0 {
				mode = 0o755
			}
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, io.LimitReader(tr, h.Size)); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			// npm tarballs hold only files and directories; skip links.
		}
	}
}

// installDeps apt-installs the system packages surf needs that are missing.
func installDeps(ctx context.Context, env Env, logw io.Writer) error {
	if os.Geteuid() != 0 {
		return withHint(errors.New("--with-deps needs root"), "run 'sudo surf install --with-deps', or install chromium and nodejs yourself")
	}
	if !isDebianLike() {
		return withHint(errors.New("--with-deps supports Debian and Ubuntu only"), "install chromium and Node.js 18+ with your package manager, then run 'surf install'")
	}
	var missing []string
	if _, err := FindChromium(env.Chromium); err != nil {
		missing = append(missing, "chromium")
	}
	if _, _, err := findNode(ctx, env.Node); err != nil {
		missing = append(missing, "nodejs")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missing = append(missing, "npm")
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing = append(missing, "bubblewrap")
	}
	// The headless shell is the browser of frame mode on-demand
	// (SURF_FRAME_MODE); clock mode, the default, does not need it.
	if _, err := FindHeadlessShell(env.HeadlessShell); err != nil {
		missing = append(missing, "chromium-headless-shell")
	}
	// Chromium only recommends fonts; without them pages render with
	// whatever the machine has, or none. These are metric-compatible with
	// the common web fonts, so layouts (and screenshots) come out alike
	// on every machine.
	for _, pkg := range []string{"fonts-liberation", "fonts-dejavu-core"} {
		if !debInstalled(ctx, pkg) {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		fmt.Fprintln(logw, "system packages: chromium, its headless shell, nodejs, npm, bubblewrap and fonts already installed")
		return nil
	}
	fmt.Fprintf(logw, "apt-get installing %s\n", strings.Join(missing, " "))
	run := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = logw, logw
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get %s: %w", args[0], err)
		}
		return nil
	}
	if err := run("update"); err != nil {
		return err
	}
	return run(append([]string{"install", "-y", "--no-install-recommends"}, missing...)...)
}

// debInstalled reports whether a Debian package is installed.
func debInstalled(ctx context.Context, pkg string) bool {
	out, err := runQuiet(ctx, "dpkg-query", "-W", "-f=${Status}", pkg)
	return err == nil && strings.Contains(out, "install ok installed")
}

func isDebianLike() bool {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || (k != "ID" && k != "ID_LIKE") {
			continue
		}
		for _, id := range strings.Fields(strings.Trim(v, `"`)) {
			if id == "debian" || id == "ubuntu" {
				return true
			}
		}
	}
	return false
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// hintedError carries advice for the user next to the error.
type hintedError struct {
	err  error
	hint string
}

func (e *hintedError) Error() string { return e.err.Error() }
func (e *hintedError) Unwrap() error { return e.err }
func (e *hintedError) Hint() string  { return e.hint }

func withHint(err error, hint string) error { return &hintedError{err: err, hint: hint} }
