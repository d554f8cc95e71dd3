package mcpserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
)

// TestSecretInFrameOverMCP: input_text over MCP takes the same path as
// every other way of typing: a secret of host A is refused in a field of
// a frame from B (allowed, but not the secret's host) that a page from A
// shows, and B never receives it; A's own field takes it.
func TestSecretInFrameOverMCP(t *testing.T) {
	const value = "hunter2-mcp-fr4me"
	sites := browsertest.ServeSites(t)
	sites.ServeAdversarial(t, "secret-frame.html", "secret-sink.html")
	sites.Handle("/sink", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	rule := func(s string) policy.HostRule {
		r, err := policy.ParseHostRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	pol := policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{rule(strings.TrimPrefix(sites.A, "http://")), rule(strings.TrimPrefix(sites.B, "http://"))},
		Secrets: []policy.Secret{{Name: "PASSWORD", Value: value, Hosts: []policy.HostRule{rule("127.0.0.1")}}},
	})
	s := newServer(t, &fixture{Host: strings.TrimPrefix(sites.A, "http://")}, func(c *Config) { c.Policy = pol })
	cs := connect(t, serveHTTP(t, s, HTTPOptions{}), nil, nil)

	obs := text(mustCall(t, cs, "visit_url", map[string]any{"url": sites.A + "/adversarial/secret-frame.html"}))
	// The frames load after the page commits: observe again (bounded)
	// until B's field is listed.
	for i := 0; i < 20 && !strings.Contains(obs, `textbox "Frame password"`); i++ {
		obs = text(mustCall(t, cs, "sleep", map[string]any{"seconds": 0.5}))
	}
	res := call(t, cs, "input_text", map[string]any{"input_field_id": elementID(t, obs, "textbox", "Frame password"), "text_value": "<secret:PASSWORD>"})
	if !res.IsError || !strings.Contains(text(res), "secret PASSWORD may not be used on 127.0.0.2") || !strings.Contains(text(res), "is in a frame from") {
		t.Errorf("typing the secret into B's frame: IsError=%v %q, want a refusal naming B's frame", res.IsError, text(res))
	}
	res = mustCall(t, cs, "input_text", map[string]any{"input_field_id": elementID(t, obs, "textbox", "Top password"), "text_value": "<secret:PASSWORD>", "press_enter": false})
	if got := text(res); !strings.Contains(got, "I typed the password into") || strings.Contains(got, value) {
		t.Errorf("typing the secret into A's field: %q", got)
	}
	for _, r := range sites.Requests() {
		for _, v := range []string{value, url.QueryEscape(value)} {
			if strings.Contains(r.Path, v) || strings.Contains(r.Body, v) {
				t.Errorf("origin %s received the secret: %s %s", r.Origin, r.Method, r.Path)
			}
		}
		if r.Origin == "B" && strings.HasPrefix(r.Path, "/sink") {
			t.Errorf("the secret sink got %s %q", r.Path, r.Body)
		}
	}
}
