package bounded

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCall(t *testing.T) {
	want := errors.New("done")
	if err := Call(time.Minute, func() error { return want }); err != want {
		t.Errorf("a call that returns: %v, want its error", err)
	}
	block := make(chan struct{})
	defer close(block)
	err := Call(10*time.Millisecond, func() error { <-block; return nil })
	if err == nil || !strings.Contains(err.Error(), "no answer after 10ms") {
		t.Errorf("a call that never returns: %v", err)
	}
}
