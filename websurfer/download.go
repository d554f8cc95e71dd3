package websurfer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/surfkit/surf/third_party/playwright-go"
)

// Downloads. The browser writes a download into its own directory
// (Playwright's artifacts, named by the download's guid) and surf copies
// it into the session's downloads directory once complete. The size cap
// holds while the browser writes: the file being written is watched (and
// the renderer's progress events, for a browser on another machine), and
// the download is cancelled as soon as it passes the cap, which makes the
// browser delete it. The copy is bounded too, and made without following
// links: a name that exists in the downloads directory (a file, or a link
// planted there) is never written through; the download gets a free name.

// dlWatchEvery is how often the file a download is written to is looked
// at while it grows.
const dlWatchEvery = 5 * time.Millisecond

// dlProgress is what the renderer said of a download (Page.downloadWillBegin
// and Page.downloadProgress on surf's own session).
type dlProgress struct {
	url      string
	received int64
	claimed  bool // a saveDownload follows it
}

// downloads tracks the downloads the renderers announced, by guid.
type downloads struct {
	mu   sync.Mutex
	byID map[string]*dlProgress
	seq  []string // guids in the order announced
}

func (d *downloads) begin(guid, url string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byID == nil {
		d.byID = map[string]*dlProgress{}
	}
	if _, ok := d.byID[guid]; !ok {
		d.byID[guid] = &dlProgress{url: url}
		d.seq = append(d.seq, guid)
		if len(d.seq) > 100 { // forget the oldest
			delete(d.byID, d.seq[0])
			d.seq = d.seq[1:]
		}
	}
}

func (d *downloads) progress(guid string, received int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.byID[guid]; p != nil && received > p.received {
		p.received = received
	}
}

// claim returns the guid of the oldest unclaimed download of url, or "".
func (d *downloads) claim(url string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, g := range d.seq {
		if p := d.byID[g]; p != nil && !p.claimed && p.url == url {
			p.claimed = true
			return g
		}
	}
	return ""
}

func (d *downloads) received(guid string) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.byID[guid]; p != nil {
		return p.received
	}
	return 0
}

// onRendererDownload records the renderer's download events (see
// watchRenderer).
func (s *Surfer) onRendererDownload(method string, ev map[string]any) {
	guid, _ := ev["guid"].(string)
	if guid == "" {
		return
	}
	switch method {
	case "Page.downloadWillBegin":
		u, _ := ev["url"].(string)
		s.dls.begin(guid, u)
	case "Page.downloadProgress":
		if n, ok := ev["receivedBytes"].(float64); ok {
			s.dls.progress(guid, int64(n))
		}
	}
}

// startSaving hands a download over to saveDownload: from now on the
// action that started it waits for it (see downloading). It runs on
// Playwright's event goroutine, before saveDownload's own starts.
func (s *Surfer) startSaving(d playwright.Download) {
	s.dlWG.Add(1)
	s.evmu.Lock()
	s.announced = max(s.announced-1, 0)
	s.saving++
	s.evmu.Unlock()
	go s.saveDownload(d)
}

// saveDownload keeps a download in the session's downloads directory,
// under the size cap.
func (s *Surfer) saveDownload(d playwright.Download) {
	defer s.dlWG.Done()
	defer func() {
		s.evmu.Lock()
		s.saving--
		s.evmu.Unlock()
	}()
	name := safeFileName(d.SuggestedFilename())
	fail := func(format string, args ...any) {
		s.pushEvent(Event{Kind: "download", Message: fmt.Sprintf("download %s ", q(name, 80)) + fmt.Sprintf(format, args...), URL: d.URL()})
	}
	limit := s.cfg.MaxDownloadBytes
	over, err := s.finishBounded(d, limit)
	if over > 0 {
		fail("was stopped: %d bytes is over the cap of %d", over, limit)
		return
	}
	if err != nil {
		fail("failed: %v", err)
		return
	}
	path, size, err := s.keepDownload(d, name, limit)
	d.Delete() // the browser's copy
	if errors.Is(err, errOverCap) {
		fail("was discarded: %d bytes is over the cap of %d", size, limit)
		return
	}
	if err != nil {
		fail("failed: %v", err)
		return
	}
	s.pushEvent(Event{Kind: "download", Message: fmt.Sprintf("downloaded %s (%d bytes) to %s", q(name, 80), size, path), Path: path, URL: d.URL()})
}

var errOverCap = errors.New("over the cap")

// finishBounded waits until d is complete, cancelling it once the browser
// has written more than limit bytes of it; over is how many it had then
// (0 if it stayed under).
func (s *Surfer) finishBounded(d playwright.Download, limit int64) (over int64, err error) {
	done := make(chan error, 1)
	go func() {
		if f := d.Failure(); f != nil { // waits for the end
			done <- f
			return
		}
		done <- nil
	}()
	guid := ""
	dir := s.sess.BrowserDownloadsDir()
	tick := time.NewTicker(dlWatchEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return 0, err
		case <-tick.C:
		}
		if guid == "" {
			guid = s.dls.claim(d.URL())
		}
		if guid == "" {
			continue
		}
		n := s.dls.received(guid)
		if dir != "" {
			for _, p := range []string{filepath.Join(dir, guid+".crdownload"), filepath.Join(dir, guid)} {
				if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
					n = max(n, fi.Size())
				}
			}
		}
		if n > limit {
			d.Cancel()
			<-done
			d.Delete()
			// The browser removes a cancelled download's partial file in
			// its own time, after it has reported the cancel; the cap is
			// on the disk now, so surf removes it itself.
			if dir != "" {
				for _, p := range []string{filepath.Join(dir, guid+".crdownload"), filepath.Join(dir, guid)} {
					os.Remove(p)
				}
			}
			return n, nil
		}
	}
}

// keepDownload copies a complete download into the downloads directory
// under a free name made from name, at most limit bytes of it. It returns
// the path, or errOverCap and the size.
func (s *Surfer) keepDownload(d playwright.Download, name string, limit int64) (string, int64, error) {
	dir := s.sess.Info().DownloadsDir
	// The copy is made in a directory of surf's own, then linked to its
	// name: link(2) never follows nor replaces what is there.
	tmpDir, err := os.MkdirTemp(dir, ".surf-download-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(tmpDir)
	var src *os.File
	if p, err := d.Path(); err == nil {
		if src, err = os.Open(p); err != nil {
			return "", 0, err
		}
	} else {
		// A remote browser: Playwright streams the file here.
		whole := filepath.Join(tmpDir, "whole")
		if err := d.SaveAs(whole); err != nil {
			return "", 0, err
		}
		if src, err = os.Open(whole); err != nil {
			return "", 0, err
		}
	}
	defer src.Close()
	tmp := filepath.Join(tmpDir, "bounded")
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", 0, err
	}
	n, err := io.Copy(out, io.LimitReader(src, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	if n > limit {
		if fi, err := src.Stat(); err == nil {
			n = fi.Size()
		}
		return "", n, errOverCap
	}
	path, err := linkFree(tmp, filepath.Join(dir, name))
	return path, n, err
}

// linkFree links tmp at path, or at "path (1)", "path (2)"... if that name
// is taken by anything (a link included), and checks that what is there
// is tmp.
func linkFree(tmp, path string) (string, error) {
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(path, ext)
	for i := 0; i < 1000; i++ {
		p := path
		if i > 0 {
			p = fmt.Sprintf("%s (%d)%s", base, i, ext)
		}
		err := os.Link(tmp, p)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		a, err1 := os.Lstat(tmp)
		b, err2 := os.Lstat(p)
		if err1 != nil || err2 != nil || !b.Mode().IsRegular() || !os.SameFile(a, b) {
			return "", fmt.Errorf("%s is not the file surf wrote", p)
		}
		return p, nil
	}
	return "", fmt.Errorf("no free name for %s", filepath.Base(path))
}

// safeFileName keeps a suggested download name from escaping the
// downloads directory or hiding.
func safeFileName(n string) string {
	n = filepath.Base(strings.ReplaceAll(n, "\\", "/"))
	n = strings.Map(func(r rune) rune {
		if r < 32 || r == '/' || r == 0x7f {
			return '_'
		}
		return r
	}, n)
	n = strings.TrimLeft(n, ".")
	if n == "" {
		n = "download"
	}
	if len(n) > 120 {
		n = n[len(n)-120:]
	}
	return n
}
