package websurfer

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/third_party/playwright-go"
)

// The adversarial pages for frames and focus (testdata/adversarial, see its
// README): origin A (127.0.0.1) is where the secret may be typed, origin B
// (127.0.0.2, allowed) is the secret sink.

const frameSecret = "hunter2-fr4me-s3cret"

// serveAdversarial serves pages of testdata/adversarial, and B's sinks.
func serveAdversarial(t *testing.T, sites *browsertest.Sites, names ...string) {
	t.Helper()
	sites.ServeAdversarial(t, names...)
	for _, p := range []string{"/sink", "/clicked"} {
		sites.Handle(p, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") })
	}
}

// secretPolicy allows both origins and lets the secret be typed on A's
// host only.
func secretPolicy(t *testing.T, sites *browsertest.Sites, actions ...policy.ActionRule) *policy.Policy {
	t.Helper()
	return policy.MustNew(policy.Config{
		Allow:   []policy.HostRule{mustHostRule(t, strings.TrimPrefix(sites.A, "http://")), mustHostRule(t, strings.TrimPrefix(sites.B, "http://"))},
		Actions: actions,
		Secrets: []policy.Secret{{Name: "PASSWORD", Value: frameSecret, Hosts: []policy.HostRule{mustHostRule(t, "127.0.0.1")}}},
	})
}

// sinkSilent fails the test if origin B received the secret in any form,
// or anything at all on its sink.
func sinkSilent(t *testing.T, sites *browsertest.Sites) {
	t.Helper()
	forms := []string{frameSecret, url.QueryEscape(frameSecret), url.PathEscape(frameSecret)}
	for _, r := range sites.Requests() {
		for _, v := range forms {
			if strings.Contains(r.Path, v) || strings.Contains(r.Body, v) {
				t.Errorf("origin %s received the secret: %s %s %q", r.Origin, r.Method, r.Path, r.Body)
			}
		}
		if r.Origin == "B" && strings.HasPrefix(r.Path, "/sink") {
			t.Errorf("the secret sink got %s %q", r.Path, r.Body)
		}
	}
}

// frameOf returns the live frame whose URL contains part.
func frameOf(t *testing.T, s *Surfer, part string) playwright.Frame {
	t.Helper()
	for _, fr := range s.Page().Frames() {
		if strings.Contains(fr.URL(), part) && !fr.IsDetached() {
			return fr
		}
	}
	t.Fatalf("no frame %q", part)
	return nil
}

func frameJS(t *testing.T, fr playwright.Frame, expr string) any {
	t.Helper()
	v, err := fr.Evaluate(expr)
	if err != nil {
		t.Fatalf("evaluating %s in %s: %v", expr, fr.URL(), err)
	}
	return v
}

// TestSecretFollowsTheFrame types a secret of host A into fields of a page
// from A: its own field and a same-origin srcdoc frame's take it; the field
// of a frame from B (allowed, but not the secret's host) and of a
// sandboxed frame (no origin) are refused, and B never gets the value.
func TestSecretFollowsTheFrame(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveAdversarial(t, sites, "secret-frame.html", "secret-sink.html")
	pol := secretPolicy(t, sites)
	var denied atomic.Bool
	f := newFixtureOn(t, sites, Config{Policy: pol}, sandbox.SessionConfig{OnDenial: func(d sandbox.Denial) {
		if d.Decision.Rule == "secrets" && strings.Contains(d.Decision.Reason, "in a frame from") {
			denied.Store(true)
		}
	}})
	f.load(sites.A + "/adversarial/secret-frame.html")
	args := func(id int) string {
		return fmt.Sprintf(`{"input_field_id": %d, "text_value": "<secret:PASSWORD>", "press_enter": false}`, id)
	}

	res := f.fail("input_text", args(f.id("textbox", "Frame password")), "secret PASSWORD may not be used on 127.0.0.2")
	if !strings.Contains(res.Text, "is in a frame from") || !strings.Contains(res.Text, strings.TrimPrefix(sites.B, "http://")) {
		t.Errorf("the refusal does not say where the field is: %s", res.Text)
	}
	f.fail("input_text", args(f.id("textbox", "Sandboxed password")), "its frame has no network origin")

	f.ok("input_text", args(f.id("textbox", "Top password")))
	if got := f.js(`document.getElementById('top').value`); got != frameSecret {
		t.Errorf("the top page's field holds %q, want the secret", got)
	}
	f.ok("input_text", args(f.id("textbox", "Srcdoc password")))
	if got := f.js(`document.getElementById('srcdoc').contentDocument.getElementById('pw').value`); got != frameSecret {
		t.Errorf("the same-origin srcdoc frame's field holds %q, want the secret", got)
	}

	if got := frameJS(t, frameOf(t, f.s, "/adversarial/secret-sink.html"), `document.getElementById('pw').value`); got != "" {
		t.Errorf("B's field holds %q", got)
	}
	sinkSilent(t, sites)
	if !denied.Load() {
		t.Error("the refusal in B's frame was not recorded as a denial")
	}
}

// TestSecretFocusCannotBeMoved types a secret into a page that moves the
// focus, when the field takes it or at the first key, to another field or
// into B's frame: the secret lands in the chosen field, nowhere else.
func TestSecretFocusCannotBeMoved(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveAdversarial(t, sites, "secret-focus.html", "secret-sink.html")
	f := newFixtureOn(t, sites, Config{Policy: secretPolicy(t, sites)}, sandbox.SessionConfig{})
	for _, on := range []string{"keydown", "focus"} {
		for _, to := range []string{"frame", "decoy"} {
			t.Run(on+"-"+to, func(t *testing.T) {
				f.t = t
				f.load(sites.A + "/adversarial/secret-focus.html?on=" + on + "&to=" + to)
				pw := f.id("textbox", "Password")
				res := f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "<secret:PASSWORD>", "press_enter": true}`, pw))
				if got := f.js(`document.getElementById('pw').value`); got != frameSecret {
					t.Errorf("the password field holds %q, want the secret", got)
				}
				if got := f.js(`document.getElementById('decoy').value`); got != "" {
					t.Errorf("the decoy field got %q", got)
				}
				if got := frameJS(t, frameOf(t, f.s, "/adversarial/secret-sink.html"), `document.getElementById('pw').value`); got != "" {
					t.Errorf("B's field got %q", got)
				}
				if on == "focus" && !strings.Contains(res.Text, "moved the keyboard focus away from it, so I did not press Enter") {
					t.Errorf("the result does not say the focus moved: %s", textcut.FirstLine(res.Text))
				}
				sinkSilent(t, sites)
			})
		}
	}
}

// TestTypingStopsWhenFocusMoves: plain text is still typed with keys, but
// not into a field the page takes the focus from as soon as it has it,
// and a focus moved while typing is reported (and Enter not pressed).
func TestTypingStopsWhenFocusMoves(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveAdversarial(t, sites, "secret-focus.html", "secret-sink.html")
	f := newFixtureOn(t, sites, Config{}, sandbox.SessionConfig{})
	f.load(sites.A + "/adversarial/secret-focus.html?on=focus&to=frame")
	f.fail("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "hello"}`, f.id("textbox", "Password")), "as soon as surf focused it; nothing was typed")
	if got := frameJS(t, frameOf(t, f.s, "/adversarial/secret-sink.html"), `document.getElementById('pw').value`); got != "" {
		t.Errorf("B's field got %q", got)
	}

	f.load(sites.A + "/adversarial/secret-focus.html?on=keydown&to=decoy")
	res := f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "hello"}`, f.id("textbox", "Password")))
	if !strings.Contains(res.Text, "moved the keyboard focus away from it while I typed") || !strings.Contains(res.Text, "did not press Enter") {
		t.Errorf("the result does not say the focus moved: %s", textcut.FirstLine(res.Text))
	}
	if sites.Requested("/signed-in") {
		t.Error("Enter was pressed in the field the page moved the focus to")
	}

	// A page that leaves the focus alone is typed into as before, in a
	// frame too.
	f.load(sites.A + "/perception/frames.html")
	for _, who := range []string{"same", "cross", "nested"} {
		id := 0
		for _, e := range f.s.last.Elements {
			if e.Role == "textbox" && e.Name == "Frame input" && strings.HasSuffix(e.Frame, "who="+who) {
				id = e.ID
			}
		}
		if id == 0 {
			t.Fatalf("no field in the %s frame:\n%s", who, f.s.last.Text())
		}
		res := f.ok("input_text", fmt.Sprintf(`{"input_field_id": %d, "text_value": "typed %s", "press_enter": false}`, id, who))
		if strings.Contains(textcut.FirstLine(res.Text), "focus") {
			t.Errorf("typing into the %s frame's field reports a focus change: %s", who, textcut.FirstLine(res.Text))
		}
		if got := frameJS(t, frameOf(t, f.s, "who="+who), `document.querySelector('input').value`); got != "typed "+who {
			t.Errorf("the field of the %s frame holds %q", who, got)
		}
	}
}

// TestActionRulesJudgeTheElementsFrame: a rule denying clicks on B holds
// for B's buttons framed by A (and for a button in a sandboxed frame of
// B's), while A's own button works.
func TestActionRulesJudgeTheElementsFrame(t *testing.T) {
	sites := browsertest.ServeSites(t)
	serveAdversarial(t, sites, "action-frame.html", "action-frame-b.html")
	pol := secretPolicy(t, sites, policy.ActionRule{Rule: "no-clicks-on-b", Tools: []string{"click"}, Hosts: []policy.HostRule{mustHostRule(t, "127.0.0.2")}, Verdict: policy.Deny})
	f := newFixtureOn(t, sites, Config{Policy: pol}, sandbox.SessionConfig{})
	f.load(sites.A + "/adversarial/action-frame.html")
	res := f.fail("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Pay in B")), "(rule no-clicks-on-b)")
	if !strings.Contains(res.Text, `in a frame from "`+strings.TrimPrefix(sites.B, "http://")) {
		t.Errorf("the denial does not name B's frame: %s", res.Text)
	}
	f.fail("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Inner pay")), "(rule no-clicks-on-b)")
	f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Top button")))
	if got := f.js(`document.getElementById('top').textContent`); got != "Clicked on top" {
		t.Errorf("A's button was not clicked: %q", got)
	}
	b := frameOf(t, f.s, "/adversarial/action-frame-b.html")
	if got := frameJS(t, b, `document.getElementById('pay').textContent`); got != "Pay in B" {
		t.Errorf("B's button was clicked: %q", got)
	}
	if sites.Requested("/clicked?pay") {
		t.Error("B's click handler ran")
	}
}

// load opens a page and waits for its load event, which waits for all its
// frames, then observes it.
func (f *fixture) load(u string) {
	f.t.Helper()
	gotoPage(f.t, f.s, u)
	observe(f.t, f.s)
}

// newFixtureOn is newFixture on sites the test already serves.
func newFixtureOn(t *testing.T, sites *browsertest.Sites, cfg Config, scfg sandbox.SessionConfig) *fixture {
	t.Helper()
	serveActionHandlers(sites)
	if cfg.Policy == nil {
		cfg.Policy = loopbackPolicy(t, sites)
	}
	scfg.Policy = cfg.Policy
	cfg.Session = browsertest.Session(t, scfg)
	s := newSurfer(t, cfg)
	return &fixture{t: t, sites: sites, s: s, reg: s.Tools()}
}
