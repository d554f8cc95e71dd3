package journal

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
)

// WriteText writes entries for people to read: the task and
// configuration, then each step's page, the model's tool calls and
// reasoning, the gate's verdicts and what happened, then how the run
// ended. It does not make the text safe for a terminal: wrap w for that.
func WriteText(w io.Writer, entries []Entry) {
	var start time.Time
	for _, e := range entries {
		if start.IsZero() {
			start = e.Time
		}
		at := e.Time.Sub(start).Round(time.Millisecond)
		switch e.Event {
		case KindRunStarted:
			fmt.Fprintf(w, "task: %s\n", termsafe.String(e.Task))
			showConfig(w, e.Config)
		case KindObserved:
			fmt.Fprintf(w, "\n── step %d  (+%s)\n   page   %s  %q  (%d elements, %d tokens)\n", e.Step, at, termsafe.String(e.URL), e.Title, e.Elements, e.Tokens)
			if e.Image != "" {
				fmt.Fprintf(w, "   image  %s\n", e.Image)
			}
		case KindReasoned:
			for _, c := range e.Calls {
				fmt.Fprintf(w, "   call   %s %s\n", c.Tool, compactJSON(c.Args))
				if c.Reasoning != "" {
					fmt.Fprintf(w, "          why: %s\n", c.Reasoning)
				}
			}
			if e.Content != "" {
				fmt.Fprintf(w, "   says   %s\n", textcut.Flat(e.Content, 200))
			}
			if e.Usage != nil {
				fmt.Fprintf(w, "   tokens %d (prompt %d, completion %d)\n", e.Usage.Total, e.Usage.Prompt, e.Usage.Completion)
			}
		case KindGated:
			showGate(w, e)
		case KindActed:
			d := time.Duration(e.Duration).Round(time.Millisecond)
			if e.Error != "" {
				fmt.Fprintf(w, "   error  %s: %s  [%s]\n", e.Tool, textcut.Flat(e.Error, 200), d)
			} else {
				fmt.Fprintf(w, "   did    %s  [%s]\n", textcut.Flat(e.Result, 200), d)
			}
		case KindCorrected:
			fmt.Fprintf(w, "   fix    %s\n", textcut.Flat(e.Message, 200))
		case KindRecovered:
			fmt.Fprintf(w, "   crash  %s\n", textcut.Flat(e.Message, 200))
		case KindHandedOn:
			fmt.Fprintf(w, "handed on: %s\n", textcut.Flat(e.Message, 400))
		case KindEnded:
			fmt.Fprintf(w, "\nended: %s after %d steps", e.EndReason, e.Steps)
			if e.Usage != nil {
				fmt.Fprintf(w, ", %d tokens", e.Usage.Total)
			}
			fmt.Fprintf(w, ", %s\n", time.Duration(e.Duration).Round(time.Millisecond))
			if e.Answer != "" {
				fmt.Fprintf(w, "answer: %s\n", e.Answer)
			}
			if len(e.Data) > 0 {
				fmt.Fprintf(w, "data: %s\n", textcut.Bytes(string(e.Data), 2000))
			}
			if e.Error != "" {
				fmt.Fprintf(w, "error: %s\n", e.Error)
			}
		}
	}
}

// showConfig prints a run's configuration, as the journal has it.
func showConfig(w io.Writer, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var cfg map[string]any
	if json.Unmarshal(raw, &cfg) != nil {
		return
	}
	var parts []string
	for _, k := range []string{"model", "start_url", "max_steps", "max_tokens", "max_time"} {
		if v, ok := cfg[k]; ok && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	fmt.Fprintf(w, "config: %s\n", strings.Join(parts, " "))
}

// showGate prints a gate's verdict.
func showGate(w io.Writer, e Entry) {
	mark := ""
	if e.Verdict != "allow" {
		mark = "  <<"
	}
	line := fmt.Sprintf("   gate   %s %s", e.Verdict, e.Tool)
	if e.Target != "" {
		line += " " + e.Target
	}
	if e.Rule != "" {
		line += fmt.Sprintf(" (rule %s)", e.Rule)
	}
	if e.Approved != nil {
		line += fmt.Sprintf(" approved=%v", *e.Approved)
	}
	fmt.Fprintln(w, line+mark)
	if e.Verdict != "allow" && e.Reason != "" {
		fmt.Fprintf(w, "          %s\n", e.Reason)
	}
}

func compactJSON(b json.RawMessage) string {
	s := strings.TrimSpace(string(b))
	return textcut.Bytes(s, 200)
}
