package surf_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const module = "github.com/surfkit/surf"

// goCmd runs the go command in dir with env added to this process's
// environment, and returns its standard output.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s (in %s): %v\n%s%s", strings.Join(args, " "), dir, err, out, stderr.Bytes())
	}
	return string(out)
}

// repoRoot is the directory of surf's go.mod (the test runs in it).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return root
}

// goEnv is the environment of the go commands the tests run: no
// toolchain download and no workspace, but the module proxy as configured
// (go env GOPROXY). A warm module cache answers without the network; an
// empty one, as on a fresh machine or in CI (.ci/run), is filled from the
// proxy. A test must never assume that the cache holds what it needs:
// GOPROXY=off fails on a fresh machine with "module lookup disabled".
var goEnv = []string{"GOWORK=off", "GOTOOLCHAIN=local"}

// goAPIGuide is the guide that holds the Go API program.
const goAPIGuide = "docs/go-api.md"

// goAPISnippet is the Go program in the Go API guide: its first go code
// block, a whole program.
func goAPISnippet(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(goAPIGuide)))
	if err != nil {
		t.Fatal(err)
	}
	_, code, ok := strings.Cut(string(b), "```go\n")
	if !ok {
		t.Fatal(goAPIGuide + " has no go code block")
	}
	code, _, ok = strings.Cut(code, "\n```")
	if !ok || !strings.HasPrefix(code, "package main\n") {
		t.Fatal(goAPIGuide + "'s go code block is not a whole program (package main ... )")
	}
	return code + "\n"
}

// requiredVersion is the version of mod that surf's go.mod requires.
func requiredVersion(t *testing.T, root, mod string) string {
	t.Helper()
	v := strings.TrimSpace(goCmd(t, root, goEnv, "list", "-m", "-f", "{{.Version}}", mod))
	if v == "" {
		t.Fatalf("surf does not require %s", mod)
	}
	return v
}

// goDirective is the go line of surf's go.mod.
func goDirective(t *testing.T, root string) string {
	t.Helper()
	var m struct{ Go string }
	if err := json.Unmarshal([]byte(goCmd(t, root, goEnv, "mod", "edit", "-json")), &m); err != nil {
		t.Fatal(err)
	}
	return m.Go
}

// TestEmbedderGetsPatchedPlaywright builds the Go API guide's program as
// a module of its own that requires surf through a replace of surf alone
// (no replace of Playwright), as an embedder would, and checks that the
// binary holds surf's patched Playwright (third_party/playwright-go, with
// the popup race fixed) and not upstream playwright-go. Modules missing
// from the module cache come from the configured proxy.
func TestEmbedderGetsPatchedPlaywright(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module (slow)")
	}
	root := repoRoot(t)
	dir := t.TempDir()
	gomod := "module example.com/consumer\n\ngo " + goDirective(t, root) + "\n\n" +
		"require (\n\t" + module + " v0.0.0\n" +
		"\tgithub.com/sashabaranov/go-openai " + requiredVersion(t, root, "github.com/sashabaranov/go-openai") + "\n)\n\n" +
		"replace " + module + " => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": gomod, "go.sum": string(sum), "main.go": goAPISnippet(t, root)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "consumer")
	// -mod=mod: the consumer's go.mod names only its direct requirements,
	// as an embedder's first go.mod would; the go command completes it.
	goCmd(t, dir, goEnv, "build", "-mod=mod", "-o", bin, ".")

	info := goCmd(t, dir, goEnv, "version", "-m", bin)
	if !regexp.MustCompile(`(?m)^\s*dep\s+`+regexp.QuoteMeta(module)+`\s+v0\.0\.0\s*$`).MatchString(info) ||
		!regexp.MustCompile(`(?m)^\s*=>\s+`+regexp.QuoteMeta(root)+`\s`).MatchString(info) {
		t.Errorf("the consumer was not built against this surf:\n%s", info)
	}
	if strings.Contains(info, "playwright-community") {
		t.Errorf("the consumer links upstream playwright-go:\n%s", info)
	}
	syms := goCmd(t, dir, nil, "tool", "nm", bin)
	for _, want := range []string{
		// The fork, as a package of surf's module.
		module + "/third_party/playwright-go.(*pageImpl).Goto",
		// Patch 1 (PATCHES.md): a frame's page is published through an
		// atomic.Pointer, which upstream does not have.
		"sync/atomic.Pointer[" + module + "/third_party/playwright-go.pageImpl]",
	} {
		if !strings.Contains(syms, want) {
			t.Errorf("the consumer binary has no symbol %q", want)
		}
	}
	if strings.Contains(syms, "github.com/playwright-community/") {
		t.Error("the consumer binary holds symbols of upstream playwright-go")
	}
}

// TestGoInstallFromModulePath publishes surf's module, as it is in this
// tree, at a test version on a local file:// module proxy and runs `go
// install github.com/surfkit/surf/cmd/surf@VERSION` against it (the other
// modules come from the module cache's download directory, else from the
// configured proxy), then runs the installed binary.
func TestGoInstallFromModulePath(t *testing.T) {
	if testing.Short() {
		t.Skip("installs surf from a module proxy (slow)")
	}
	root := repoRoot(t)
	const version = "v0.0.1-installtest"
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	vdir := filepath.Join(proxy, filepath.FromSlash(module), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	info := `{"Version":"` + version + `","Time":"` + time.Now().UTC().Format(time.RFC3339) + `"}`
	for name, data := range map[string][]byte{"list": []byte(version + "\n"), version + ".info": []byte(info), version + ".mod": gomod} {
		if err := os.WriteFile(filepath.Join(vdir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeModuleZip(t, root, version, filepath.Join(vdir, version+".zip"))

	modcache := strings.TrimSpace(goCmd(t, root, nil, "env", "GOMODCACHE"))
	upstream := strings.TrimSpace(goCmd(t, root, nil, "env", "GOPROXY"))
	gobin := filepath.Join(tmp, "bin")
	env := []string{
		// The test version of surf exists only on the local proxy; a module
		// the cache's download directory lacks (a fresh machine) comes from
		// the configured proxy: a file:// proxy's "not found" falls through
		// to the next in the list.
		"GOPROXY=file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(modcache, "cache", "download")) + "," + upstream,
		// -trimpath keeps the build cache independent of where the module
		// cache is, so only the first run compiles the dependencies again.
		"GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw -trimpath",
		"GOMODCACHE=" + filepath.Join(tmp, "modcache"), // surf@version must not land in the real cache
		"GOBIN=" + gobin,
	}
	goCmd(t, tmp, env, "install", module+"/cmd/surf@"+version)

	out, err := exec.Command(filepath.Join(gobin, "surf"), "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("the installed surf --version: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "surf "+version) {
		t.Fatalf("the installed surf --version says %q, want surf %s", out, version)
	}
}

// writeModuleZip writes the module zip of surf at version from the files
// git tracks, or does not ignore, in root's working tree: the layout the
// go command expects from a proxy (every path under module@version/).
func writeModuleZip(t *testing.T, root, version, dst string) {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	list, err := cmd.Output()
	if err != nil {
		t.Fatalf("listing the module's files needs a git checkout: %v", err)
	}
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	names := strings.Split(string(list), "\x00")
	// A directory with a go.mod of its own is another module: the go
	// command leaves it out of this one's zip.
	var nested []string
	for _, name := range names {
		if filepath.Base(name) == "go.mod" && name != "go.mod" {
			nested = append(nested, filepath.Dir(name)+"/")
		}
	}
	seen := map[string]bool{}
names:
	for _, name := range names {
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		for _, n := range nested {
			if strings.HasPrefix(name, n) {
				continue names
			}
		}
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink (module zips hold neither)
		}
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(module + "@" + version + "/" + filepath.ToSlash(name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}
