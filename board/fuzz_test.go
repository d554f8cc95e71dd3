package board

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzTaskJSON feeds task records as JSONL lines and tool arguments carry
// them: any input is refused with an error or accepted, never a panic,
// and an accepted task reads back as it was written.
func FuzzTaskJSON(f *testing.F) {
	for _, s := range []string{
		`{"id": "A", "instruction": "find the hours", "start_url": "https://example.org/"}`,
		`{"instruction": "x", "after": ["A", "B"], "max_time": "5m", "max_steps": 3}`,
		`{"instruction": "x", "max_time": 90, "policy": {"allow": ["example.org", {"host": "*.example.com", "ports": [443]}], "deny": ["10.0.0.0/8"]}}`,
		`{"id": "bad id", "instruction": "x"}`,
		`{"instruction": "x", "policy": {"actions": [{"tool": "click", "verdict": "ask"}]}, "labels": {"k": "v"}}`,
		`{"instruction": "x", "max_time": "soon"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var task Task
		if err := json.Unmarshal(data, &task); err != nil {
			return
		}
		if task.ID == "" {
			task.ID = "t-fuzz"
		}
		if err := checkTask(&task); err != nil {
			return
		}
		out, err := json.Marshal(task)
		if err != nil {
			t.Fatalf("an accepted task does not write: %v", err)
		}
		var back Task
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("an accepted task does not read back: %v\n%s", err, out)
		}
		if err := checkTask(&back); err != nil {
			t.Fatalf("an accepted task is refused once written: %v\n%s", err, out)
		}
		again, _ := json.Marshal(back)
		if !reflect.DeepEqual(out, again) {
			t.Fatalf("a task changes when written twice:\n%s\n%s", out, again)
		}
	})
}
