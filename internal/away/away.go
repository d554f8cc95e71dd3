// Package away wraps what a surfer waits on (the model, a person who
// approves an action or helps, a person holding the browser between
// steps) so that the browser turn its context carries (admit.WithTurn)
// serves others while it waits, and is taken back before the surfer
// drives the browser again. surf serve's calls and a board worker's tasks
// hold their turns this way.
package away

import (
	"context"

	"github.com/sashabaranov/go-openai"
	"github.com/surfkit/surf/internal/admit"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/websurfer"
)

// Model returns m, letting the turn go while the model thinks.
func Model(m websurfer.Model) websurfer.Model {
	if m == nil {
		return nil
	}
	return model{m}
}

type model struct{ m websurfer.Model }

var _ websurfer.Model = model{}

func (w model) CreateChatCompletion(ctx context.Context, req openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	return admit.Away(ctx, func() (openai.ChatCompletionResponse, error) { return w.m.CreateChatCompletion(ctx, req) })
}

// Approver returns a, letting the turn go while a person decides. An
// approver that answers at once (one that denies everything) is better
// left unwrapped: it would give up its place in line for nothing.
func Approver(a policy.Approver) policy.Approver {
	if a == nil {
		return nil
	}
	return approver{a}
}

type approver struct{ a policy.Approver }

var _ policy.Approver = approver{}

func (w approver) Approve(ctx context.Context, d policy.Decision) (bool, error) {
	return admit.Away(ctx, func() (bool, error) { return w.a.Approve(ctx, d) })
}

// Human returns h, letting the turn go while a person helps.
func Human(h websurfer.Human) websurfer.Human {
	if h == nil {
		return nil
	}
	return human{h}
}

type human struct{ h websurfer.Human }

var _ websurfer.Human = human{}

func (w human) Help(ctx context.Context, reason string) (string, error) {
	return admit.Away(ctx, func() (string, error) { return w.h.Help(ctx, reason) })
}

// Between returns f (websurfer.RunOptions.Between), letting the turn go
// while a person holds the browser between steps.
func Between(f func(context.Context) (string, error)) func(context.Context) (string, error) {
	if f == nil {
		return nil
	}
	return func(ctx context.Context) (string, error) {
		return admit.Away(ctx, func() (string, error) { return f(ctx) })
	}
}
