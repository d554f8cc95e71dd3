package board

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// Saved states are kept encrypted, listed without values, named by tasks
// (an unknown name is refused at Add) and removed.
func TestSavedStates(t *testing.T) {
	b := openTest(t, "")
	ctx := testCtx(t)
	// a board with no saved state yet
	if list, err := b.States(ctx); err != nil || len(list) != 0 {
		t.Fatalf("States on a new board: %v, %v", list, err)
	}
	if _, _, err := b.State(ctx, "mail"); !errors.Is(err, ErrNoState) {
		t.Fatalf("State of a missing state: %v", err)
	}
	if _, err := b.Add(ctx, Task{ID: "t1", Instruction: "x", SavedState: "mail"}); !errors.Is(err, ErrNoState) || !strings.Contains(err.Error(), "mail") {
		t.Fatalf("Add with an unknown state: %v", err)
	}
	if _, err := b.Get(ctx, "t1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a refused task is on the board: %v", err)
	}

	// never in clear
	clear := []byte(`{"cookies":[{"name":"sid","value":"s3cret","domain":"example.com"}],"origins":[]}`)
	info := StateInfo{Name: "mail", Recipients: []string{"age1n5d5refney43wccr9tfvkdf64r64dpge8a2c2nyruxlzc95fydvspa96gp"}, Cookies: 1, Hosts: []string{"example.com"}}
	if err := b.PutState(ctx, info, clear); err == nil || !strings.Contains(err.Error(), "not") {
		t.Fatalf("PutState of a clear state: %v", err)
	}
	if list, _ := b.States(ctx); len(list) != 0 {
		t.Fatalf("a refused state is listed: %v", list)
	}
	for _, bad := range []StateInfo{{Name: "../x", Recipients: info.Recipients}, {Name: "mail"}, {Name: "mail", Recipients: []string{"AGE-SECRET-KEY-1XYZ"}}} {
		if err := b.PutState(ctx, bad, []byte("age-encryption.org/v1\n...")); err == nil {
			t.Fatalf("PutState(%+v) took", bad)
		}
	}

	sealed := []byte("age-encryption.org/v1\n-> X25519 stand-in\n--- mac\nciphertext")
	if err := b.PutState(ctx, info, sealed); err != nil {
		t.Fatal(err)
	}
	got, gotInfo, err := b.State(ctx, "mail")
	if err != nil || !bytes.Equal(got, sealed) {
		t.Fatalf("State: %q, %v", got, err)
	}
	if gotInfo.Name != "mail" || gotInfo.Cookies != 1 || gotInfo.Size != int64(len(sealed)) || len(gotInfo.Recipients) != 1 ||
		gotInfo.Recipients[0] != info.Recipients[0] || len(gotInfo.Hosts) != 1 || gotInfo.Put.IsZero() {
		t.Fatalf("State's info: %+v", gotInfo)
	}
	list, err := b.States(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "mail" {
		t.Fatalf("States: %+v, %v", list, err)
	}
	recs, err := b.Add(ctx, Task{ID: "t1", Instruction: "x", SavedState: "mail"})
	if err != nil {
		t.Fatal(err)
	}
	if recs[0].Task.SavedState != "mail" {
		t.Fatalf("the record: %+v", recs[0])
	}
	if _, err := b.Add(ctx, Task{ID: "t2", Instruction: "x", SavedState: "no/such"}); err == nil {
		t.Fatal("a bad state name was taken")
	}

	if err := b.RemoveState(ctx, "mail"); err != nil {
		t.Fatal(err)
	}
	if err := b.RemoveState(ctx, "mail"); !errors.Is(err, ErrNoState) {
		t.Fatalf("removing it twice: %v", err)
	}
	if _, _, err := b.State(ctx, "mail"); !errors.Is(err, ErrNoState) {
		t.Fatalf("State after RemoveState: %v", err)
	}
}
