package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// BenchmarkSessionStart measures, per iteration:
//   - cold: launching a browser to the first page loaded (New, NewSession,
//     NewPage, Goto) plus Close, reported as cold-ms-p50 without the close;
//   - session: a new session in a running browser to the first page loaded,
//     reported as session-ms-p50.
func BenchmarkSessionStart(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>bench</title><h1>ready</h1>`)
	}))
	defer srv.Close()
	firstPage := func(sb *sandbox.Sandbox) *sandbox.Session {
		sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := sess.Context().NewPage()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Goto(srv.URL); err != nil {
			b.Fatal(err)
		}
		return sess
	}

	b.Run("cold", func(b *testing.B) {
		var d []time.Duration
		for b.Loop() {
			start := time.Now()
			sb, err := sandbox.New(context.Background(), sandbox.Config{Env: browsertest.Env()})
			if err != nil {
				b.Fatal(err)
			}
			firstPage(sb)
			d = append(d, time.Since(start))
			if err := sb.Close(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(medianMS(d), "cold-ms-p50")
	})
	b.Run("session", func(b *testing.B) {
		sb := browsertest.Sandbox(b)
		var d []time.Duration
		for b.Loop() {
			start := time.Now()
			sess := firstPage(sb)
			d = append(d, time.Since(start))
			b.StopTimer()
			sess.Close()
			b.StartTimer()
		}
		b.ReportMetric(medianMS(d), "session-ms-p50")
	})
}

func medianMS(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Microseconds()) / 1000
}
