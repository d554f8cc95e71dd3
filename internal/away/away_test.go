package away

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

// TestLetGoWhileWaiting: with one turn, a holder waiting on its model, on
// a person's approval, on a person's help or on a takeover lets another
// drive the browser, and gets its turn back (after the other lets go)
// before it goes on.
func TestLetGoWhileWaiting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q := admit.New(1)
	a, b := q.Turn(), q.Turn()
	if _, err := a.Take(ctx); err != nil {
		t.Fatal(err)
	}
	actx := admit.WithTurn(ctx, a)

	m := blockingModel{in: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		resp, err := Model(m).CreateChatCompletion(actx, openai.ChatCompletionRequest{})
		if err == nil && resp.ID != "answer" {
			t.Errorf("the model's answer was lost: %+v", resp)
		}
		done <- err
	}()
	<-m.in
	if _, err := b.Take(ctx); err != nil {
		t.Fatalf("no turn for another while the model thinks: %v", err)
	}
	close(m.release)
	waitUntil(t, "the holder to wait for its turn back", func() bool { return q.Waiting() == 1 })
	select {
	case err := <-done:
		t.Fatalf("the model call returned (%v) while another held the only turn", err)
	default:
	}
	b.Drop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !a.Held() || q.Active() != 1 {
		t.Fatalf("after the model call: held %v, %d turns out; want the holder to hold the only one", a.Held(), q.Active())
	}

	// The same while a person decides, helps or holds the browser.
	waits := map[string]func(context.Context, <-chan string) (string, error){
		"approve": func(ctx context.Context, answer <-chan string) (string, error) {
			ok, err := Approver(policy.ApproverFunc(func(context.Context, policy.Decision) (bool, error) {
				return <-answer == "yes", nil
			})).Approve(ctx, policy.Decision{})
			if ok {
				return "yes", err
			}
			return "no", err
		},
		"help": func(ctx context.Context, answer <-chan string) (string, error) {
			return Human(humanFunc(func(context.Context, string) (string, error) { return <-answer, nil })).Help(ctx, "a code")
		},
		"between": func(ctx context.Context, answer <-chan string) (string, error) {
			return Between(func(context.Context) (string, error) { return <-answer, nil })(ctx)
		},
	}
	for name, wait := range waits {
		answer := make(chan string)
		got := make(chan string, 1)
		go func() {
			v, err := wait(actx, answer)
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			got <- v
		}()
		if _, err := b.Take(ctx); err != nil {
			t.Fatalf("%s: no turn for another while a person is asked: %v", name, err)
		}
		b.Drop()
		answer <- "yes"
		if v := <-got; v != "yes" {
			t.Fatalf("%s: the answer was lost: %q", name, v)
		}
		if !a.Held() {
			t.Fatalf("%s: the holder did not take its turn back", name)
		}
	}
	a.Drop()
	if n := q.Active(); n != 0 {
		t.Fatalf("%d turns out after everyone let go, want 0", n)
	}
	if Model(nil) != nil || Approver(nil) != nil || Human(nil) != nil || Between(nil) != nil {
		t.Error("a nil wait was wrapped")
	}
}

type humanFunc func(context.Context, string) (string, error)

func (f humanFunc) Help(ctx context.Context, reason string) (string, error) { return f(ctx, reason) }

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
