package mcpserver

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
)

// TestSecretsInResults: over MCP, a secret typed into a field shows in no
// result: not in the text (the page echoes it, and a GET form puts it in
// the next URL as Chromium form-encodes it) and not in the image (the
// echo is masked), nor in the structured content of observe, screenshot
// and session_list, nor in screenshot's image.
func TestSecretsInResults(t *testing.T) {
	const secret = `s3 cr*t~&+ü`
	f := serveFixture(t)
	loop, err := policy.ParseHostRule("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, f, func(c *Config) {
		c.Policy = sitePolicy(t, f, policy.Config{Secrets: []policy.Secret{{Name: "PW", Value: secret, Hosts: []policy.HostRule{loop}}}})
	})
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)
	obs := text(mustCall(t, cs, "visit_url", map[string]any{"url": f.URL + "/secret.html"}))
	id := elementID(t, obs, "textbox", "Code")
	leaks := func(s string) []string {
		var out []string
		for _, form := range []string{secret, "cr*t", "cr%2At", "%7E%26%2B%C3%BC"} {
			if strings.Contains(s, form) {
				out = append(out, form)
			}
		}
		return out
	}
	res := mustCall(t, cs, "input_text", map[string]any{"input_field_id": id, "text_value": "<secret:PW>", "press_enter": false})
	if l := leaks(text(res)); len(l) > 0 || !strings.Contains(text(res), "Echo: <secret:PW>") {
		t.Errorf("the result shows %q:\n%s", l, text(res))
	}
	imgs := images(res)
	if len(imgs) != 1 {
		t.Fatalf("%d images", len(imgs))
	}
	img, err := jpeg.Decode(bytes.NewReader(imgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	// The echo's first 200 CSS pixels: "Echo: s3 cr" at 28px.
	scale := float64(img.Bounds().Dx()) / 1280
	if sp := browsertest.LumaSpread(img, image.Rect(int(43*scale)+1, int(203*scale)+1, int(237*scale), int(227*scale))); sp > 24 {
		t.Errorf("the image shows the echoed secret (spread %.0f)", sp)
	}
	data := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res.StructuredContent); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	seen := data(mustCall(t, cs, ObserveTool, map[string]any{"text": true}))
	if l := leaks(seen); len(l) > 0 || !strings.Contains(seen, "Echo: <secret:PW>") {
		t.Errorf("observe's data shows %q:\n%s", l, seen)
	}
	shot := mustCall(t, cs, ScreenshotTool, map[string]any{})
	if imgs = images(shot); len(imgs) != 1 {
		t.Fatalf("screenshot: %d images", len(imgs))
	}
	if img, err = jpeg.Decode(bytes.NewReader(imgs[0].Data)); err != nil {
		t.Fatal(err)
	}
	scale = float64(img.Bounds().Dx()) / 1280
	if sp := browsertest.LumaSpread(img, image.Rect(int(43*scale)+1, int(203*scale)+1, int(237*scale), int(227*scale))); sp > 24 {
		t.Errorf("the screenshot shows the echoed secret (spread %.0f)", sp)
	}
	res = mustCall(t, cs, "input_text", map[string]any{"input_field_id": id, "text_value": "<secret:PW>", "press_enter": true, "delete_existing_text": true})
	if l := leaks(text(res)); len(l) > 0 || !strings.Contains(text(res), "q=<secret:PW>") {
		t.Errorf("after the GET form, the result shows %q:\n%s", l, text(res))
	}
	if l := leaks(text(mustCall(t, cs, "read_page", map[string]any{}))); len(l) > 0 {
		t.Errorf("read_page shows %q", l)
	}
	for _, name := range []string{ObserveTool, ScreenshotTool, "session_list"} {
		if l := leaks(data(mustCall(t, cs, name, map[string]any{}))); len(l) > 0 {
			t.Errorf("after the GET form, %s's data shows %q", name, l)
		}
	}
}
