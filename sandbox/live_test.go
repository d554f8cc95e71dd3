package sandbox_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
)

// TestOnDenialSubscribers: Session.OnDenial's subscribers each see every
// denial from when they subscribe until they stop, redacted (typed text
// included), and TakeDenials still returns them all.
func TestOnDenialSubscribers(t *testing.T) {
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "127.0.0.1"}}})})
	sess.Redactions().Add("plumviolet42")
	var mu sync.Mutex
	var a, b []sandbox.Denial
	stopA := sess.OnDenial(func(d sandbox.Denial) { mu.Lock(); a = append(a, d); mu.Unlock() })
	stopB := sess.OnDenial(func(d sandbox.Denial) { mu.Lock(); b = append(b, d); mu.Unlock() })
	deny := func(u string) {
		sess.RecordDenial(sandbox.Denial{Kind: policy.Navigation, URL: u, Host: "x.example", Navigation: true,
			Decision: policy.Decision{Verdict: policy.Deny, Rule: "allow", Reason: "denied: " + u}})
	}
	deny("https://x.example/?q=plumviolet42")
	stopA()
	stopA() // a second stop is harmless
	deny("https://x.example/two")
	stopB()
	deny("https://x.example/three")
	mu.Lock()
	defer mu.Unlock()
	if len(a) != 1 || len(b) != 2 {
		t.Fatalf("subscribers saw %d and %d denials; want 1 and 2", len(a), len(b))
	}
	if strings.Contains(a[0].URL+a[0].Decision.Reason, "plumviolet42") || !strings.Contains(a[0].URL, policy.TypedPlaceholder) {
		t.Errorf("the denial's URL is not redacted: %q", a[0].URL)
	}
	if got := sess.TakeDenials(); len(got) != 3 {
		t.Errorf("TakeDenials returned %d denials; want all 3", len(got))
	}
	if stop := sess.OnDenial(nil); stop == nil {
		t.Error("OnDenial(nil) returned a nil stop")
	}
}

// TestOnDenialSeesBlockedNavigation: a navigation the request gate blocks
// (whoever started it: a person in a live view) reaches the subscriber
// with its host, and the page shows the block page, not the host's.
func TestOnDenialSeesBlockedNavigation(t *testing.T) {
	reached := make(chan struct{}, 1)
	denied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case reached <- struct{}{}:
		default:
		}
		w.Write([]byte("<title>secret content</title>"))
	}))
	defer denied.Close()
	sess := browsertest.Session(t, sandbox.SessionConfig{Policy: policy.MustNew(policy.Config{Allow: []policy.HostRule{{Host: "example.invalid"}}})})
	got := make(chan sandbox.Denial, 4)
	stop := sess.OnDenial(func(d sandbox.Denial) {
		select {
		case got <- d:
		default:
		}
	})
	defer stop()
	p, err := sess.NewPage(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Goto(denied.URL) // refused: the gate answers with its block page
	select {
	case d := <-got:
		if d.Host != "127.0.0.1" || !d.Navigation {
			t.Errorf("denial: host %q, navigation %v", d.Host, d.Navigation)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no denial reached the subscriber")
	}
	if title, _ := p.Title(); title != "Blocked by surf" {
		t.Errorf("the page's title is %q, not the block page's", title)
	}
	select {
	case <-reached:
		t.Error("the denied host was reached")
	default:
	}
}
