package live

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/websurfer"
)

// StepInfo is one step of the timeline.
type StepInfo struct {
	// N numbers the session's timeline; RunStep is the step's number in
	// its run (a session may hold several runs, and single calls).
	N       int    `json:"n"`
	RunStep int    `json:"run_step,omitempty"`
	Tool    string `json:"tool"`
	Target  string `json:"target,omitempty"`
	Verdict string `json:"verdict"`
	Result  string `json:"result,omitempty"`
	IsError bool   `json:"is_error,omitempty"`
	// Reasoning is the model's, when it gave one.
	Reasoning string   `json:"reasoning,omitempty"`
	Notes     []string `json:"notes,omitempty"`
	// DurationMS is the step's time; ObserveMS the observation's part of
	// it.
	DurationMS int64 `json:"duration_ms"`
	ObserveMS  int64 `json:"observe_ms,omitempty"`
	Tokens     int   `json:"tokens"`
	// Image says the step's screenshot can be fetched; Picture says
	// what it shows: "before" (the page the model saw when it chose the
	// step, in a run) or "after" (the page the call left, for a single
	// call from an MCP client).
	Image     bool      `json:"image"`
	Picture   string    `json:"picture,omitempty"`
	URL       string    `json:"url,omitempty"` // the page the step saw
	At        time.Time `json:"at"`
	Done      bool      `json:"done,omitempty"`
	EndReason string    `json:"end_reason,omitempty"`
	Answer    string    `json:"answer,omitempty"`
}

// image is a screenshot kept for the UI.
type image struct {
	data []byte
	mime string
}

// Step adds a run's step to the timeline (and keeps its set-of-mark
// screenshot for a while).
func (s *Session) Step(st *websurfer.Step) {
	if st == nil {
		return
	}
	info := StepInfo{RunStep: st.N, Verdict: "allow", DurationMS: st.Duration.Milliseconds(), Tokens: st.Usage.Total,
		At: time.Now(), Done: st.Done, EndReason: string(st.EndReason), Answer: s.red(st.Answer)}
	if len(st.Calls) > 0 {
		c := st.Calls[0]
		info.Tool = c.Tool
		info.Target = s.red(target(c.Args))
		info.Reasoning = s.red(textcut.Flat(c.Reasoning, 300))
		if len(st.Calls) > 1 {
			info.Tool += fmt.Sprintf(" (+%d more)", len(st.Calls)-1)
		}
	} else if st.Done {
		info.Tool = "(answered)"
	} else {
		info.Tool = "(no tool call)"
	}
	for _, d := range st.Decisions {
		if d.Target != "" && info.Target == "" {
			info.Target = s.red(d.Target)
		}
		if v := d.Outcome(); v != "allow" {
			info.Verdict = v
		}
	}
	if len(st.Results) > 0 {
		r := st.Results[0]
		info.Result = s.red(textcut.Flat(r.Text, 300))
		info.IsError = r.IsError
	}
	for _, n := range st.Notes {
		info.Notes = append(info.Notes, s.red(textcut.Flat(n, 300)))
	}
	var a *Answer
	if st.Done {
		a = &Answer{EndReason: string(st.EndReason), Text: s.red(st.Answer), At: info.At}
		if st.Failure != "" && a.Text == "" {
			a.Text = s.red(st.Failure)
		}
		if len(st.Data) > 0 {
			a.Data = s.red(string(st.Data))
		}
	}
	s.addStep(info, st.Observation, "before", a)
}

// Call adds a single call (an MCP client's tool call, outside a run) to
// the timeline: the tool, what it acted on, its result, and the page it
// left (o, the surfer's last observation, may be nil).
func (s *Session) Call(tool string, args json.RawMessage, result string, isError bool, d time.Duration, o *websurfer.Observation) {
	verdict := "allow"
	if isError && strings.Contains(result, "denied") {
		verdict = "deny"
	}
	info := StepInfo{Tool: tool, Target: s.red(target(args)), Verdict: verdict, Result: s.red(textcut.Flat(result, 300)),
		IsError: isError, Reasoning: s.red(textcut.Flat(reasoning(args), 300)), DurationMS: d.Milliseconds(), At: time.Now()}
	s.addStep(info, o, "after", nil)
}

// reasoning is the reasoning argument of a call, if it has one.
func reasoning(args json.RawMessage) string {
	var v struct {
		Reasoning string `json:"reasoning"`
	}
	json.Unmarshal(args, &v)
	return v.Reasoning
}

// addStep adds a step to the timeline, with o's image as its picture,
// and a, when the step ended a run, as the session's answer.
func (s *Session) addStep(info StepInfo, o *websurfer.Observation, picture string, a *Answer) {
	if o != nil {
		info.URL = s.red(o.URL)
		info.ObserveMS = o.Timing.Total.Milliseconds()
		info.Image = len(o.Image) > 0
		if info.Image {
			info.Picture = picture
		}
	}
	s.mu.Lock()
	s.nsteps++
	info.N = s.nsteps
	if a != nil {
		a.Step = info.N
		s.answer = a
	}
	s.steps = append(s.steps, info)
	if len(s.steps) > MaxSteps {
		s.steps = s.steps[len(s.steps)-MaxSteps:]
	}
	if info.Image {
		img := image{data: o.Image, mime: o.ImageMIME}
		s.images[info.N] = img
		s.last = img
		for n := range s.images {
			if n <= info.N-MaxImages {
				delete(s.images, n)
			}
		}
	}
	s.mu.Unlock()
	s.publish(Event{Type: "step", Data: info})
	s.changed()
}

// Observed records an observation made outside a run (an MCP client's
// action): its image is the live view's set-of-mark overlay.
func (s *Session) Observed(o *websurfer.Observation) {
	if o == nil || len(o.Image) == 0 {
		return
	}
	s.mu.Lock()
	s.last = image{data: o.Image, mime: o.ImageMIME}
	s.mu.Unlock()
	s.publish(Event{Type: "observed", Data: map[string]int{"seq": o.Seq}})
}

// StepImage returns a step's screenshot and its MIME type.
func (s *Session) StepImage(n int) ([]byte, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	img, ok := s.images[n]
	if !ok {
		return nil, "", fmt.Errorf("the screenshot of step %d: %w", n, ErrNotFound)
	}
	return img.data, img.mime, nil
}

// LastImage returns the set-of-mark image of the last observation.
func (s *Session) LastImage() ([]byte, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.last.data) == 0 {
		return nil, "", fmt.Errorf("the set-of-mark image: %w (no observation yet)", ErrNotFound)
	}
	return s.last.data, s.last.mime, nil
}

// target is what a call acts on, from its arguments.
func target(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"url", "target_id", "input_field_id", "query", "question", "tab_id", "option", "keys", "reason", "answer"} {
		if v, ok := m[k]; ok {
			return textcut.Flat(strings.TrimSpace(fmt.Sprint(v)), 120)
		}
	}
	return ""
}
