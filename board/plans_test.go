package board

import (
	"errors"
	"strings"
	"testing"
)

// TestPlanRecords: plan records are created once, replaced only at the
// revision they were read at (a second planner on the same plan loses),
// and read back by a new process on the same directory.
func TestPlanRecords(t *testing.T) {
	dir := t.TempDir()
	b := openTest(t, dir)
	ctx := testCtx(t)
	if _, _, err := b.GetPlan(ctx, "p1"); !errors.Is(err, ErrNoPlan) {
		t.Fatalf("GetPlan of a missing plan: %v", err)
	}
	rev, err := b.PutPlan(ctx, "p1", []byte(`{"v":1}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutPlan(ctx, "p1", []byte(`{"v":2}`), 0); !errors.Is(err, ErrPlanConflict) {
		t.Errorf("a second create: %v", err)
	}
	rev2, err := b.PutPlan(ctx, "p1", []byte(`{"v":2}`), rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PutPlan(ctx, "p1", []byte(`{"v":3}`), rev); !errors.Is(err, ErrPlanConflict) {
		t.Errorf("a write at a stale revision: %v", err)
	}
	if _, err := b.PutPlan(ctx, "bad id", []byte(`{}`), 0); err == nil || !strings.Contains(err.Error(), "task id") {
		t.Errorf("a bad id: %v", err)
	}
	b.Close()
	b = openTest(t, dir)
	data, got, err := b.GetPlan(ctx, "p1")
	if err != nil || string(data) != `{"v":2}` || got != rev2 {
		t.Errorf("read back: %s rev %d (want %d), %v", data, got, rev2, err)
	}
	if ids, err := b.ListPlans(ctx); err != nil || strings.Join(ids, ",") != "p1" {
		t.Errorf("ListPlans: %v %v", ids, err)
	}
}
