package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

func init() {
	c := &command{
		name:    "demo",
		summary: "tour the bundled demo site with surf's real tools (no network, no API key)",
		usage: `Usage: surf demo [--out DIR] [flags]

Serves the bundled library website on loopback and takes a scripted tour of
it with surf's real tools in a sandboxed browser: search, open a result,
choose in a select, follow a link that opens a new tab, go back, download a
file, read the page. Each step prints the observation the model would get.
The set-of-mark images and a journal go to DIR (default ./surf-demo); an
earlier demo's journal and images there are replaced, not mixed with.

The policy allows only the demo site's own loopback origin; --allow/--deny
narrow it further.

Example:
  surf demo`,
	}
	c.run = func(ctx context.Context, cli *CLI, args []string) error {
		fs := newFlags(c)
		out := fs.String("out", "surf-demo", "")
		bf := addBrowserFlags(fs)
		if err := parseFlags(c, fs, args); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			return usagef(c, "demo takes no arguments")
		}
		site, err := demosite.Start()
		if err != nil {
			return err
		}
		defer site.Close()
		base, err := originPolicy(site.Host)
		if err != nil {
			return err
		}
		if bf.downloads == "" {
			bf.downloads = filepath.Join(*out, "downloads")
		}
		b, err := bf.open(ctx, cli, openOptions{base: base})
		if err != nil {
			return err
		}
		defer b.Close()
		jpath := filepath.Join(*out, "journal.jsonl")
		if err := journal.Remove(jpath); err != nil {
			return err
		}
		j, err := journal.Open(jpath, b.pol.Redact)
		if err != nil {
			return err
		}
		tour := &demoTour{cli: cli, b: b, j: j, reg: b.surf.Tools(), site: site.URL, used: map[string]int{}}
		runErr := tour.run(ctx)
		end := journal.Entry{Event: journal.KindEnded, Steps: tour.step, EndReason: journal.EndAnswered, Answer: tour.answer}
		if runErr != nil {
			end.EndReason, end.Error = journal.EndFailed, runErr.Error()
		}
		j.Write(end)
		if err := j.Close(); err != nil && runErr == nil {
			runErr = err
		}
		if runErr != nil {
			return runErr
		}
		names := make([]string, 0, len(tour.used))
		for n := range tour.used {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(cli.Stdout, "\n== demo done: %d steps, %d different tools (%s)\n", tour.step, len(names), strings.Join(names, ", "))
		fmt.Fprintf(cli.Stdout, "answer: %s\njournal: %s\nimages: %s\n", tour.answer, j.Path(), filepath.Join(*out, "journal-images"))
		return nil
	}
	register(c)
}

// originPolicy allows exactly one host:port.
func originPolicy(hostport string) (*policy.Policy, error) {
	r, err := policy.ParseHostRule(hostport)
	if err != nil {
		return nil, err
	}
	return policy.New(policy.Config{Allow: []policy.HostRule{r}})
}

// demoTour is the scripted walk through the demo site.
type demoTour struct {
	cli      *CLI
	b        *browser
	j        *journal.Writer
	reg      interface{ Names() []string }
	site     string
	step     int
	used     map[string]int
	answer   string
	obs      *websurfer.Observation
	lastText string
}

func (d *demoTour) run(ctx context.Context) error {
	d.j.Write(journal.Entry{Event: journal.KindRunStarted, Task: "Tour the Riverside Library demo site: find the Harbour branch's Saturday hours"})
	steps := []struct {
		why  string
		tool string
		args func() (map[string]any, error)
	}{
		{"open the site", "visit_url", func() (map[string]any, error) { return map[string]any{"url": d.site}, nil }},
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
func (d *demoTour) act(ctx context.Context, why, tool string, args map[string]any) error {
	d.step++
	raw, _ := json.Marshal(args)
	fmt.Fprintf(d.cli.Stdout, "\n== step %d: %s: %s %s\n", d.step, why, tool, raw)
	offered := d.b.surf.Offered()
	d.j.Write(journal.Entry{Event: journal.KindReasoned, Step: d.step, Calls: []journal.Call{{Tool: tool, Args: raw, Reasoning: why}}})
	start := time.Now()
	res, err := d.b.surf.Tools().Call(ctx, tool, raw, offered...)
	if err != nil {
		d.j.Write(journal.Entry{Event: journal.KindActed, Step: d.step, Tool: tool, Args: raw, Error: err.Error(), Duration: journal.Duration(time.Since(start))})
		return err
	}
	entry := journal.Entry{Event: journal.KindActed, Step: d.step, Tool: tool, Args: raw, Result: textcut.FirstLine(res.Text), Duration: journal.Duration(time.Since(start))}
	if res.IsError {
		entry.Error = res.Text
		d.j.Write(entry)
		return fmt.Errorf("step %d (%s): %s", d.step, tool, res.Text)
	}
	d.j.Write(entry)
	d.used[tool]++
	fmt.Fprintln(d.cli.Stdout, res.Text)
	d.lastText = res.Text
	if obs := d.b.surf.Last(); obs != nil && obs != d.obs {
		d.obs = obs
		img, _ := d.j.SaveImage(d.step, obs.Seq, obs.Image, obs.ImageMIME)
		d.j.Write(journal.Entry{Event: journal.KindObserved, Step: d.step, URL: obs.URL, Title: obs.Title, Elements: len(obs.Elements), Tokens: obs.Tokens, Image: img, Seq: obs.Seq})
	}
	return nil
}

// find returns the id of the first element with one of the roles.
func (d *demoTour) find(roles ...string) (int, error) {
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
func (d *demoTour) named(role, name string) (int, error) {
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
