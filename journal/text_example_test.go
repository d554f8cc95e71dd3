package journal_test

import (
	"encoding/json"
	"os"
	"time"

	"github.com/surfkit/surf/journal"
)

// ExampleWriteText prints a short run for people to read.
func ExampleWriteText() {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	approved := false
	journal.WriteText(os.Stdout, []journal.Entry{
		{Time: t0, Event: journal.KindRunStarted, Task: "find the hours", Config: json.RawMessage(`{"model":"m","max_steps":5}`)},
		{Time: t0.Add(time.Second), Event: journal.KindObserved, Step: 1, URL: "http://127.0.0.1:8080/", Title: "Library", Elements: 3, Tokens: 40},
		{Time: t0.Add(2 * time.Second), Event: journal.KindReasoned, Step: 1, Calls: []journal.Call{{Tool: "click", Args: json.RawMessage(`{"target_id":2}`), Reasoning: "open hours"}}},
		{Time: t0.Add(2 * time.Second), Event: journal.KindGated, Step: 1, Tool: "click", Verdict: "ask", Target: "http://127.0.0.1:8080/hours", Rule: "ask", Approved: &approved, Reason: "asked"},
		{Time: t0.Add(3 * time.Second), Event: journal.KindActed, Step: 1, Tool: "click", Error: "not approved", Duration: journal.Duration(1500 * time.Millisecond)},
		{Time: t0.Add(4 * time.Second), Event: journal.KindEnded, Steps: 1, EndReason: journal.EndAnswered, Answer: "10 to 2", Duration: journal.Duration(4 * time.Second)},
	})
	// Output:
	// task: find the hours
	// config: model=m max_steps=5
	//
	// ── step 1  (+1s)
	//    page   http://127.0.0.1:8080/  "Library"  (3 elements, 40 tokens)
	//    call   click {"target_id":2}
	//           why: open hours
	//    gate   ask click http://127.0.0.1:8080/hours (rule ask) approved=false  <<
	//           asked
	//    error  click: not approved  [1.5s]
	//
	// ended: answered after 1 steps, 4s
	// answer: 10 to 2
}
