package board

import (
	"fmt"
	"slices"
	"strings"
)

// States are the states of a task, in the order a task goes through
// them: pending, ready, running, then done, failed or cancelled.
func States() []State {
	return []State{Pending, Ready, Running, Done, Failed, Cancelled}
}

// ParseStates reads lists of state names, each a comma-separated list
// such as "failed,cancelled" (case and spaces do not matter). An unknown
// name is an error that names it.
func ParseStates(lists ...string) ([]State, error) {
	var out []State
	for _, list := range lists {
		for _, s := range strings.Split(list, ",") {
			st := State(strings.ToLower(strings.TrimSpace(s)))
			if !slices.Contains(States(), st) {
				return nil, fmt.Errorf("state %q: the states are pending, ready, running, done, failed and cancelled", s)
			}
			if !slices.Contains(out, st) {
				out = append(out, st)
			}
		}
	}
	return out, nil
}

// ParseLabels reads labels written KEY=VALUE (the key trimmed of
// spaces, the value as it is). It returns nil for no labels.
func ParseLabels(kvs ...string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("label %q: write it as KEY=VALUE", kv)
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// A Filter selects records: those in one of States (any state when it
// is empty) that carry every label of Labels. The zero Filter selects
// every record.
type Filter struct {
	States []State
	Labels map[string]string
}

// Match reports whether f selects r.
func (f Filter) Match(r Record) bool {
	if len(f.States) > 0 && !slices.Contains(f.States, r.State) {
		return false
	}
	for k, v := range f.Labels {
		if got, ok := r.Task.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Select returns the records f selects, in their order; it is never nil.
func (f Filter) Select(recs []Record) []Record {
	out := []Record{}
	for _, r := range recs {
		if f.Match(r) {
			out = append(out, r)
		}
	}
	return out
}

// Outcome is what a record has to show for itself: the reason a failed
// or cancelled task ended (or its state, when it has no reason), the
// answer of a task with a result, else "".
func (r Record) Outcome() string {
	switch {
	case r.State == Failed || r.State == Cancelled:
		if r.Reason != "" {
			return r.Reason
		}
		return string(r.State)
	case r.Result != nil:
		return r.Result.Answer
	}
	return ""
}
