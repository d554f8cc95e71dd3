package websurfer

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/surfkit/surf/internal/proc"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/sandbox"
)

// BenchmarkCaptureFloor measures what an observation's screenshot costs
// at the least, whatever surf does around it: how long Chromium takes to
// hand back a screenshot (Page.captureScreenshot) of a page that has been
// still for a while, right after an in-page change, and right after
// another screenshot; how long a running screencast takes to deliver the
// frame of a change; and the same change's screenshot in a browser
// launched with --disable-frame-rate-limit, with what that browser then
// spends on a page that animates. DESIGN.md ("The cost of a frame") reads
// the figures.
//
//	go test ./websurfer -run '^$' -bench CaptureFloor -benchtime 20x
func BenchmarkCaptureFloor(b *testing.B) {
	sites := browsertest.ServeSites(b)
	sites.Handle("/still", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Still</title><h1>Still</h1><p id=p>Chosen: Red</p>`)
	})
	sites.Handle("/spin", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>Spin</title><style>@keyframes s{to{transform:rotate(360deg)}}
div{width:80px;height:80px;background:#c33;animation:s 1s linear infinite}</style><div></div><p>A spinner.</p>`)
	})
	ctx := context.Background()
	open := func(sb *sandbox.Sandbox) *Surfer {
		sess, err := sb.NewSession(ctx, sandbox.SessionConfig{Policy: loopbackPolicy(b, sites)})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sess.Close() })
		s, err := New(ctx, Config{Session: sess})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		if _, err := s.VisitURL(ctx, sites.A+"/still"); err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := open(browsertest.Sandbox(b))
	unlimitedSB, err := sandbox.New(ctx, sandbox.Config{Env: browsertest.Env(), Policy: browsertest.Policy(), Resolver: browsertest.Resolver(),
		Args: []string{"--disable-frame-rate-limit"}, FrameMode: sandbox.FrameClock}) // a clock without its limit, whatever SURF_FRAME_MODE says
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unlimitedSB.Close() })
	u := open(unlimitedSB)

	shot := func(s *Surfer) {
		t := s.tabs[s.active]
		if _, err := captureJPEG(ctx, t.sess, s.cfg.JPEGQuality); err != nil {
			b.Fatal(err)
		}
	}
	change := func(s *Surfer, i int) {
		t := s.tabs[s.active]
		var x any
		if err := t.evaluate(ctx, t.sess, fmt.Sprintf(`document.getElementById('p').textContent = 'Chosen: %d'`, i), &x); err != nil {
			b.Fatal(err)
		}
	}
	since := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	// timed returns how long f took, after pause with no frame asked for.
	timed := func(pause time.Duration, f func()) float64 {
		time.Sleep(pause)
		t0 := time.Now()
		f()
		return since(t0)
	}
	const still = 200 * time.Millisecond
	var idle, afterChange, again, cast, unlimited []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		idle = append(idle, timed(still, func() { shot(s) }))
		afterChange = append(afterChange, timed(still, func() { change(s, i); shot(s) }))
		again = append(again, timed(0, func() { shot(s) }))
		unlimited = append(unlimited, timed(still, func() { change(u, i); shot(u) }))
	}
	// The screencast: the time from a change to its frame.
	cctx, cancel := context.WithCancel(ctx)
	frames := make(chan time.Time, 64)
	done := make(chan error, 1)
	go func() {
		done <- s.Screencast(cctx, ScreencastOptions{Quality: s.cfg.JPEGQuality}, func(f Frame) { frames <- f.At })
	}()
	<-frames // the screencast runs
	for i := 0; i < b.N; i++ {
		time.Sleep(still)
		for len(frames) > 0 {
			<-frames
		}
		t0 := time.Now()
		change(s, b.N+i)
		select {
		case at := <-frames:
			cast = append(cast, float64(at.Sub(t0).Microseconds())/1000)
		case <-time.After(5 * time.Second):
			b.Fatal("no screencast frame for a change")
		}
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()

	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	b.ReportMetric(med(idle), "ms-still")
	b.ReportMetric(med(afterChange), "ms-after-change")
	b.ReportMetric(med(again), "ms-again")
	b.ReportMetric(med(cast), "ms-screencast-after-change")
	b.ReportMetric(med(unlimited), "ms-unlimited-after-change")

	// What a page that animates costs each browser: CPU seconds per second
	// of all the browsers this process started, while only that one
	// animates.
	if busy, ok := animatedCPU(b, s, sites.A); ok {
		b.ReportMetric(busy, "cpu-animated")
	}
	if busy, ok := animatedCPU(b, u, sites.A); ok {
		b.ReportMetric(busy, "cpu-animated-unlimited")
	}
	b.ReportMetric(0, "ns/op")
}

// animatedCPU shows the spinner in s for a second and returns the CPU
// seconds per second the browsers of this process spent meanwhile (false
// where /proc cannot tell).
func animatedCPU(b *testing.B, s *Surfer, origin string) (float64, bool) {
	ctx := context.Background()
	if _, err := s.VisitURL(ctx, origin+"/spin"); err != nil {
		b.Fatal(err)
	}
	defer func() {
		if _, err := s.VisitURL(ctx, origin+"/still"); err != nil {
			b.Fatal(err)
		}
	}()
	time.Sleep(300 * time.Millisecond)
	c0, ok := browserCPU()
	t0 := time.Now()
	time.Sleep(time.Second)
	c1, ok1 := browserCPU()
	if !ok || !ok1 {
		return 0, false
	}
	return (c1 - c0).Seconds() / time.Since(t0).Seconds(), true
}

// browserCPU sums the CPU time (user and system) of the browsers this
// process started: the processes carrying the owner marker and all their
// descendants (Chromium starts its zygote with an environment of its own).
func browserCPU() (time.Duration, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, false
	}
	type stat struct {
		ppid int
		cpu  time.Duration
	}
	all := map[int]stat{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		// Fields after the command's closing parenthesis: state, ppid,
		// ..., utime and stime the 12th and 13th, in clock ticks.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return 0, false
		}
		ppid, err0 := strconv.Atoi(f[1])
		ut, err1 := strconv.ParseInt(f[11], 10, 64)
		st, err2 := strconv.ParseInt(f[12], 10, 64)
		if err0 != nil || err1 != nil || err2 != nil {
			return 0, false
		}
		all[pid] = stat{ppid, time.Duration(ut+st) * time.Second / 100} // USER_HZ
	}
	ours := map[int]bool{}
	for _, pid := range proc.WithEnv(sandbox.OwnerEnv + "=" + strconv.Itoa(os.Getpid())) {
		ours[pid] = true
	}
	var sum time.Duration
	for pid, st := range all {
		for p, depth := pid, 0; p > 1 && depth < 64; p, depth = all[p].ppid, depth+1 {
			if ours[p] {
				sum += st.cpu
				break
			}
		}
	}
	return sum, len(ours) > 0
}
