package demosite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/websurfer"
)

// Tour is the scripted walk through the site that "surf demo" takes with
// surf's real tools: search, open a result, choose in a select, follow a
// link that opens a new tab, go back, download a file, read the page, and
// answer with the Harbour branch's Saturday hours. Each step is printed
// to Out and journaled.
type Tour struct {
	// Surfer is the open session the tour acts in; its policy must allow
	// the site. Required.
	Surfer *websurfer.Surfer
	// Journal gets the run's entries, from run_started to ended, and the
	// observations' images; required.
	Journal *journal.Writer
	// URL is the site's address (Site.URL).
	URL string
	// Out gets each step and its result; nil discards them.
	Out io.Writer

	step     int
	used     map[string]int
	answer   string
	obs      *websurfer.Observation
	lastText string
}

// Steps is the number of steps the tour took.
func (d *Tour) Steps() int { return d.step }

// Answer is the tour's answer, once it has found it.
func (d *Tour) Answer() string { return d.answer }

// Tools are the tools the tour used, sorted.
func (d *Tour) Tools() []string {
	names := make([]string, 0, len(d.used))
	for n := range d.used {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run takes the tour, ending the journal's run with its outcome (the
// journal stays open).
func (d *Tour) Run(ctx context.Context) error {
	if d.Surfer == nil || d.Journal == nil {
		return errors.New("demosite: a Tour needs a Surfer and a Journal")
	}
	if d.Out == nil {
		d.Out = io.Discard
	}
	d.used = map[string]int{}
	err := d.run(ctx)
	end := journal.Entry{Event: journal.KindEnded, Steps: d.step, EndReason: journal.EndAnswered, Answer: d.answer}
	if err != nil {
		end.EndReason, end.Error = journal.EndFailed, err.Error()
	}
	d.Journal.Write(end)
	return err
}

func (d *Tour) run(ctx context.Context) error {
	d.Journal.Write(journal.Entry{Event: journal.KindRunStarted, Task: "Tour the Riverside Library demo site: find the Harbour branch's Saturday hours"})
	steps := []struct {
		why  string
		tool string
		args func() (map[string]any, error)
	}{
		{"open the site", "visit_url", func() (map[string]any, error) { return map[string]any{"url": d.URL}, nil }},
		{"search for the branch", "input_text", func() (map[string]any, error) {
			id, err := d.find("searchbox", "textbox")
			return map[string]any{"input_field_id": id, "text_value": "harbour"}, err
		}},
		{"open the result", "click", func() (map[string]any, error) {
			id, err := d.named("link", "Harbour Branch")
			return map[string]any{"target_id": id}, err
		}},
		{"plan a Saturday visit", "select_option", func() (map[string]any, error) {
			id, err := d.named("combobox", "Plan a visit on")
			return map[string]any{"target_id": id, "option": "Saturday"}, err
		}},
		{"open the map, which opens a new tab", "click", func() (map[string]any, error) {
			id, err := d.named("link", "Map (opens in a new tab)")
			return map[string]any{"target_id": id}, err
		}},
		{"go back to the branch page", "history_back", func() (map[string]any, error) { return map[string]any{}, nil }},
		{"download the timetable", "click", func() (map[string]any, error) {
			id, err := d.named("link", "Download the timetable (CSV)")
			return map[string]any{"target_id": id}, err
		}},
		{"read the page as markdown", "read_page", func() (map[string]any, error) { return map[string]any{}, nil }},
	}
	for _, st := range steps {
		args, err := st.args()
		if err != nil {
			return err
		}
		if err := d.act(ctx, st.why, st.tool, args); err != nil {
			return err
		}
	}
	if !strings.Contains(d.lastText, "10:00 to 14:00") {
		return errors.New("the tour did not find the Saturday hours")
	}
	d.answer = "The Harbour Branch opens on Saturdays from 10:00 to 14:00."
	return d.act(ctx, "answer", "stop_action", map[string]any{"answer": d.answer})
}

// act runs one tool through the registry, prints the result and journals
// it.
func (d *Tour) act(ctx context.Context, why, tool string, args map[string]any) error {
	d.step++
	raw, _ := json.Marshal(args)
	fmt.Fprintf(d.Out, "\n== step %d: %s: %s %s\n", d.step, why, tool, raw)
	offered := d.Surfer.Offered()
	d.Journal.Write(journal.Entry{Event: journal.KindReasoned, Step: d.step, Calls: []journal.Call{{Tool: tool, Args: raw, Reasoning: why}}})
	start := time.Now()
	res, err := d.Surfer.Tools().Call(ctx, tool, raw, offered...)
	if err != nil {
		d.Journal.Write(journal.Entry{Event: journal.KindActed, Step: d.step, Tool: tool, Args: raw, Error: err.Error(), Duration: journal.Duration(time.Since(start))})
		return err
	}
	entry := journal.Entry{Event: journal.KindActed, Step: d.step, Tool: tool, Args: raw, Result: textcut.FirstLine(res.Text), Duration: journal.Duration(time.Since(start))}
	if res.IsError {
		entry.Error = res.Text
		d.Journal.Write(entry)
		return fmt.Errorf("step %d (%s): %s", d.step, tool, res.Text)
	}
	d.Journal.Write(entry)
	d.used[tool]++
	fmt.Fprintln(d.Out, res.Text)
	d.lastText = res.Text
	if obs := d.Surfer.Last(); obs != nil && obs != d.obs {
		d.obs = obs
		img, _ := d.Journal.SaveImage(d.step, obs.Seq, obs.Image, obs.ImageMIME)
		d.Journal.Write(journal.Entry{Event: journal.KindObserved, Step: d.step, URL: obs.URL, Title: obs.Title, Elements: len(obs.Elements), Tokens: obs.Tokens, Image: img, Seq: obs.Seq})
	}
	return nil
}

// find returns the id of the first element with one of the roles.
func (d *Tour) find(roles ...string) (int, error) {
	if d.obs == nil {
		return 0, errors.New("nothing observed yet")
	}
	for _, e := range d.obs.Elements {
		for _, r := range roles {
			if e.Role == r {
				return e.ID, nil
			}
		}
	}
	return 0, fmt.Errorf("the page has no %s", strings.Join(roles, " or "))
}

// named returns the id of the element with a role and name.
func (d *Tour) named(role, name string) (int, error) {
	if d.obs == nil {
		return 0, errors.New("nothing observed yet")
	}
	for _, e := range d.obs.Elements {
		if e.Role == role && e.Name == name {
			return e.ID, nil
		}
	}
	return 0, fmt.Errorf("the page has no %s %q", role, name)
}
