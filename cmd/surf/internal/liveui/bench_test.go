package liveui_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/liveui"
	"github.com/surfkit/surf/internal/llm"
	"github.com/surfkit/surf/internal/testkit/browsertest"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/websurfer"
)

// benchSteps is the steps of one measured run.
const benchSteps = 8

// BenchmarkLiveViewStepTime measures what a viewer costs: the mean step
// time of an agent run on the demo site with nobody watching, and with a
// live view open (an MJPEG client reading every frame), alternated in one
// benchmark run; the ratio is watched/unwatched.
//
//	go test ./cmd/surf/internal/liveui -run '^$' -bench LiveViewStepTime -benchtime 3x
func BenchmarkLiveViewStepTime(b *testing.B) {
	site, err := demosite.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer site.Close()
	hub := live.New(live.Config{})
	defer hub.Close()
	ui, err := liveui.New(liveui.Config{Hub: hub})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(ui)
	defer srv.Close()
	defer ui.Close()

	pages := []string{"/", "/search?q=harbour", "/branch/harbour", "/"}
	run := func(watch bool) (time.Duration, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		sess, err := browsertest.Sandbox(b).NewSession(ctx, sandbox.SessionConfig{})
		if err != nil {
			b.Fatal(err)
		}
		defer sess.Close()
		var turns []fakeopenai.Turn
		for i := range benchSteps - 1 {
			turns = append(turns, fakeopenai.CallTool("visit_url", `{"url": "`+site.URL+pages[i%len(pages)]+`"}`))
		}
		turns = append(turns, fakeopenai.CallTool("stop_action", `{"answer": "done"}`))
		fake := fakeopenai.New(fakeopenai.NewScript(turns...))
		defer fake.Close()
		model, err := llm.New(ctx, llm.Config{BaseURL: fake.URL(), APIKey: "sk-test-not-real", Model: "test-model"})
		if err != nil {
			b.Fatal(err)
		}
		surf, err := websurfer.New(ctx, websurfer.Config{Session: sess, Model: model, ModelName: "test-model"})
		if err != nil {
			b.Fatal(err)
		}
		defer surf.Close()
		ls, err := hub.Open(live.SessionOptions{Owner: "bench", Surfer: surf})
		if err != nil {
			b.Fatal(err)
		}
		defer ls.Close()
		frames := 0
		if watch {
			req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/s/"+ls.ID()+"/live.mjpg", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 64<<10)
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						return
					}
				}
			}()
			defer func() {
				resp.Body.Close()
				<-done
			}()
		}
		var total time.Duration
		n := 0
		for st, err := range surf.Run(ctx, "tour the library site", websurfer.RunOptions{StartURL: site.URL + "/", Between: ls.Between}) {
			if err != nil {
				b.Fatal(err)
			}
			if st != nil && !st.Done {
				total += st.Duration
				n++
			}
		}
		if watch {
			started, running := ls.Casts()
			if started != 1 || !running {
				b.Fatalf("watched run: screencasts started %d, running %v", started, running)
			}
			_, frames, _ = ls.NextFrame(ctx, 0)
		} else if started, _ := ls.Casts(); started != 0 {
			b.Fatalf("unwatched run: %d screencasts started", started)
		}
		return total / time.Duration(max(n, 1)), frames
	}
	var unwatched, watched time.Duration
	frames := 0
	b.ResetTimer()
	for range b.N {
		u, _ := run(false)
		w, f := run(true)
		unwatched += u
		watched += w
		frames += f
	}
	b.ReportMetric(float64(unwatched.Milliseconds())/float64(b.N), "unwatched-ms/step")
	b.ReportMetric(float64(watched.Milliseconds())/float64(b.N), "watched-ms/step")
	b.ReportMetric(float64(watched)/float64(unwatched), "watched/unwatched")
	b.ReportMetric(float64(frames)/float64(b.N), "frames/run")
}
