package journal

import (
	"encoding/json"
	"fmt"
	"time"
)

// Kind is what happened at a journal line: its "event".
type Kind string

// The kinds of journal lines, one JSON line each.
const (
	KindRunStarted Kind = "run_started" // the task and the run's settings
	KindObserved   Kind = "observed"    // surf observed the page
	KindReasoned   Kind = "reasoned"    // the model replied
	KindGated      Kind = "gated"       // the policy gate decided on an action or a request
	KindActed      Kind = "acted"       // a tool ran (or was refused)
	KindRecovered  Kind = "recovered"   // a lost browser or tab was replaced
	KindCorrected  Kind = "corrected"   // the model's reply was malformed, or it was warned, and it was told so
	KindEnded      Kind = "ended"       // the run ended
	KindTakenOver  Kind = "taken_over"  // a person took over the browser between steps (Message: the note for the model)
	KindHandedOn   Kind = "handed_on"   // results of the tasks this run's task runs after, as given to the model (Message)
)

// EndReason is why a run ended.
type EndReason string

// Why runs end.
const (
	EndAnswered  EndReason = "answered"   // stop_action, or a plain-text answer
	EndMaxSteps  EndReason = "max_steps"  // the run's MaxSteps was reached
	EndMaxTokens EndReason = "max_tokens" // the run's MaxTokens were spent
	EndMaxTime   EndReason = "max_time"   // the run's MaxTime passed
	EndStalled   EndReason = "stalled"    // looping or no progress, after a warning
	EndCancelled EndReason = "cancelled"  // the caller's context ended
	EndError     EndReason = "error"      // a runtime error: the model, or a browser that could not be recovered
	EndFailed    EndReason = "failed"     // a scripted run (surf demo) could not finish, or the structured answer never matched its schema (Error)
)

// Entry is one line of the journal. Which fields are set depends on Event.
type Entry struct {
	Time  time.Time `json:"time"`
	Event Kind      `json:"event"`
	Step  int       `json:"step,omitempty"`

	// run_started
	Task   string          `json:"task,omitempty"`
	Config json.RawMessage `json:"config,omitempty"`

	// observed
	URL      string `json:"url,omitempty"`
	Title    string `json:"title,omitempty"`
	Elements int    `json:"elements,omitempty"`
	Tokens   int    `json:"tokens,omitempty"`
	Image    string `json:"image,omitempty"` // path of the set-of-mark image, relative to the journal
	Seq      int    `json:"seq,omitempty"`

	// reasoned
	Calls   []Call `json:"calls,omitempty"`
	Content string `json:"content,omitempty"`
	Usage   *Usage `json:"usage,omitempty"`

	// gated
	Tool     string `json:"tool,omitempty"`
	Verdict  string `json:"verdict,omitempty"`
	Rule     string `json:"rule,omitempty"`
	Reason   string `json:"reason,omitempty"`
	Target   string `json:"target,omitempty"`
	Approved *bool  `json:"approved,omitempty"`

	// acted
	Args     json.RawMessage `json:"args,omitempty"`
	Result   string          `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Duration Duration        `json:"duration,omitempty"`

	// recovered, corrected
	Message string `json:"message,omitempty"`

	// ended
	EndReason EndReason `json:"end_reason,omitempty"`
	Answer    string    `json:"answer,omitempty"`
	// Data is the structured answer, validated against the run's
	// output schema.
	Data  json.RawMessage `json:"data,omitempty"`
	Steps int             `json:"steps,omitempty"`
}

// Call is a tool call as the model made it.
type Call struct {
	ID        string          `json:"id,omitempty"`
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"`
	Reasoning string          `json:"reasoning,omitempty"`
}

// Usage is token usage.
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	Total      int `json:"total"`
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.Prompt += v.Prompt
	u.Completion += v.Completion
	u.Total += v.Total
}

// Duration is a time.Duration written as milliseconds.
type Duration time.Duration

// MarshalJSON writes milliseconds with three decimals.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(fmt.Sprintf("%.3f", float64(time.Duration(d).Microseconds())/1000)), nil
}

// UnmarshalJSON reads milliseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var ms float64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*d = Duration(time.Duration(ms * float64(time.Millisecond)))
	return nil
}
