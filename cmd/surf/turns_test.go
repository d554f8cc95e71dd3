package main

import (
	"context"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// blockingModel signals each call on in and answers once release closes.
type blockingModel struct{ in, release chan struct{} }

var _ websurfer.Model = blockingModel{}

func (m blockingModel) CreateChatCompletion(ctx context.Context, _ openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	m.in <- struct{}{}
	select {
	case <-m.release:
		return openai.ChatCompletionResponse{ID: "answer"}, nil
	case <-ctx.Done():
		return openai.ChatCompletionResponse{}, ctx.Err()
	}
}

// TestTurnLetGoWhileWaiting: with one turn, a task waiting on its model
// or on a person's approval lets another task drive the browser, and gets
// its turn back (after the other lets go) before it goes on.
func TestTurnLetGoWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := admit.New(1)
	a, b := &turn{q: q}, &turn{q: q}
	if err := a.take(ctx); err != nil {
		t.Fatal(err)
	}

	m := blockingModel{in: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		resp, err := turnModel{m: m, t: a}.CreateChatCompletion(ctx, openai.ChatCompletionRequest{})
		if err == nil && resp.ID != "answer" {
			t.Errorf("the model's answer was lost: %+v", resp)
		}
		done <- err
	}()
	<-m.in
	if err := b.take(ctx); err != nil {
		t.Fatalf("no turn for another task while the model thinks: %v", err)
	}
	close(m.release)
	waitUntil(t, "the task to wait for its turn back", func() bool { return q.Waiting() == 1 })
	select {
	case err := <-done:
		t.Fatalf("the model call returned (%v) while another task held the only turn", err)
	default:
	}
	b.drop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !a.held || q.Active() != 1 {
		t.Fatalf("after the model call: held %v, %d turns out; want the task to hold the only one", a.held, q.Active())
	}

	// The same while a person decides.
	asked := make(chan struct{})
	answer := make(chan bool)
	ap := turnApprover{a: policy.ApproverFunc(func(ctx context.Context, _ policy.Decision) (bool, error) {
		close(asked)
		return <-answer, nil
	}), t: a}
	got := make(chan bool, 1)
	go func() {
		ok, err := ap.Approve(ctx, policy.Decision{})
		if err != nil {
			t.Error(err)
		}
		got <- ok
	}()
	<-asked
	if err := b.take(ctx); err != nil {
		t.Fatalf("no turn for another task while a person decides: %v", err)
	}
	b.drop()
	answer <- true
	if !<-got {
		t.Fatal("the approval was lost")
	}
	a.drop()
	a.drop() // twice is harmless
	if n := q.Active(); n != 0 {
		t.Fatalf("%d turns out after every task let go, want 0", n)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
