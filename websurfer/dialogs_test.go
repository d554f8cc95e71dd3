package websurfer

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// openDialog clicks one of dialog.html's buttons and checks the result
// reports the dialog pending, and offers answer_dialog.
func (f *fixture) openDialog(button, line string) {
	f.t.Helper()
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", button)))
	if !strings.Contains(res.Text, "dialog pending: "+line) {
		f.t.Fatalf("%s: the pending dialog is not reported:\n%s", button, res.Text)
	}
	if !strings.Contains(strings.Join(f.s.Offered(), " "), "answer_dialog") {
		f.t.Fatalf("%s: answer_dialog is not offered: %v", button, f.s.Offered())
	}
}

func (f *fixture) result() any { return f.js(`document.getElementById('r').textContent`) }

func TestAnswerDialog(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/dialog.html")
	if strings.Contains(strings.Join(f.s.Offered(), " "), "answer_dialog") {
		t.Errorf("answer_dialog is offered with no dialog open: %v", f.s.Offered())
	}
	f.fail("answer_dialog", `{"accept": true}`, "answer_dialog")

	f.openDialog("Confirm", `confirm "Delete everything?" — answer with answer_dialog`)
	res := f.ok("answer_dialog", `{"accept": true}`)
	if got := f.result(); got != "confirmed" {
		t.Errorf("after accepting the confirm the page shows %v\n%s", got, res.Text)
	}
	if !strings.Contains(res.Text, `I accepted the confirm "Delete everything?"`) || strings.Contains(res.Text, "dialog pending") {
		t.Errorf("answer_dialog's result:\n%s", res.Text)
	}
	if strings.Contains(strings.Join(f.s.Offered(), " "), "answer_dialog") {
		t.Errorf("answer_dialog is still offered once answered: %v", f.s.Offered())
	}

	f.openDialog("Confirm", `confirm "Delete everything?"`)
	f.ok("answer_dialog", `{"accept": false}`)
	if got := f.result(); got != "cancelled" {
		t.Errorf("after dismissing the confirm the page shows %v", got)
	}

	f.openDialog("Prompt", `prompt "Your name?" with default text "x"`)
	f.fail("answer_dialog", `{"accept": false, "prompt_text": "Ada"}`, "prompt_text")
	res = f.ok("answer_dialog", `{"accept": true, "prompt_text": "Ada"}`)
	if got := f.result(); got != "prompt:Ada" {
		t.Errorf("after answering the prompt with Ada the page shows %v\n%s", got, res.Text)
	}

	f.openDialog("Prompt", `prompt "Your name?"`)
	f.ok("answer_dialog", `{"accept": true}`)
	if got := f.result(); got != "prompt:x" {
		t.Errorf("accepting the prompt without text: the page shows %v; want its default", got)
	}
}

// A dialog the model does not answer gets the safe answer: when it does
// something else, or when DialogTimeout passes.
func TestDialogDismissedByDefault(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/dialog.html")
	f.openDialog("Confirm", `confirm "Delete everything?"`)
	// The ids of the observation before the dialog still apply: the
	// click dismisses the dialog first, then clicks.
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Alert")))
	if !strings.Contains(res.Text, `event: dialog: confirm "Delete everything?" was dismissed: another action came first`) {
		t.Errorf("the dismissal is not reported:\n%s", res.Text)
	}
	if got := f.result(); got != "after alert" {
		t.Errorf("the click after the dialog: the page shows %v", got)
	}
	if strings.Contains(strings.Join(f.s.Offered(), " "), "answer_dialog") {
		t.Errorf("answer_dialog is offered after the dismissal: %v", f.s.Offered())
	}

	// read_page cannot read a page blocked in a dialog: it dismisses it
	// first too.
	f.openDialog("Confirm", `confirm "Delete everything?"`)
	res = f.ok("read_page", `{}`)
	if !strings.Contains(res.Text, "cancelled") {
		t.Errorf("read_page with a confirm open:\n%s", res.Text)
	}
	obs, err := f.s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Text(), `confirm "Delete everything?" was dismissed: another action came first`) {
		t.Errorf("the dismissal by read_page is not reported:\n%s", obs.Text())
	}

	f.openDialog("Prompt", `prompt "Your name?"`)
	res = f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/dialog.html"))
	if !strings.Contains(res.Text, `prompt "Your name?" was dismissed: another action came first`) || !strings.Contains(res.Text, `button "Confirm"`) {
		t.Errorf("visit_url with a prompt open:\n%s", res.Text)
	}
}

func TestDialogTimeout(t *testing.T) {
	f := newFixture(t, Config{DialogTimeout: 50 * time.Millisecond}, sandbox.SessionConfig{})
	f.visit("/actions/dialog.html")
	res := f.ok("click", fmt.Sprintf(`{"target_id": %d}`, f.id("button", "Confirm")))
	// The page's script goes on once the dialog is dismissed.
	if got := f.result(); got != "cancelled" {
		t.Errorf("the unanswered confirm: the page shows %v", got)
	}
	obs, err := f.s.Observe(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := `event: dialog: confirm "Delete everything?" was dismissed: no answer within 50ms`
	if text := res.Text + "\n" + obs.Text(); !strings.Contains(text, want) {
		t.Errorf("the timed-out dialog is not reported:\n%s", text)
	}
	if strings.Contains(obs.Text(), "dialog pending") {
		t.Errorf("the dismissed dialog is still reported pending:\n%s", obs.Text())
	}
}

// Answering a dialog is an action: per-tool rules apply to it.
func TestAnswerDialogGated(t *testing.T) {
	var asked []string
	approver := policy.ApproverFunc(func(_ context.Context, d policy.Decision) (bool, error) {
		asked = append(asked, d.Tool)
		return false, nil
	})
	f := newFixture(t, Config{Approver: approver}, sandbox.SessionConfig{})
	var allow []policy.HostRule
	for _, u := range []string{f.sites.A, f.sites.B} {
		r, err := policy.ParseHostRule(strings.TrimPrefix(u, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		allow = append(allow, r)
	}
	pol, err := policy.New(policy.Config{Allow: allow, Actions: []policy.ActionRule{{Tools: []string{"answer_dialog"}, Verdict: policy.Ask}}})
	if err != nil {
		t.Fatal(err)
	}
	f.s.mu.Lock()
	f.s.pol = pol
	f.s.mu.Unlock()
	f.visit("/actions/dialog.html")
	f.openDialog("Confirm", `confirm "Delete everything?"`)
	f.fail("answer_dialog", `{"accept": true}`, "answer_dialog")
	if strings.Join(asked, " ") != "answer_dialog" {
		t.Errorf("the approver was asked about %v; want answer_dialog", asked)
	}
	// The refused answer left the dialog to the safe default.
	res := f.ok("sleep", `{"seconds": 0.1}`)
	if !strings.Contains(res.Text, `confirm "Delete everything?" was dismissed: another action came first`) {
		t.Errorf("the dismissal is not reported:\n%s", res.Text)
	}
	if got := f.result(); got != "cancelled" {
		t.Errorf("after a refused answer_dialog the page shows %v", got)
	}
}

// A page that asks while it loads: visit_url reports the dialog pending
// rather than waiting for a load the dialog blocks.
func TestDialogWhileLoading(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	res := f.ok("visit_url", fmt.Sprintf(`{"url": %q}`, f.sites.A+"/actions/dialog-onload.html"))
	if !strings.Contains(res.Text, `dialog pending: confirm "Stay signed in?"`) {
		t.Fatalf("the dialog is not reported pending:\n%s", res.Text)
	}
	res = f.ok("answer_dialog", `{"accept": true}`)
	if got := f.result(); got != "staying" {
		t.Errorf("after accepting the page shows %v\n%s", got, res.Text)
	}
	if !strings.Contains(res.Text, "\nstaying\n") {
		t.Errorf("the observation after the answer does not show the page:\n%s", res.Text)
	}
}

// Closing the surfer with a dialog held closes its page too.
func TestCloseWithDialogHeld(t *testing.T) {
	f := newFixture(t, Config{}, sandbox.SessionConfig{})
	f.visit("/actions/dialog.html")
	f.openDialog("Confirm", `confirm "Delete everything?"`)
	if err := f.s.Close(); err != nil {
		t.Fatalf("Close with a dialog held: %v", err)
	}
	if h := f.s.pendingDialog(); h != nil {
		t.Errorf("a dialog is still held after Close: %s", h.describe())
	}
	if !f.s.tabs[0].page.IsClosed() {
		t.Error("the page is still open after Close")
	}
}
