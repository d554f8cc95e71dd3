package report

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"html/template"
)

var (
	//go:embed page.html.tmpl
	pageSource string
	//go:embed style.css
	styleSource string
	//go:embed lightbox.js
	scriptSource string
)

// head is the page's inline style and script, and the policy that allows
// exactly them: nothing else runs or loads, even if a journal string got
// past escaping.
type head struct {
	Style  template.CSS
	Script template.JS
	CSP    string
}

var pageHead = head{
	Style:  template.CSS(styleSource),
	Script: template.JS(scriptSource),
	CSP: "default-src 'none'; img-src data:; style-src '" + sha256Source(styleSource) +
		"'; script-src '" + sha256Source(scriptSource) + "'; base-uri 'none'; form-action 'none'",
}

func sha256Source(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

var pageTemplate = template.Must(template.New("page").Parse(pageSource))
