package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/journal"
)

// page is what the template renders.
type page struct {
	Title    string
	Head     head
	Task     string
	Journal  string // the journal's base name
	Started  string
	Config   []setting
	ConfigJS *text // the configuration when it is not a JSON object
	Notes    []string
	Stats    []stat
	Steps    []*stepView
	End      *endView
}

type setting struct{ Key, Value string }

type stat struct {
	Class, Value, Label string
}

// stepView is one step: its screenshots and its events.
type stepView struct {
	ID      string // anchor: "step-3", "setup"
	Label   string // "Step 3", "Before the first step"
	Short   string // for the step strip: "3"
	Status  string // "ok", "denied", "error", "recovered", "asked"
	Classes string
	Badges  []stat
	Timing  []string
	Shots   []shot
	Events  []eventView

	denied, errored, recovered, corrected, asked bool
	first, last                                  time.Time
	usage                                        journal.Usage
	hasUsage                                     bool
	acted                                        time.Duration
	called                                       map[string]bool // tools whose arguments a reasoned entry showed
	refused                                      map[string]bool // tools the gate denied in this step
}

// eventView is one journal entry inside a step.
type eventView struct {
	Kind   string // the entry's event, or "other"
	Class  string
	At     string // time since the run started
	Label  string // "DENIED", "allowed", "error", ...
	E      journal.Entry
	Calls  []callView
	Usage  string
	Text   *text // content, result, message
	Err    *text
	Args   *text
	Dur    string
	Appr   string // for ask: "approved", "refused", ""
	Detail string // an unknown event's JSON
}

type callView struct {
	Tool      string
	Args      *text
	Reasoning *text
}

type endView struct {
	Class  string
	Reason string
	Answer *text
	Err    *text
	Totals []setting
	At     string
}

// text is a string shown with its first lines, and in full on request.
type text struct {
	Preview string
	Full    string
	More    bool   // Full is longer than Preview
	Lines   int    // lines in Full
	Cut     string // a note when the text was cut at MaxText
}

// Preview size: lines, and bytes.
const (
	previewLines = 4
	previewBytes = 360
)

func newText(s string, max int) *text {
	if s == "" {
		return nil
	}
	t := &text{}
	if len(s) > max {
		cut := textcut.Prefix(s, max)
		t.Cut = fmt.Sprintf("(%s more bytes not shown)", thousands(int64(len(s)-len(cut))))
		s = cut
	}
	t.Full = s
	t.Lines = strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
	p := s
	if t.Lines > previewLines {
		p = strings.Join(strings.SplitN(p, "\n", previewLines+1)[:previewLines], "\n")
	}
	if len(p) > previewBytes {
		p = textcut.Prefix(p, previewBytes)
	}
	t.More = len(p) < len(s)
	if t.More {
		t.Preview = strings.TrimRight(p, " \n") + " …"
	} else {
		t.Preview = p
	}
	return t
}

// argsText shows a call's arguments: compact JSON, indented when long.
func argsText(raw json.RawMessage, max int) *text {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return newText(string(raw), max)
	}
	if buf.String() == "{}" {
		return nil // no arguments
	}
	if buf.Len() > 120 {
		buf.Reset()
		if json.Indent(&buf, raw, "", "  ") != nil {
			return newText(string(raw), max)
		}
	}
	return newText(buf.String(), max)
}

// build turns a journal into the page and its summary.
func build(j *Journal, opts Options) (*page, Summary) {
	p := &page{Head: pageHead, Notes: append([]string(nil), j.Notes...)}
	if j.Path != "" {
		p.Journal = baseName(j.Path)
	}
	imgs := newImageLoader(j.Dir, opts.MaxImageBytes)
	defer imgs.close()

	var (
		start   time.Time
		steps   = map[int]*stepView{}
		order   []*stepView
		started *journal.Entry
		ended   *journal.Entry
		last    time.Time
	)
	for _, e := range j.Entries {
		if !e.Time.IsZero() {
			if start.IsZero() {
				start = e.Time
			}
			last = e.Time
		}
	}
	if len(j.Entries) > 0 && j.Entries[0].Event == journal.KindRunStarted && !j.Entries[0].Time.IsZero() {
		start = j.Entries[0].Time
	}
	at := func(t time.Time) string {
		if t.IsZero() || start.IsZero() {
			return ""
		}
		return "+" + duration(t.Sub(start))
	}
	stepOf := func(n int) *stepView {
		if s, ok := steps[n]; ok {
			return s
		}
		s := &stepView{ID: fmt.Sprintf("step-%d", n), Label: fmt.Sprintf("Step %d", n), Short: strconv.Itoa(n), called: map[string]bool{}, refused: map[string]bool{}}
		if n <= 0 {
			s.ID, s.Label, s.Short = "setup", "Before the first step", "·"
		}
		steps[n] = s
		order = append(order, s)
		return s
	}

	for i := range j.Entries {
		e := j.Entries[i]
		switch {
		case e.Event == journal.KindRunStarted && started == nil:
			started = &j.Entries[i]
			continue
		case e.Event == journal.KindEnded && ended == nil:
			ended = &j.Entries[i]
			continue
		}
		s := stepOf(e.Step)
		if !e.Time.IsZero() {
			if s.first.IsZero() {
				s.first = e.Time
			}
			s.last = e.Time
		}
		ev := eventView{Kind: string(e.Event), Class: "ev-" + string(e.Event), At: at(e.Time), E: e}
		switch e.Event {
		case journal.KindObserved:
			sh := imgs.load(e.Image)
			sh.URL, sh.Title, sh.Elements, sh.Tokens, sh.At = e.URL, e.Title, e.Elements, e.Tokens, ev.At
			s.Shots = append(s.Shots, sh)
			continue // shown beside the events
		case journal.KindReasoned:
			ev.Text = newText(e.Content, opts.MaxText)
			for _, c := range e.Calls {
				ev.Calls = append(ev.Calls, callView{Tool: c.Tool, Args: argsText(c.Args, opts.MaxText), Reasoning: newText(c.Reasoning, opts.MaxText)})
				s.called[c.Tool] = true
			}
			if e.Usage != nil {
				u := *e.Usage
				if u.Total == 0 {
					u.Total = u.Prompt + u.Completion
				}
				ev.Usage = fmt.Sprintf("%s tokens (%s in, %s out)", thousands(int64(u.Total)), thousands(int64(u.Prompt)), thousands(int64(u.Completion)))
				s.usage.Add(u)
				s.hasUsage = true
			}
		case journal.KindGated:
			switch strings.ToLower(e.Verdict) {
			case "allow":
				ev.Label, ev.Class = "allowed", ev.Class+" allow"
			case "deny":
				ev.Label, ev.Class = "DENIED", ev.Class+" deny"
				s.denied = true
				s.refused[e.Tool] = true
			case "ask":
				ev.Label, ev.Class = "ASK", ev.Class+" ask"
				switch {
				case e.Approved == nil:
					s.asked = true
				case *e.Approved:
					ev.Appr = "a person approved it"
					s.asked = true
				default:
					ev.Label, ev.Class = "REFUSED", ev.Class+" deny"
					ev.Appr = "a person refused it"
					s.denied = true
					s.refused[e.Tool] = true
				}
			default:
				// An unknown verdict is shown as is and treated as a denial:
				// the report must not make it look harmless.
				ev.Label, ev.Class = strings.ToUpper(e.Verdict), ev.Class+" deny"
				if ev.Label == "" {
					ev.Label = "NO VERDICT"
				}
				s.denied = true
				s.refused[e.Tool] = true
			}
			ev.Text = newText(e.Reason, opts.MaxText)
		case journal.KindActed:
			if !s.called[e.Tool] {
				ev.Args = argsText(e.Args, opts.MaxText)
			}
			ev.Text = newText(e.Result, opts.MaxText)
			ev.Err = newText(e.Error, opts.MaxText)
			switch {
			case e.Error != "" && s.refused[e.Tool]:
				// The gate's denial, reported back to the model: not a
				// failure of the action, which never ran.
				ev.Class += " refused"
				ev.Label = "not done"
			case e.Error != "":
				ev.Class += " error"
				ev.Label = "failed"
				s.errored = true
			}
			if e.Duration > 0 {
				ev.Dur = duration(time.Duration(e.Duration))
				s.acted += time.Duration(e.Duration)
			}
		case journal.KindRecovered:
			ev.Label = "recovered"
			ev.Text = newText(e.Message, opts.MaxText)
			ev.Err = newText(e.Error, opts.MaxText)
			s.recovered = true
		case journal.KindHandedOn:
			ev.Label = "handed on"
			ev.Text = newText(e.Message, opts.MaxText)
		case journal.KindTakenOver:
			ev.Label = "taken over"
			ev.Text = newText(e.Message, opts.MaxText)
			if e.Duration > 0 {
				ev.Dur = duration(time.Duration(e.Duration))
			}
		case journal.KindCorrected:
			ev.Label = "corrected"
			ev.Text = newText(e.Message, opts.MaxText)
			ev.Err = newText(e.Error, opts.MaxText)
			s.corrected = true
		default:
			ev.Kind, ev.Class = "other", "ev-other"
			b, _ := json.MarshalIndent(e, "", "  ")
			ev.Detail = textcut.Prefix(string(b), opts.MaxText)
		}
		s.Events = append(s.Events, ev)
	}

	sum := Summary{Images: imgs.loaded, Missing: imgs.missing, Ended: ended != nil}
	var total journal.Usage
	var acted time.Duration
	for _, s := range order {
		s.finish()
		if s.Short != "·" {
			sum.Steps++
		}
		if s.denied {
			sum.Denied++
		}
		if s.errored {
			sum.Errors++
		}
		if s.recovered {
			sum.Recovered++
		}
		total.Add(s.usage)
		acted += s.acted
	}
	p.Steps = order

	if started != nil {
		p.Task = started.Task
		p.Config, p.ConfigJS = settings(started.Config, opts.MaxText)
	}
	if !start.IsZero() {
		p.Started = start.UTC().Format("2006-01-02 15:04:05 MST")
	}
	p.Title = opts.Title
	if p.Title == "" {
		t := p.Task
		if t == "" {
			t = p.Journal
		}
		p.Title = "surf run: " + textcut.OneLine(t, 90)
	}
	if started == nil {
		p.Notes = append(p.Notes, "the journal has no run_started entry, so the task and configuration are unknown")
	}

	wall := time.Duration(0)
	if !start.IsZero() && last.After(start) {
		wall = last.Sub(start)
	}
	if ended != nil {
		p.End = buildEnd(*ended, sum.Steps, total, acted, wall, opts.MaxText)
		p.End.At = at(ended.Time)
	} else {
		what := "before the first step"
		if n := len(order); n > 0 {
			what = "after " + strings.ToLower(order[n-1].Label)
		}
		p.Notes = append(p.Notes, "the run has no end in the journal: it stops "+what+" (the run was killed, or is still going)")
	}

	p.Stats = append(p.Stats, stat{"", strconv.Itoa(sum.Steps), plural(sum.Steps, "step", "steps")})
	if sum.Denied > 0 {
		p.Stats = append(p.Stats, stat{"deny", strconv.Itoa(sum.Denied), "denied"})
	}
	if sum.Errors > 0 {
		p.Stats = append(p.Stats, stat{"error", strconv.Itoa(sum.Errors), plural(sum.Errors, "error", "errors")})
	}
	if sum.Recovered > 0 {
		p.Stats = append(p.Stats, stat{"recovered", strconv.Itoa(sum.Recovered), "recovered"})
	}
	tok := total.Total
	if ended != nil && ended.Tokens > 0 {
		tok = ended.Tokens
	}
	if tok > 0 {
		p.Stats = append(p.Stats, stat{"", thousands(int64(tok)), "tokens"})
	}
	if d := runDuration(ended, wall); d > 0 {
		p.Stats = append(p.Stats, stat{"", duration(d), "wall time"})
	}
	if ended != nil {
		r := string(ended.EndReason)
		if r == "" {
			r = "ended"
		}
		p.Stats = append(p.Stats, stat{"end " + p.End.Class, r, ""})
	} else {
		p.Stats = append(p.Stats, stat{"error", "no end", ""})
	}
	sum.Notes = p.Notes
	return p, sum
}

// finish sets a step's status, classes, badges and timings.
func (s *stepView) finish() {
	classes := []string{"step"}
	s.Status = "ok"
	switch {
	case s.denied:
		s.Status = "denied"
	case s.errored:
		s.Status = "error"
	case s.recovered:
		s.Status = "recovered"
	case s.asked:
		s.Status = "asked"
	}
	add := func(on bool, class, label string) {
		if on {
			classes = append(classes, class)
			s.Badges = append(s.Badges, stat{Class: class, Value: label})
		}
	}
	add(s.denied, "denied", "DENIED")
	add(s.errored, "error", "ERROR")
	add(s.recovered, "recovered", "RECOVERED")
	add(s.corrected, "corrected", "CORRECTED")
	add(s.asked && !s.denied, "asked", "ASKED")
	s.Classes = strings.Join(classes, " ")
	if s.acted > 0 {
		s.Timing = append(s.Timing, "action "+duration(s.acted))
	}
	if !s.first.IsZero() && s.last.Sub(s.first) >= time.Millisecond {
		s.Timing = append(s.Timing, "step "+duration(s.last.Sub(s.first)))
	}
	if s.hasUsage {
		s.Timing = append(s.Timing, thousands(int64(s.usage.Total))+" tokens")
	}
}

// End reasons surf does not write but the page counts as answered, for
// journals written by other programs.
const (
	endDone      journal.EndReason = "done"
	endCompleted journal.EndReason = "completed"
)

func buildEnd(e journal.Entry, steps int, total journal.Usage, acted, wall time.Duration, max int) *endView {
	v := &endView{Reason: string(e.EndReason), Answer: newText(e.Answer, max), Err: newText(e.Error, max)}
	switch {
	case e.Error != "" || e.EndReason == journal.EndFailed || e.EndReason == journal.EndError:
		v.Class = "bad"
	case e.EndReason == journal.EndAnswered || e.EndReason == endDone || e.EndReason == endCompleted:
		v.Class = "good"
	default:
		v.Class = "other"
	}
	if v.Reason == "" {
		v.Reason = "ended"
	}
	n := e.Steps
	if n == 0 {
		n = steps
	}
	v.Totals = append(v.Totals, setting{"Steps", strconv.Itoa(n)})
	if e.Tokens > 0 {
		v.Totals = append(v.Totals, setting{"Tokens", thousands(int64(e.Tokens))})
	} else if total.Total > 0 {
		v.Totals = append(v.Totals, setting{"Tokens", fmt.Sprintf("%s (%s in, %s out)", thousands(int64(total.Total)), thousands(int64(total.Prompt)), thousands(int64(total.Completion)))})
	}
	if d := runDuration(&e, wall); d > 0 {
		v.Totals = append(v.Totals, setting{"Wall time", duration(d)})
	}
	if acted > 0 {
		v.Totals = append(v.Totals, setting{"Time in actions", duration(acted)})
	}
	return v
}

// runDuration is the ended entry's duration, else the journal's span.
func runDuration(e *journal.Entry, wall time.Duration) time.Duration {
	if e != nil && e.Duration > 0 {
		return time.Duration(e.Duration)
	}
	return wall
}

// settings lists a run's configuration: the top-level keys of a JSON
// object in their order, or the raw text when it is something else.
func settings(raw json.RawMessage, max int) ([]setting, *text) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, argsText(raw, max)
	}
	var out []setting
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, argsText(raw, max)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, argsText(raw, max)
		}
		out = append(out, setting{Key: key, Value: settingValue(v)})
	}
	return out, nil
}

func settingValue(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return textcut.OneLine(s, 300)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return textcut.OneLine(buf.String(), 300)
	}
	return textcut.OneLine(string(v), 300)
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// duration formats d for people: "480 ms", "2.5 s", "3 min 05 s".
func duration(d time.Duration) string {
	switch {
	case d < 0:
		return "0 ms"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// thousands formats n with thin separators: 12,345.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
