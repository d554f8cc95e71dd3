package websurfer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// The examples run offline against a small library site among surf's test
// fixtures (testdata/sites/library), in a real browser: the same calls work
// on any site the policy allows.

// ExampleSurfer shows the Go API end to end: launch a sandboxed browser,
// open an isolated session whose policy allows one origin, and drive it
// with typed methods.
func ExampleSurfer() {
	ctx := context.Background()
	site, err := browsertest.StartSites()
	if err != nil {
		panic(err)
	}
	defer site.Close()

	// The policy: only the library site's origin (loopback is private, so
	// it must be allowed by name).
	allow, _ := policy.ParseHostRule(site.HostA())
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{allow}})
	if err != nil {
		panic(err)
	}
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol})
	if err != nil {
		panic(err)
	}
	defer sb.Close()
	sess, err := sb.NewSession(ctx, sandbox.SessionConfig{})
	if err != nil {
		panic(err)
	}
	defer sess.Close()
	s, err := websurfer.New(ctx, websurfer.Config{Session: sess})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	res, err := s.VisitURL(ctx, site.A+"/library")
	if err != nil {
		panic(err)
	}
	obs := res.Observation
	fmt.Println("title:", obs.Title)
	for _, e := range obs.Elements {
		fmt.Printf("%d %s %q\n", e.ID, e.Role, e.Name)
	}

	// Type into the search box (id 4) and press Enter.
	res, err = s.InputText(ctx, 4, "harbour", true, true)
	if err != nil {
		panic(err)
	}
	fmt.Println("title:", res.Observation.Title)

	// A denied URL comes back as an error the model (or you) can act on.
	_, err = s.VisitURL(ctx, "http://127.0.0.9/")
	fmt.Println(err)

	// Output:
	// title: Riverside Library
	// 1 link "Riverside Library"
	// 2 link "Catalogue"
	// 3 link "Branches"
	// 4 textbox "Search"
	// 5 button "Search"
	// title: Search: harbour - Riverside Library
	// denied: 127.0.0.9 is a private address (loopback) (rule private-networks)
}

// ExampleSurfer_Tools calls surf's tools by name, the way a model (or an
// MCP client) does: arguments are JSON, validated against each tool's
// schema, and only the tools offered for the current page run.
func ExampleSurfer_Tools() {
	ctx := context.Background()
	site, _ := browsertest.StartSites()
	defer site.Close()
	allow, _ := policy.ParseHostRule(site.HostA())
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{allow}})})
	if err != nil {
		panic(err)
	}
	defer sb.Close()
	sess, _ := sb.NewSession(ctx, sandbox.SessionConfig{})
	s, _ := websurfer.New(ctx, websurfer.Config{Session: sess})
	defer s.Close()

	reg := s.Tools()
	call := func(name, args string) {
		res, err := reg.Call(ctx, name, json.RawMessage(args), s.Offered()...)
		if err != nil {
			panic(err) // a runtime error: the browser is gone
		}
		first, _, _ := strings.Cut(res.Text, "\n")
		if res.IsError {
			fmt.Println("error:", first)
			return
		}
		fmt.Printf("%s: %d image(s)\n", name, len(res.Images))
	}
	call("visit_url", fmt.Sprintf(`{"url": %q}`, site.A+"/library/branch?id=harbour"))
	call("select_option", `{"target_id": 4, "option": "Saturday"}`)
	call("click", `{"target_id": "many"}`)
	call("page_up", `{}`)

	obs := s.Last()
	for _, e := range obs.Elements {
		if e.Role == "combobox" {
			fmt.Printf("%s = %s\n", e.Name, e.Value)
		}
	}
	// Output:
	// visit_url: 1 image(s)
	// select_option: 1 image(s)
	// error: invalid arguments for click: target_id: expected an integer, got string "many". Usage: click(target_id: integer, reasoning?: string)
	// error: page_up is not available now: already at the top of the page
	// Plan a visit on = Saturday
}

// ExampleSurfer_Run runs a task with the agent loop. A real run reaches a
// model through llm.New (any OpenAI-compatible endpoint); here a scripted
// fake endpoint plays the model, so the example runs offline.
func ExampleSurfer_Run() {
	ctx := context.Background()
	site, _ := browsertest.StartSites()
	defer site.Close()
	model, stop := scriptedModel(
		`{"name": "input_text", "arguments": "{\"input_field_id\": 4, \"text_value\": \"hill street\"}"}`,
		`{"name": "click", "arguments": "{\"target_id\": 4}"}`,
		`{"name": "stop_action", "arguments": "{\"answer\": \"Closed on Mondays.\"}"}`,
	)
	defer stop()

	allow, _ := policy.ParseHostRule(site.HostA())
	sb, err := sandbox.New(ctx, sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{allow}})})
	if err != nil {
		panic(err)
	}
	defer sb.Close()
	sess, _ := sb.NewSession(ctx, sandbox.SessionConfig{})
	s, _ := websurfer.New(ctx, websurfer.Config{Session: sess, Model: model})
	defer s.Close()

	for st, err := range s.Run(ctx, "Is the Hill Street Reading Room open on Mondays?", websurfer.RunOptions{StartURL: site.A + "/library"}) {
		if err != nil {
			panic(err)
		}
		for _, c := range st.Calls {
			fmt.Printf("step %d: %s on %q\n", st.N, c.Tool, st.Observation.Title)
		}
		if st.Done {
			fmt.Println(st.EndReason+":", st.Answer)
		}
	}
	// Output:
	// step 1: input_text on "Riverside Library"
	// step 2: click on "Search: hill street - Riverside Library"
	// step 3: stop_action on "Hill Street Reading Room - Riverside Library"
	// answered: Closed on Mondays.
}
