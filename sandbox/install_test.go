package sandbox_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surfkit/surf/sandbox"
)

// fakeDriverTarball is an npm tarball whose cli.js answers --version like
// the real driver.
func fakeDriverTarball(t *testing.T, version string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	files := map[string]string{
		"package/package.json": `{"name":"playwright-core","version":"` + version + `"}`,
		"package/cli.js":       `if (process.argv.includes('--version')) console.log('Version ` + version + `');`,
	}
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

// fakeRegistry serves playwright-core's metadata and tarball like the npm
// registry does.
func fakeRegistry(t *testing.T, tgz []byte, integrityOf []byte) (*httptest.Server, *atomic.Int32) {
	sum := sha512.Sum512(integrityOf)
	integrity := "sha512-" + base64.StdEncoding.EncodeToString(sum[:])
	var tarballs atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/playwright-core/" + sandbox.DriverVersion:
			fmt.Fprintf(w, `{"name":"playwright-core","version":%q,"dist":{"tarball":"%s/playwright-core/-/playwright-core-%s.tgz","integrity":%q}}`,
				sandbox.DriverVersion, srv.URL, sandbox.DriverVersion, integrity)
		case "/playwright-core/-/playwright-core-" + sandbox.DriverVersion + ".tgz":
			tarballs.Add(1)
			w.Write(tgz)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &tarballs
}

func TestInstallFromRegistry(t *testing.T) {
	tgz := fakeDriverTarball(t, sandbox.DriverVersion)
	reg, tarballs := fakeRegistry(t, tgz, tgz)
	dir := filepath.Join(t.TempDir(), "driver")
	env := sandbox.Env{DriverDir: dir, Registry: reg.URL}
	var log bytes.Buffer
	st, _ := sandbox.Install(context.Background(), sandbox.InstallConfig{Env: env, Log: &log})
	if st == nil || st.DriverVersion != sandbox.DriverVersion {
		t.Fatalf("status after install = %+v\n%s", st, log.String())
	}
	if target, err := os.Readlink(filepath.Join(dir, "node")); err != nil || !strings.Contains(target, "node") {
		t.Errorf("driver dir has no node link: %q %v", target, err)
	}
	// Running it again keeps what is there.
	if _, err := sandbox.Install(context.Background(), sandbox.InstallConfig{Env: env}); err != nil && !strings.Contains(err.Error(), "chromium") {
		t.Fatal(err)
	}
	if n := tarballs.Load(); n != 1 {
		t.Errorf("tarball fetched %d times; a second install must not fetch again", n)
	}
	// The version check is what --check reports.
	if got := sandbox.Check(context.Background(), env); got.DriverVersion != sandbox.DriverVersion {
		t.Errorf("Check: driver %q", got.DriverVersion)
	}
	// Removing the driver makes Check report it, with the install hint.
	os.RemoveAll(filepath.Join(dir, "package"))
	got := sandbox.Check(context.Background(), env)
	if got.Ready() || !strings.Contains(strings.Join(got.Problems, ";"), "not installed") {
		t.Errorf("Check without a driver = %+v", got)
	}
	var h interface{ Hint() string }
	if err := got.Err(); err == nil || !asHint(err, &h) || !strings.Contains(h.Hint(), "surf install") {
		t.Errorf("Err() = %v; want a hint to run surf install", err)
	}
}

func asHint(err error, h *interface{ Hint() string }) bool {
	v, ok := err.(interface{ Hint() string })
	if ok {
		*h = v
	}
	return ok
}

func TestInstallRefusesTamperedTarball(t *testing.T) {
	good := fakeDriverTarball(t, sandbox.DriverVersion)
	evil := fakeDriverTarball(t, "6.6.6")
	reg, _ := fakeRegistry(t, evil, good) // metadata promises good, serves evil
	dir := filepath.Join(t.TempDir(), "driver")
	_, err := sandbox.Install(context.Background(), sandbox.InstallConfig{Env: sandbox.Env{DriverDir: dir, Registry: reg.URL}})
	if err == nil || !strings.Contains(err.Error(), "integrity") {
		t.Fatalf("Install with a tampered tarball: %v; want an integrity error", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "package", "cli.js")); !os.IsNotExist(err) {
		t.Errorf("a tampered driver was installed: %v", err)
	}
}

func TestFindChromiumResolvesLauncherScript(t *testing.T) {
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err != nil {
		t.Skip("not a Debian chromium install")
	}
	got, err := sandbox.FindChromium("/usr/bin/chromium")
	if err != nil || got != "/usr/lib/chromium/chromium" {
		t.Errorf("FindChromium(/usr/bin/chromium) = %q, %v; want the real binary", got, err)
	}
	if _, err := sandbox.FindChromium("/nonexistent/chrome"); err == nil {
		t.Error("FindChromium accepted a missing file")
	}
}
