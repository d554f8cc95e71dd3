// Package boardcli is the rendering of surf board: the tables of list and
// watch, the record of show, the lines of watch off a terminal, and the
// fetching of a finished run's files for report. The surf command parses
// the flags, opens the board and prints what these functions write.
package boardcli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/termsafe"
	"github.com/surfkit/surf/internal/textcut"
	"github.com/surfkit/surf/policy"
)

// TermWidth is w's width when it is a terminal, else 120.
func TermWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 120
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Table prints records as surf board list shows them, the last column
// (the answer) cut so that lines fit width.
func Table(w io.Writer, recs []board.Record, now time.Time, width int) {
	rows := [][]string{{"ID", "STATE", "WORKER", "ATTEMPTS", "AGE"}}
	for _, r := range recs {
		rows = append(rows, []string{r.Task.ID, string(r.State), orDash(r.Worker), strconv.Itoa(r.Attempts), Age(now.Sub(r.Created))})
	}
	last := []string{"ANSWER"}
	for _, r := range recs {
		last = append(last, r.Outcome())
	}
	writeTable(w, rows, last, width)
}

// WatchTable prints the counts per state and the running tasks, as surf
// board watch shows them.
func WatchTable(w io.Writer, recs map[string]board.Record, now time.Time, width int) {
	counts := map[board.State]int{}
	var running []board.Record
	for _, r := range recs {
		counts[r.State]++
		if r.State == board.Running {
			running = append(running, r)
		}
	}
	parts := []string{fmt.Sprintf("%d %s", len(recs), plural(len(recs), "task", "tasks"))}
	for _, s := range board.States() {
		parts = append(parts, fmt.Sprintf("%s %d", s, counts[s]))
	}
	fmt.Fprintln(w, strings.Join(parts, "  "))
	if len(running) == 0 {
		fmt.Fprintln(w, "nothing running")
		return
	}
	slices.SortFunc(running, func(a, b board.Record) int {
		return strings.Compare(a.Worker+"\x00"+a.Task.ID, b.Worker+"\x00"+b.Task.ID)
	})
	rows := [][]string{{"WORKER", "ID", "ATTEMPT", "FOR"}}
	for _, r := range running {
		since := "-"
		if !r.Started.IsZero() {
			since = Age(now.Sub(r.Started))
		}
		rows = append(rows, []string{orDash(r.Worker), r.Task.ID, strconv.Itoa(r.Attempts), since})
	}
	last := []string{"PROGRESS"}
	for _, r := range running {
		last = append(last, orDash(r.Progress))
	}
	writeTable(w, rows, last, width)
}

// ChangeLine is one change as surf board watch prints it off a terminal.
func ChangeLine(r board.Record, now time.Time) string {
	s := fmt.Sprintf("%s %s %s", now.Format("15:04:05"), r.Task.ID, r.State)
	if r.Worker != "" && !r.State.Terminal() && r.State != board.Ready {
		s += fmt.Sprintf(" %s attempt %d", r.Worker, r.Attempts)
	}
	if r.State == board.Running && r.Progress != "" {
		s += ": " + textcut.OneLine(r.Progress, 200)
	}
	if o := r.Outcome(); r.State.Terminal() && o != "" {
		s += ": " + textcut.OneLine(o, 200)
	}
	return s
}

// writeTable prints rows in aligned columns, then each row's last cell
// (a free text: an answer, a progress) cut so that lines fit width.
func writeTable(w io.Writer, rows [][]string, last []string, width int) {
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len([]rune(cell)))
		}
	}
	used := 0
	for _, wd := range widths {
		used += wd + 2
	}
	room := max(width-used-1, 20)
	for i, row := range rows {
		var sb strings.Builder
		for j, cell := range row {
			sb.WriteString(cell)
			sb.WriteString(strings.Repeat(" ", widths[j]-len([]rune(cell))+2))
		}
		sb.WriteString(textcut.Runes(textcut.OneLine(last[i], 4*room), room))
		fmt.Fprintln(w, strings.TrimRight(sb.String(), " "))
	}
}

// Show prints everything about one record, as surf board show does: the
// task, its state, worker, attempts and notes, its times, and its result.
func Show(out io.Writer, r board.Record, now time.Time) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "%s\t%s\n", k, termsafe.Lines(v))
		}
	}
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), Age(now.Sub(t)))
	}
	showTask(line, r.Task)
	line("state", string(r.State))
	if r.Attaching {
		line("attaching", "its attachments are being stored; it stays pending until they are")
	}
	line("reason", r.Reason)
	line("worker", r.Worker)
	line("attempts", strconv.Itoa(r.Attempts))
	if r.State == board.Running {
		line("progress", r.Progress)
	}
	line("created", when(r.Created))
	line("started", when(r.Started))
	line("finished", when(r.Finished))
	line("updated", when(r.Updated))
	list(w, "notes", r.Notes)
	if res := r.Result; res != nil {
		line("answer", res.Answer)
		if len(res.Data) > 0 {
			line("data", string(res.Data))
		}
		line("end reason", res.EndReason)
		line("steps", strconv.Itoa(res.Steps))
		line("tokens", commas(int64(res.Tokens)))
		if res.Duration > 0 {
			line("duration", time.Duration(res.Duration).Round(time.Millisecond).String())
		}
		line("journal", res.Journal)
		list(w, "images", res.Images)
		line("report", res.Report)
	}
	if n := len(r.Files()); n > 0 {
		line("files", fmt.Sprintf("%d (surf board files %s)", n, r.Task.ID))
	}
	w.Flush()
}

// showTask prints the task's own fields, one line each.
func showTask(line func(k, v string), t board.Task) {
	line("id", t.ID)
	line("instruction", textcut.OneLine(t.Instruction, 2000))
	line("start url", t.StartURL)
	if len(t.After) > 0 {
		after := strings.Join(t.After, ", ")
		if t.RunAfterFailure {
			after += " (runs even when they fail)"
		}
		line("after", after)
	}
	if t.Policy != nil {
		line("policy", describePolicy(t.Policy))
	}
	line("saved state", t.SavedState)
	line("limits", taskLimits(t))
	line("labels", taskLabels(t.Labels))
	if len(t.OutputSchema) > 0 {
		line("output schema", textcut.Bytes(string(t.OutputSchema), 500))
	}
}

// list prints items one a line, the key on the first.
func list(w io.Writer, key string, items []string) {
	for i, s := range items {
		k := ""
		if i == 0 {
			k = key
		}
		fmt.Fprintf(w, "%s\t%s\n", k, s)
	}
}

// taskLimits is a task's own limits, as board show prints them.
func taskLimits(t board.Task) string {
	var limits []string
	if t.MaxSteps > 0 {
		limits = append(limits, fmt.Sprintf("%d steps", t.MaxSteps))
	}
	if t.MaxTime > 0 {
		limits = append(limits, time.Duration(t.MaxTime).String())
	}
	return strings.Join(limits, ", ")
}

// taskLabels is labels as k=v, sorted by key.
func taskLabels(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		keys[i] = k + "=" + labels[k]
	}
	return strings.Join(keys, ", ")
}

func describePolicy(p *board.Policy) string {
	var parts []string
	rules := func(label string, rs []policy.HostRule) {
		if len(rs) == 0 {
			return
		}
		s := make([]string, len(rs))
		for i, r := range rs {
			s[i] = r.String()
		}
		parts = append(parts, label+" "+strings.Join(s, ", "))
	}
	rules("allow", p.Allow)
	rules("ask", p.Ask)
	rules("deny", p.Deny)
	if n := len(p.Actions); n > 0 {
		parts = append(parts, fmt.Sprintf("%d action %s", n, plural(n, "rule", "rules")))
	}
	return strings.Join(parts, "; ")
}

// Age is d in one unit: 42s, 5m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// commas is n with thousands separated by commas.
func commas(n int64) string {
	s := fmt.Sprint(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
