package websurfer

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// TestFixturesRenderWithShippedFonts: every glyph of every fixture page
// (the perception and action sites the goldens are made from) is drawn
// with a font surf ships, never with one the machine happens to have, so
// goldens hold on a machine with other font packages. Chromium says which
// fonts it used for each element's text (CSS.getPlatformFontsForNode).
func TestFixturesRenderWithShippedFonts(t *testing.T) {
	sites := browsertest.ServeSites(t)
	var pages []string
	for _, dir := range []string{"perception", "actions", "agent"} {
		files, err := filepath.Glob(filepath.Join(browsertest.RepoRoot(), "testdata", "sites", dir, "*.html"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			pages = append(pages, dir+"/"+filepath.Base(f))
		}
	}
	if len(pages) < 20 {
		t.Fatalf("found only %d fixture pages", len(pages))
	}
	// A page of the session's own, not a surfer's: Playwright dismisses
	// the dialogs some fixture pages open while they load (a surfer would
	// hold them for the model).
	sess := browsertest.Session(t, sandbox.SessionConfig{})
	pg, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cdp, err := pg.Context().NewCDPSession(pg)
	if err != nil {
		t.Fatal(err)
	}
	defer cdp.Detach()
	defer drawFramesFor(sess, cdp)()
	for _, cmd := range []string{"DOM.enable", "CSS.enable"} {
		if _, err := cdp.Send(cmd, nil); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	for _, page := range pages {
		if _, err := pg.Goto(sites.A + "/" + page); err != nil {
			t.Fatalf("loading %s: %v", page, err)
		}
		if _, err := pg.Evaluate(fontsReady); err != nil {
			t.Fatalf("%s: waiting for the fonts: %v", page, err)
		}
		raw, err := cdp.Send("DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
		if err != nil {
			t.Fatalf("%s: DOM.getDocument: %v", page, err)
		}
		var doc struct{ Root fontNode }
		if err := remarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		checked, bad := 0, map[string]int{}
		names := map[int]string{}
		doc.Root.names(names)
		for _, id := range doc.Root.textElements(nil, false) {
			raw, err := cdp.Send("CSS.getPlatformFontsForNode", map[string]any{"nodeId": id})
			if err != nil {
				continue // a node gone meanwhile (a script changed the page)
			}
			var res struct {
				Fonts []struct {
					FamilyName   string
					IsCustomFont bool
					GlyphCount   int
				}
			}
			if err := remarshal(raw, &res); err != nil {
				t.Fatal(err)
			}
			for _, f := range res.Fonts {
				checked++
				if !f.IsCustomFont || !slices.Contains(browsertest.FontFamilies, f.FamilyName) {
					bad[f.FamilyName+" in <"+strings.ToLower(names[id])+">"] += f.GlyphCount
				}
			}
		}
		if checked == 0 {
			t.Errorf("%s: no text rendered at all", page)
		}
		for family, glyphs := range bad {
			t.Errorf("%s: %d glyphs drawn with the machine's font %s, not a shipped one", page, glyphs, family)
		}
	}
}

// fontNode is the part of a DOM.getDocument node the font check reads.
type fontNode struct {
	NodeID          int    `json:"nodeId"`
	NodeType        int    `json:"nodeType"`
	NodeName        string `json:"nodeName"`
	NodeValue       string `json:"nodeValue"`
	Children        []fontNode
	ShadowRoots     []fontNode
	ContentDocument *fontNode
}

// textElements lists the elements that hold visible-text nodes, outside
// the parts of a document that are never drawn.
func (n fontNode) textElements(out []int, skip bool) []int {
	switch strings.ToUpper(n.NodeName) {
	case "HEAD", "SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "TITLE":
		skip = true
	}
	for _, c := range n.Children {
		if c.NodeType == 3 && !skip && n.NodeType == 1 && strings.TrimSpace(c.NodeValue) != "" {
			out = append(out, n.NodeID)
			break
		}
	}
	for _, c := range n.Children {
		out = c.textElements(out, skip)
	}
	for _, c := range n.ShadowRoots {
		out = c.textElements(out, skip)
	}
	if n.ContentDocument != nil {
		out = n.ContentDocument.textElements(out, false)
	}
	return out
}

// names maps node ids to node names, for messages.
func (n fontNode) names(m map[int]string) {
	m[n.NodeID] = n.NodeName
	for _, c := range slices.Concat(n.Children, n.ShadowRoots) {
		c.names(m)
	}
	if n.ContentDocument != nil {
		n.ContentDocument.names(m)
	}
}

func remarshal(v any, into any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

// drawFramesFor draws the frames of a page a test drives past any surfer,
// through its devtools session, when the browser's frames are on demand
// (SURF_FRAME_MODE=on-demand), until the function it returns is called:
// without frames the page's fonts and animation frames never come.
func drawFramesFor(sess *sandbox.Session, cdp playwright.CDPSession) (stop func()) {
	g := sess.Sandbox().FrameGate()
	if g == nil {
		return func() {}
	}
	f := &frameSource{gate: g, sess: newCDPSession(cdp)}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(pumpEvery):
			}
			ctx, cancel := context.WithTimeout(context.Background(), frameCallPatience)
			_, _ = f.beginFrame(ctx, 0)
			cancel()
		}
	}()
	return func() { close(done); wg.Wait() }
}
