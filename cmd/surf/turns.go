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

// away runs f without the turn and takes it back after. f's error wins.
func (t *turn) away(ctx context.Context, f func() error) error {
	t.drop()
	err := f()
	if terr := t.take(ctx); err == nil {
		err = terr
	}
	return err
}

// turnModel lets the turn go while the model thinks.
type turnModel struct {
	m websurfer.Model
	t *turn
}

var _ websurfer.Model = turnModel{}

func (tm turnModel) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (resp openai.ChatCompletionResponse, err error) {
	err = tm.t.away(ctx, func() error {
		var merr error
		resp, merr = tm.m.CreateChatCompletion(ctx, req)
		return merr
	})
	return resp, err
}

// turnApprover lets the turn go while a person decides.
type turnApprover struct {
	a policy.Approver
	t *turn
}

var _ policy.Approver = turnApprover{}

func (ta turnApprover) Approve(ctx context.Context, d policy.Decision) (ok bool, err error) {
	err = ta.t.away(ctx, func() error {
		var aerr error
		ok, aerr = ta.a.Approve(ctx, d)
		return aerr
	})
	return ok, err
}

// turnHuman lets the turn go while a person helps.
type turnHuman struct {
	h websurfer.Human
	t *turn
}

var _ websurfer.Human = turnHuman{}

func (th turnHuman) Help(ctx context.Context, reason string) (note string, err error) {
	err = th.t.away(ctx, func() error {
		var herr error
		note, herr = th.h.Help(ctx, reason)
		return herr
	})
	return note, err
}

// between lets the turn go while a person holds the browser between steps.
func (t *turn) between(f func(context.Context) (string, error)) func(context.Context) (string, error) {
	return func(ctx context.Context) (note string, err error) {
		err = t.away(ctx, func() error {
			var berr error
			note, berr = f(ctx)
			return berr
		})
		return note, err
	}
}
