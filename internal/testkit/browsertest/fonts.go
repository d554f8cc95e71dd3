package browsertest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/gobolditalic"
	"golang.org/x/image/font/gofont/goitalic"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/goregular"
)

// Fixture pages render with fonts surf ships, never with the machine's:
// which fonts fontconfig picks for "sans-serif" or "Arial" changes with the
// packages installed (fonts-urw-base35 turns Arial into Nimbus Sans), and
// with it every line break, box and golden image. Every fixture page
// served by [Sites] links FontsCSS, which names the Go fonts
// (golang.org/x/image/font/gofont) for all text, form controls included;
// the font files are served by the same origin, from the Go module.

// FontsPath is where the fixture fonts and their style sheet are served.
const FontsPath = "/_surf_fonts/"

// FontFamilies are the families fixture pages render text with.
var FontFamilies = []string{"Go", "Go Mono"}

type shippedFont struct {
	file, family, weight, style string
	ttf                         []byte
}

var shippedFonts = []shippedFont{
	{"go-regular.ttf", "Go", "normal", "normal", goregular.TTF},
	{"go-bold.ttf", "Go", "bold", "normal", gobold.TTF},
	{"go-italic.ttf", "Go", "normal", "italic", goitalic.TTF},
	{"go-bold-italic.ttf", "Go", "bold", "italic", gobolditalic.TTF},
	{"go-mono.ttf", "Go Mono", "normal", "normal", gomono.TTF},
	{"go-mono-bold.ttf", "Go Mono", "bold", "normal", gomonobold.TTF},
}

// fontsCSS declares the shipped fonts and makes them the only ones text
// uses. font-display: block keeps fallback glyphs off the screen while a
// face loads.
var fontsCSS = func() string {
	var b strings.Builder
	for _, f := range shippedFonts {
		fmt.Fprintf(&b, "@font-face{font-family:%q;src:url(%s%s) format(\"truetype\");font-weight:%s;font-style:%s;font-display:block}\n",
			f.family, FontsPath, f.file, f.weight, f.style)
	}
	b.WriteString(`*,*::before,*::after,::placeholder,input,select,textarea,button,option{font-family:"Go",sans-serif!important}
code,pre,kbd,samp,tt,code *,pre *,kbd *,samp *{font-family:"Go Mono",monospace!important}
`)
	return b.String()
}()

// fontLink is inserted into every fixture page: the style sheet, and a
// preload of each face, which makes the page's load event wait for the
// fonts (a face the style sheet alone asks for may load after it, and a
// page observed then would be drawn with fallback glyphs).
var fontLink = func() string {
	var b strings.Builder
	for _, f := range shippedFonts {
		fmt.Fprintf(&b, `<link rel="preload" href="%s%s" as="font" type="font/ttf" crossorigin>`, FontsPath, f.file)
	}
	fmt.Fprintf(&b, `<link rel="stylesheet" href="%sfonts.css">`, FontsPath)
	return b.String()
}()

// serveFont serves the style sheet and the font files; it reports whether
// path was one of them.
func serveFont(w http.ResponseWriter, r *http.Request) bool {
	name, ok := strings.CutPrefix(r.URL.Path, FontsPath)
	if !ok {
		return false
	}
	w.Header().Set("Cache-Control", "max-age=3600")
	if name == "fonts.css" {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Write([]byte(fontsCSS))
		return true
	}
	for _, f := range shippedFonts {
		if f.file == name {
			w.Header().Set("Content-Type", "font/ttf")
			w.Write(f.ttf)
			return true
		}
	}
	http.NotFound(w, r)
	return true
}

// withFonts inserts the fixture fonts' style sheet into an HTML page:
// first thing in its <head>, or before everything when it has none. A
// page's own styles come later, and the sheet's !important wins over them.
func withFonts(page []byte) []byte {
	lower := bytes.ToLower(page)
	if i := bytes.Index(lower, []byte("<head")); i >= 0 {
		if j := bytes.IndexByte(page[i:], '>'); j >= 0 {
			at := i + j + 1
			return append(append(append([]byte{}, page[:at]...), fontLink...), page[at:]...)
		}
	}
	// A page without <head>: after the doctype, if any, so the document
	// stays in standards mode.
	at := 0
	if bytes.HasPrefix(bytes.TrimSpace(lower), []byte("<!doctype")) {
		start := bytes.Index(lower, []byte("<!doctype"))
		if j := bytes.IndexByte(page[start:], '>'); j >= 0 {
			at = start + j + 1
		}
	}
	return append(append(append([]byte{}, page[:at]...), fontLink...), page[at:]...)
}
