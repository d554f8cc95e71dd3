package websurfer

import (
	"context"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// BenchmarkScreencastStepCost measures what watching a session costs the
// agent: the same steps (visit_url to alternate pages of the library
// site, each returning its observation) unwatched and with a screencast
// running, interleaved in rounds so both see the same machine. It reports
// the ratio watched/unwatched of the median step times (the bound
// is 1.10) and the frames the screencast delivered per step.
//
//	go test ./websurfer -run '^$' -bench ScreencastStepCost -benchtime 20x
func BenchmarkScreencastStepCost(b *testing.B) {
	sites := browsertest.ServeSites(b)
	site := libraryOn(sites)
	sess := browsertest.Session(b, sandbox.SessionConfig{Policy: demoPolicy(b, site.Host)})
	s, err := New(context.Background(), Config{Session: sess})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	pages := []string{site.URL + "/", site.URL + "/branches/", site.URL + "/timetable/"}
	ctx := context.Background()
	step := func(i int) time.Duration {
		t0 := time.Now()
		if _, err := s.VisitURL(ctx, pages[i%len(pages)]); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for i := range pages { // warm the cache and the fonts
		step(i)
	}
	var plain, watched []time.Duration
	frames := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		plain = append(plain, step(i))
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		got := make(chan struct{}, 1)
		go func() {
			done <- s.Screencast(cctx, ScreencastOptions{}, func(Frame) {
				frames++
				select {
				case got <- struct{}{}:
				default:
				}
			})
		}()
		<-got // the screencast runs
		watched = append(watched, step(i+1))
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	mp, mw := median(plain), median(watched)
	b.ReportMetric(float64(mp.Microseconds())/1000, "ms/step-unwatched")
	b.ReportMetric(float64(mw.Microseconds())/1000, "ms/step-watched")
	b.ReportMetric(float64(mw)/float64(mp), "ratio")
	b.ReportMetric(float64(frames)/float64(b.N), "frames/step")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}
