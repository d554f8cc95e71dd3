package sandbox_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io/fs"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// Adversarial pages against surf's own outputs (see
// testdata/adversarial/README.md): a surfer, not just a page, runs each,
// and the canary must stay silent as for the egress attacks.

// leakSite serves the fixtures (as the egress suite does) plus the
// downloads the download pages offer, and records the form submissions.
type leakSite struct {
	*fixtures
	sent      atomic.Int64 // bytes of big.bin written to the browser
	mu        sync.Mutex
	submitted []string // the q of each /ok/secret-encodings/submit
}

// bigDownload is far over the cap the download test sets.
const bigDownload = 256 << 20

func newLeakSite(t *testing.T) *leakSite {
	s := &leakSite{fixtures: &fixtures{log: map[string]int{}}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/big.bin"):
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Disposition", `attachment; filename="big.bin"`)
			w.Header().Set("Content-Length", strconv.Itoa(bigDownload))
			buf := bytes.Repeat([]byte("surf"), 16<<10)
			for sent := 0; sent < bigDownload; sent += len(buf) {
				n, err := w.Write(buf)
				s.sent.Add(int64(n))
				if err != nil {
					return
				}
			}
		case strings.HasSuffix(r.URL.Path, "/planted.txt"):
			w.Header().Set("Content-Type", "text/plain")
			w.Header().Set("Content-Disposition", `attachment; filename="planted.txt"`)
			fmt.Fprint(w, "the download's own bytes\n")
		case r.URL.Path == "/ok/secret-encodings/submit":
			s.mu.Lock()
			s.submitted = append(s.submitted, r.URL.Query().Get("q"))
			s.mu.Unlock()
			s.fixtures.ServeHTTP(w, r)
		default:
			s.fixtures.ServeHTTP(w, r)
		}
	})
	s.a = listen(t, "127.0.0.1", h)
	s.b = listen(t, "127.0.0.3", h)
	return s
}

// leakSurfer opens a session and a surfer on it for one attack page.
func leakSurfer(t *testing.T, pol *policy.Policy, scfg sandbox.SessionConfig, cfg websurfer.Config) (*websurfer.Surfer, *sandbox.Session) {
	t.Helper()
	scfg.Policy = pol
	scfg.Timeout = 10 * time.Second
	sess := browsertest.Session(t, scfg)
	cfg.Session = sess
	s, err := websurfer.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, sess
}

func attackURL(s *leakSite, c *canary, page, name string) string {
	v := url.Values{"canary": {strconv.Itoa(c.port)}, "udp": {strconv.Itoa(c.udpPort)}, "attack": {name}}
	return s.a.URL + "/a/" + page + "?" + v.Encode()
}

func elementID(t *testing.T, obs *websurfer.Observation, name string) (int, websurfer.Box) {
	t.Helper()
	for _, e := range obs.Elements {
		if e.Name == name {
			return e.ID, e.Box
		}
	}
	t.Fatalf("no element %q in\n%s", name, obs.Text())
	return 0, websurfer.Box{}
}

// waitEvent observes until an event's message contains want (downloads
// finish after the action that started them) and returns every event
// seen.
func waitEvent(t *testing.T, s *websurfer.Surfer, first *websurfer.Observation, want string) []websurfer.Event {
	t.Helper()
	events := append([]websurfer.Event(nil), first.Events...)
	for i := 0; i < 600; i++ {
		for _, e := range events {
			if strings.Contains(e.Message, want) {
				return events
			}
		}
		time.Sleep(100 * time.Millisecond)
		obs, err := s.Observe(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, obs.Events...)
	}
	t.Fatalf("no event says %q: %+v", want, events)
	return nil
}

// TestAdversarialDownloadOverCap: a download far over the cap is stopped
// while the browser receives it, not once it is on disk: the server
// manages to send little more than the cap, nothing is kept, and the
// browser's own copy is gone.
func TestAdversarialDownloadOverCap(t *testing.T) {
	const capBytes = 4 << 20
	site := newLeakSite(t)
	c := newCanary(t)
	s, sess := leakSurfer(t, attackPolicy(false), sandbox.SessionConfig{}, websurfer.Config{MaxDownloadBytes: capBytes, Image: websurfer.ImageNone})
	res, err := s.VisitURL(context.Background(), attackURL(site, c, "download-big.html", "download-big"))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := elementID(t, res.Observation, "Get the big file")
	// What the download takes on disk, as often as the test can look.
	var peak atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			peak.Store(max(peak.Load(), dirBytes(sess.Info().DownloadsDir)+dirBytes(sess.BrowserDownloadsDir())))
			time.Sleep(time.Millisecond)
		}
	}()
	res, err = s.Click(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	events := waitEvent(t, s, res.Observation, "big.bin")
	close(stop)
	wg.Wait()
	t.Logf("the server sent %d MiB; the disk held at most %d MiB (cap %d MiB); events %+v", site.sent.Load()>>20, peak.Load()>>20, capBytes>>20, events)
	if !strings.Contains(fmt.Sprint(events), "over the cap") {
		t.Errorf("the download is not reported over the cap: %+v", events)
	}
	// The browser cannot have written more than it received. Loopback
	// socket buffers, the egress proxy and Chromium's pipe hold some MiB
	// between the server and the file, and the browser goes on
	// receiving for the moment the cancel takes.
	if sent := site.sent.Load(); sent > capBytes+64<<20 {
		t.Errorf("the server sent %d MiB of a %d MiB download with a cap of %d MiB: the download was not stopped at the cap", sent>>20, bigDownload>>20, capBytes>>20)
	}
	if p := peak.Load(); p > capBytes+32<<20 {
		t.Errorf("the downloads took %d MiB of disk with a cap of %d MiB", p>>20, capBytes>>20)
	}
	entries, _ := os.ReadDir(sess.Info().DownloadsDir)
	for _, e := range entries {
		t.Errorf("the downloads dir keeps %s", e.Name())
	}
	if n := dirBytes(sess.BrowserDownloadsDir()); n > capBytes {
		t.Errorf("the browser's downloads dir keeps %d bytes", n)
	}

	// The canary's copy is refused.
	if _, err := s.Click(context.Background(), mustID(t, s, "Get it from the canary")); err != nil && !errors.Is(err, policy.ErrDenied) {
		t.Logf("clicking the canary's link: %v", err)
	}
	time.Sleep(500 * time.Millisecond)
	if c.hits() != 0 {
		t.Errorf("the canary was reached: %s", c)
	}
}

func mustID(t *testing.T, s *websurfer.Surfer, name string) int {
	t.Helper()
	obs, err := s.Observe(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := elementID(t, obs, name)
	return id
}

// dirBytes is the disk the regular files directly in dir take.
func dirBytes(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestAdversarialDownloadSymlink: names planted in the downloads directory
// as links (one to a missing file, one to an existing file) are not
// written through; the download gets a free name.
func TestAdversarialDownloadSymlink(t *testing.T) {
	site := newLeakSite(t)
	c := newCanary(t)
	s, sess := leakSurfer(t, attackPolicy(false), sandbox.SessionConfig{}, websurfer.Config{Image: websurfer.ImageNone})
	dir := sess.Info().DownloadsDir
	outside := t.TempDir()
	missing := filepath.Join(outside, "created-through-the-link")
	existing := filepath.Join(outside, "existing")
	if err := os.WriteFile(existing, []byte("unchanged\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"planted.txt": missing, "planted (1).txt": existing} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.VisitURL(context.Background(), attackURL(site, c, "download-symlink.html", "download-symlink"))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := elementID(t, res.Observation, "Get the file")
	res, err = s.Click(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	events := waitEvent(t, s, res.Observation, "planted")
	if _, err := os.Lstat(missing); !os.IsNotExist(err) {
		t.Errorf("the download was written through the link planted as planted.txt: %v", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "unchanged\n" {
		t.Errorf("the file behind planted (1).txt changed: %q", b)
	}
	for _, name := range []string{"planted.txt", "planted (1).txt"} {
		if fi, err := os.Lstat(filepath.Join(dir, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the planted link: %v", name, err)
		}
	}
	kept := filepath.Join(dir, "planted (2).txt")
	if b, err := os.ReadFile(kept); err != nil || string(b) != "the download's own bytes\n" {
		t.Errorf("the download is not at %s: %q, %v; events %+v", kept, b, err, events)
	}
	if fi, err := os.Lstat(kept); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("%s is not a regular file: %v", kept, err)
	}
	if c.hits() != 0 {
		t.Errorf("the canary was reached: %s", c)
	}
}

// leakSecret has characters every encoding writes its own way.
const leakSecret = `s3 cr*t~&+ü`

// secretForms are the encodings of leakSecret the page and the browser
// write: none may show anywhere surf reports.
var secretForms = []string{
	leakSecret,
	"s3+cr*t%7E%26%2B%C3%BC", // a form as Chromium submits it, URLSearchParams
	"s3%20cr*t~%26%2B%C3%BC", // encodeURIComponent
	"s3%20cr*t~&+%C3%BC",     // a raw query as the URL parser leaves it
	"s3+cr%2At~%26%2B%C3%BC", // Go's QueryEscape
	"czMgY3IqdH4mK8O8",       // base64
	"s3 cr*t~\\u0026+ü",      // JSON with HTML escaping
}

func leaks(s string) []string {
	var out []string
	for _, f := range secretForms {
		if strings.Contains(s, f) {
			out = append(out, f)
		}
	}
	return out
}

// TestAdversarialSecretEncodings: a page echoes a secret typed into it in
// every encoding it can and submits it in a GET form; the observations
// (text, elements, URL, title, tabs, JSON), the images and the HAR
// recording show none of them, the secret reaches the allowed server,
// and the canary stays silent.
func TestAdversarialSecretEncodings(t *testing.T) {
	site := newLeakSite(t)
	c := newCanary(t)
	loop, err := policy.ParseHostRule("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	b, err := policy.ParseHostRule("127.0.0.3")
	if err != nil {
		t.Fatal(err)
	}
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{loop, b},
		Secrets: []policy.Secret{{Name: "PW", Value: leakSecret, Hosts: []policy.HostRule{loop}}},
	})
	har := filepath.Join(t.TempDir(), "site.har")
	s, sess := leakSurfer(t, pol, sandbox.SessionConfig{RecordHAR: har}, websurfer.Config{Image: websurfer.ImagePlain})
	ctx := context.Background()
	res, err := s.VisitURL(ctx, attackURL(site, c, "secret-encodings.html", "secret-encodings"))
	if err != nil {
		t.Fatal(err)
	}
	id, field := elementID(t, res.Observation, "Secret field")
	var seen []*websurfer.Observation
	res, err = s.InputText(ctx, id, "<secret:PW>", false, true)
	if err != nil {
		t.Fatal(err)
	}
	typed := res.Observation
	seen = append(seen, typed)
	shot, err := s.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for what, data := range map[string][]byte{"the observation's image": typed.Image, "Screenshot": shot} {
		for where, box := range map[string]websurfer.Box{
			"the field":  field,
			"the echo":   {X: 40, Y: 200, W: 200, H: 30},
			"the base64": {X: 40, Y: 260, W: 200, H: 22},
		} {
			if sp := boxSpread(t, data, typed.Viewport.Width, box); sp > 24 {
				t.Errorf("%s: %s shows the secret (spread %.0f)", what, where, sp)
			}
		}
	}
	res, err = s.InputText(ctx, id, "<secret:PW>", true, true)
	if err != nil {
		t.Fatal(err)
	}
	seen = append(seen, res.Observation)
	texts := []string{res.Summary}
	for _, o := range seen {
		j, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, o.Text(), string(j))
	}
	if l := leaks(strings.Join(texts, "\n")); len(l) > 0 {
		t.Errorf("the observations show the secret as %q", l)
	}
	if !strings.Contains(res.Observation.URL, "q=<secret:PW>") {
		t.Errorf("after the GET form, the URL is %q", res.Observation.URL)
	}
	site.mu.Lock()
	submitted := append([]string(nil), site.submitted...)
	site.mu.Unlock()
	if len(submitted) != 1 || submitted[0] != leakSecret {
		t.Errorf("the allowed server received %q, want the secret", submitted)
	}
	s.Close()
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := os.ReadFile(har)
	if err != nil {
		t.Fatal(err)
	}
	if l := leaks(string(rec)); len(l) > 0 {
		t.Errorf("the HAR recording shows the secret as %q", l)
	}
	if c.hits() != 0 {
		t.Errorf("the canary was reached: %s", c)
	}
}

// boxSpread is the largest difference of a pixel's luma from the mean in
// a viewport box (CSS pixels, inset by 3) of a JPEG: small for a mask,
// large where text is drawn.
func boxSpread(t *testing.T, data []byte, viewportW int, b websurfer.Box) float64 {
	t.Helper()
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	scale := float64(img.Bounds().Dx()) / float64(viewportW)
	r := image.Rect(int(math.Ceil((b.X+3)*scale)), int(math.Ceil((b.Y+3)*scale)), int((b.X+b.W-3)*scale), int((b.Y+b.H-3)*scale))
	return browsertest.LumaSpread(img, r)
}
