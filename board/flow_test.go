package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAddChecksReferencesAndSchemas: a reference to a task the task does
// not run after, a malformed one, or an output schema that is not one
// refuses the batch; nothing is added.
func TestAddChecksReferencesAndSchemas(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	for _, tc := range []struct {
		tasks []Task
		want  string
	}{
		{[]Task{{ID: "A", Instruction: "a"}, {ID: "B", Instruction: "use {{A.answer}}"}}, "refers to {{A.answer}}, which it does not run after"},
		{[]Task{{ID: "A", Instruction: "a"}, {ID: "B", Instruction: "use {{C.answer}}", After: []string{"A"}}}, "which it does not run after (add --after C)"},
		{[]Task{{ID: "A", Instruction: "a"}, {ID: "B", Instruction: "use {{A.price}}", After: []string{"A"}}}, "is not a reference"},
		{[]Task{{ID: "A", Instruction: "a", OutputSchema: json.RawMessage(`{"type":"nope"}`)}}, `unknown type "nope"`},
		{[]Task{{ID: "A", Instruction: "a", OutputSchema: json.RawMessage(`[]`)}}, "not a JSON object"},
	} {
		_, err := b.Add(ctx, tc.tasks...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Add(%+v) = %v; want an error with %q", tc.tasks, err, tc.want)
		}
		if _, err := b.Get(ctx, "A"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("a refused batch left A on the board: %v", err)
		}
	}
	recs, err := b.Add(ctx,
		Task{ID: "A", Instruction: "a", OutputSchema: json.RawMessage(`{ "type": "object" }`)},
		Task{ID: "B", Instruction: "use {{A.answer}} and {{A.result.n}}", After: []string{"A"}})
	if err != nil {
		t.Fatal(err)
	}
	if string(recs[0].Task.OutputSchema) != `{"type":"object"}` {
		t.Errorf("the stored schema: %s", recs[0].Task.OutputSchema)
	}
}

// TestClaimCarriesDependencies: a task's claim has the records of the
// tasks it runs after, with their results, in its After order.
func TestClaimCarriesDependencies(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	if _, err := b.Add(ctx,
		Task{ID: "A", Instruction: "a"},
		Task{ID: "B", Instruction: "b"},
		Task{ID: "C", Instruction: "c from {{B.result.n}}", After: []string{"B", "A"}}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []Record
	run := func(ctx context.Context, c *Claim) (*Result, error) {
		if c.Task.ID == "C" {
			mu.Lock()
			seen = c.After
			mu.Unlock()
		}
		return &Result{Answer: "answer of " + c.Task.ID, Data: json.RawMessage(`{"n":` + map[string]string{"A": "1", "B": "2", "C": "3"}[c.Task.ID] + `}`)}, nil
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- b.Work(wctx, WorkConfig{Workers: 2, Run: run}) }()
	_, err := b.Wait(ctx, "C")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0].Task.ID != "B" || seen[1].Task.ID != "A" {
		t.Fatalf("C's claim had %+v", seen)
	}
	if seen[0].HandedAnswer() != "answer of B" || string(seen[0].ResultData()) != `{"n":2}` {
		t.Errorf("B as handed on: %q %s", seen[0].HandedAnswer(), seen[0].ResultData())
	}
}

func TestHandedAnswerOfFailedTask(t *testing.T) {
	r := Record{Task: Task{ID: "B"}, State: Failed, Reason: "the run ended with max_steps", Result: &Result{Answer: "partial", Data: json.RawMessage(`{"n":1}`)}}
	if got := r.HandedAnswer(); got != "(the task ended failed: the run ended with max_steps; its last answer was: partial)" {
		t.Errorf("HandedAnswer = %q", got)
	}
	if r.ResultData() != nil {
		t.Errorf("a failed task hands on data")
	}
	if got := (Record{State: Cancelled}).HandedAnswer(); got != "(no answer: the task ended cancelled)" {
		t.Errorf("HandedAnswer = %q", got)
	}
}

func TestExportCSV(t *testing.T) {
	now := time.Now()
	recs := []Record{
		{Task: Task{ID: "a"}, State: Done, Created: now, Result: &Result{Answer: "x, \"y\"", Data: json.RawMessage(`{"price":12.5,"tags":["a","b"],"name":"n"}`)}},
		{Task: Task{ID: "b"}, State: Failed, Reason: "no", Result: &Result{Data: json.RawMessage(`[1,2]`)}},
		{Task: Task{ID: "c"}, State: Done, Result: &Result{Answer: "z", Data: json.RawMessage(`{"price":3}`)}},
		{Task: Task{ID: "d"}, State: Pending},
	}
	var buf bytes.Buffer
	if err := ExportCSV(&buf, recs); err != nil {
		t.Fatal(err)
	}
	want := `id,state,answer,reason,data,data.name,data.price,data.tags
a,done,"x, ""y""",,,n,12.5,"[""a"",""b""]"
b,failed,,no,"[1,2]",,,
c,done,z,,,,3,
d,pending,,,,,,
`
	if buf.String() != want {
		t.Errorf("CSV:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := ExportJSONL(&buf, recs[:1]); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != `{"id":"a","state":"done","answer":"x, \"y\"","data":{"price":12.5,"tags":["a","b"],"name":"n"}}`+"\n" {
		t.Errorf("JSONL: %s", got)
	}
}
