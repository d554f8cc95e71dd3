package sandbox

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/surfkit/surf/policy"
)

// TestGateFailsClosed: when the request gate cannot be installed, there is
// no session.
func TestGateFailsClosed(t *testing.T) {
	sb, err := New(context.Background(), Config{Env: EnvFrom(os.Getenv), DisableEgressProxy: true, DisableOSSandbox: true, DisableChromiumSandbox: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	bctx, err := sb.browser.NewContext()
	if err != nil {
		t.Fatal(err)
	}
	bctx.Close()
	pol := policy.MustNew(policy.Config{})
	if _, err := installGate(bctx, pol, slog.New(slog.DiscardHandler), &denialLog{pol: pol}, false, false); err == nil {
		t.Error("the gate installed on a closed context")
	}
}

func TestBlockPageEscapes(t *testing.T) {
	page := blockPage(Denial{URL: `http://x/<script>alert(1)</script>`, Decision: policy.Decision{Reason: `denied: "<b>"`}})
	if strings.Contains(page, "<script>alert") || strings.Contains(page, "<b>") {
		t.Errorf("block page does not escape: %s", page)
	}
	re := reissuePage(`http://x/</script><script>alert(1)</script>`)
	if strings.Contains(re, "</script><script>alert") {
		t.Errorf("re-issue page does not escape: %s", re)
	}
}
