package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	_ "image/jpeg" // the journal's screenshots
	_ "image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// shot is one observation's screenshot, inlined, or the reason it is not.
type shot struct {
	Src      template.HTMLAttr // src="data:..." of a JPEG or PNG we checked; empty when Missing
	Width    int
	Height   int
	Missing  string // why there is no image
	Path     string
	URL      string
	Title    string
	Elements int
	Tokens   int
	At       string
}

// imageLoader reads screenshots from inside the journal's directory only:
// the paths come from the journal, and the report must never inline a
// file from elsewhere.
type imageLoader struct {
	root    *os.Root
	rootErr error
	max     int64
	loaded  int
	missing int
}

func newImageLoader(dir string, max int64) *imageLoader {
	if dir == "" {
		dir = "."
	}
	r, err := os.OpenRoot(dir)
	return &imageLoader{root: r, rootErr: err, max: max}
}

func (l *imageLoader) close() {
	if l.root != nil {
		l.root.Close()
	}
}

// load returns the shot for an observed entry's image path. It never
// fails: a problem becomes a placeholder that says what is wrong.
func (l *imageLoader) load(path string) shot {
	sh := shot{Path: path}
	if path == "" {
		sh.Missing = "no screenshot was saved for this observation"
		l.missing++
		return sh
	}
	src, w, h, err := l.read(path)
	if err != nil {
		sh.Missing = err.Error()
		l.missing++
		return sh
	}
	sh.Src, sh.Width, sh.Height = src, w, h
	l.loaded++
	return sh
}

func (l *imageLoader) read(path string) (template.HTMLAttr, int, int, error) {
	rel := filepath.FromSlash(path)
	if !filepath.IsLocal(rel) {
		return "", 0, 0, fmt.Errorf("image %q is outside the journal's directory; not shown", path)
	}
	if l.rootErr != nil {
		return "", 0, 0, fmt.Errorf("image %q is missing (the journal's directory cannot be opened)", path)
	}
	f, err := l.root.Open(rel)
	if err != nil {
		if os.IsNotExist(err) {
			return "", 0, 0, fmt.Errorf("image %q is missing", path)
		}
		return "", 0, 0, fmt.Errorf("image %q cannot be read", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return "", 0, 0, fmt.Errorf("image %q is not a file", path)
	}
	if st.Size() > l.max {
		return "", 0, 0, fmt.Errorf("image %q is too large to inline (%s bytes)", path, thousands(st.Size()))
	}
	data, err := io.ReadAll(io.LimitReader(f, l.max+1))
	if err != nil || int64(len(data)) > l.max {
		return "", 0, 0, fmt.Errorf("image %q cannot be read", path)
	}
	mime := http.DetectContentType(data)
	if mime != "image/jpeg" && mime != "image/png" {
		return "", 0, 0, fmt.Errorf("image %q is not a JPEG or PNG", path)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || "image/"+format != mime {
		return "", 0, 0, fmt.Errorf("image %q is damaged", path)
	}
	// Safe as a whole attribute: the MIME type is one of two constants and
	// the payload is base64 ([A-Za-z0-9+/=]), so it cannot end the
	// attribute, carry markup or name another scheme. (Passed as a URL,
	// html/template would write each "+" as "&#43;".)
	return template.HTMLAttr(`src="data:` + mime + ";base64," + base64.StdEncoding.EncodeToString(data) + `"`), cfg.Width, cfg.Height, nil
}
