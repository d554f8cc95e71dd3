package websurfer

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// BenchmarkIdleAnimated measures what a page that animates (a spinner)
// costs the browser while surf leaves it alone for 10 s, as between two
// steps while the model thinks: CPU seconds a second of the browsers this
// process started. Run it in each frame mode (SURF_FRAME_MODE=clock or
// on-demand).
//
//	go test ./websurfer -run '^$' -bench IdleAnimated -benchtime 1x
func BenchmarkIdleAnimated(b *testing.B) {
	sites := browsertest.ServeSites(b)
	sites.Handle("/spin", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Spin</title><style>@keyframes s{to{transform:rotate(360deg)}}
div{width:80px;height:80px;background:#c33;animation:s 1s linear infinite}</style><div></div><p>A spinner.</p>`)
	})
	ctx := context.Background()
	sess, err := browsertest.Sandbox(b).NewSession(ctx, sandbox.SessionConfig{Policy: loopbackPolicy(b, sites)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sess.Close() })
	s, err := New(ctx, Config{Session: sess})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	var sum float64
	for i := 0; i < b.N; i++ {
		if _, err := s.VisitURL(ctx, sites.A+"/spin"); err != nil {
			b.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		c0, ok := browserCPU()
		t0 := time.Now()
		time.Sleep(10 * time.Second)
		c1, ok1 := browserCPU()
		if !ok || !ok1 {
			b.Skip("no /proc to read the browser's CPU time from")
		}
		sum += (c1 - c0).Seconds() / time.Since(t0).Seconds()
	}
	b.ReportMetric(sum/float64(b.N), "cpu-s/s")
	b.ReportMetric(0, "ns/op")
}
