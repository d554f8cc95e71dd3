package main

import (
	"context"
	"sync"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// A board worker's surfers share one browser. A task holds a turn
// (admit.Queue) while it drives the browser: opening its session, acting,
// observing. It lets the turn go while it waits on anything else: the
// model, a person approving an action or helping, a takeover between
// steps. Package admit says why that serves more tasks a minute.

// turnQueue is the queue of --max-active n; 0 means admit.DefaultCapacity.
func turnQueue(n int) *admit.Queue {
	if n == 0 {
		n = admit.DefaultCapacity()
	}
	return admit.New(n)
}

// turn is one task's hold on a turn of q (nil q: no limit).
type turn struct {
	q    *admit.Queue
	mu   sync.Mutex
	held bool
}

// take waits for a turn unless the task holds one.
func (t *turn) take(ctx context.Context) error {
	if t.q == nil {
		return nil
	}
	t.mu.Lock()
	held := t.held
	t.mu.Unlock()
	if held {
		return nil
	}
	if _, err := t.q.Acquire(ctx); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.q.Release() // taken meanwhile: one is enough
		return nil
	}
	t.held = true
	return nil
}

// drop lets the task's turn go, if it holds one.
func (t *turn) drop() {
	if t.q == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.held {
		t.held = false
		t.q.Release()
	}
}

// away runs f without the turn and takes it back after; f's error wins.
func away[T any](ctx context.Context, t *turn, f func() (T, error)) (T, error) {
	t.drop()
	v, err := f()
	if terr := t.take(ctx); err == nil {
		err = terr
	}
	return v, err
}

// turnModel lets the turn go while the model thinks.
type turnModel struct {
	m websurfer.Model
	t *turn
}

var _ websurfer.Model = turnModel{}

func (tm turnModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return away(ctx, tm.t, func() (openai.ChatCompletionResponse, error) { return tm.m.CreateChatCompletion(ctx, req) })
}

// turnApprover lets the turn go while a person decides.
type turnApprover struct {
	a policy.Approver
	t *turn
}

var _ policy.Approver = turnApprover{}

func (ta turnApprover) Approve(ctx context.Context, d policy.Decision) (bool, error) {
	return away(ctx, ta.t, func() (bool, error) { return ta.a.Approve(ctx, d) })
}

// turnHuman lets the turn go while a person helps.
type turnHuman struct {
	h websurfer.Human
	t *turn
}

var _ websurfer.Human = turnHuman{}

func (th turnHuman) Help(ctx context.Context, reason string) (string, error) {
	return away(ctx, th.t, func() (string, error) { return th.h.Help(ctx, reason) })
}

// between lets the turn go while a person holds the browser between steps.
func (t *turn) between(f func(context.Context) (string, error)) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		return away(ctx, t, func() (string, error) { return f(ctx) })
	}
}
