package sandbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
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

// BenchmarkPageLoad measures loading a page with 50 subresources (images,
// stylesheets, scripts, one redirect each ten) from loopback, until the
// load event, with the enforcement layers on and off. Reported as
// load-ms-p50 and load-ms-p90.
func BenchmarkPageLoad(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case r.URL.Path == "/":
			var sb strings.Builder
			sb.WriteString("<!doctype html><title>bench</title>")
			for i := range 50 {
				switch {
				case i%10 == 9:
					fmt.Fprintf(&sb, `<img src="/redirect/%d?%s">`, i, r.URL.RawQuery)
				case i%3 == 0:
					fmt.Fprintf(&sb, `<link rel="stylesheet" href="/s/%d.css?%s">`, i, r.URL.RawQuery)
				case i%3 == 1:
					fmt.Fprintf(&sb, `<script src="/s/%d.js?%s"></script>`, i, r.URL.RawQuery)
				default:
					fmt.Fprintf(&sb, `<img src="/s/%d.png?%s">`, i, r.URL.RawQuery)
				}
			}
			fmt.Fprint(w, sb.String())
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, "/s/"+strings.TrimPrefix(r.URL.Path, "/redirect/")+".png?"+r.URL.RawQuery, http.StatusFound)
		case strings.HasSuffix(r.URL.Path, ".css"):
			w.Header().Set("Content-Type", "text/css")
			fmt.Fprint(w, "p { margin: 0 }")
		case strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
			fmt.Fprint(w, "void 0;")
		default:
			w.Header().Set("Content-Type", "image/png")
			w.Write(onePixelPNG)
		}
	}))
	defer srv.Close()
	run := func(b *testing.B, sb *sandbox.Sandbox) {
		sess, err := sb.NewSession(context.Background(), sandbox.SessionConfig{})
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		p, err := sess.NewPage(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Goto(srv.URL + "/?warmup"); err != nil {
			b.Fatal(err)
		}
		var d []time.Duration
		i := 0
		for b.Loop() {
			i++
			start := time.Now()
			if _, err := p.Goto(fmt.Sprintf("%s/?n=%d", srv.URL, i)); err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(start))
		}
		if den := sess.TakeDenials(); len(den) != 0 {
			b.Fatalf("denials on the benchmark page: %v", den)
		}
		b.ReportMetric(medianMS(d), "load-ms-p50")
		b.ReportMetric(percentileMS(d, 0.9), "load-ms-p90")
	}
	private := func(b *testing.B, cfg sandbox.Config) *sandbox.Sandbox {
		cfg.Env = browsertest.Env()
		cfg.Policy = browsertest.Policy()
		sb, err := sandbox.New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sb.Close() })
		return sb
	}
	b.Run("layers-on", func(b *testing.B) { run(b, browsertest.Sandbox(b)) })
	b.Run("gate-only", func(b *testing.B) {
		run(b, private(b, sandbox.Config{DisableEgressProxy: true, DisableOSSandbox: true, DisableChromiumSandbox: true}))
	})
	b.Run("proxy-only", func(b *testing.B) {
		run(b, private(b, sandbox.Config{DisableRequestGate: true, DisableOSSandbox: true, DisableChromiumSandbox: true}))
	})
	b.Run("layers-off", func(b *testing.B) {
		run(b, private(b, sandbox.Config{DisableRequestGate: true, DisableEgressProxy: true, DisableOSSandbox: true, DisableChromiumSandbox: true}))
	})
}

func percentileMS(d []time.Duration, q float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(float64(len(s)-1)*q)].Microseconds()) / 1000
}
