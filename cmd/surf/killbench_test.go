package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/demosite"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
)

// BenchmarkRunKilled runs `surf run` on the demo site (loopback) with a
// scripted fake model b.N times, and SIGKILLs the browser (by the pid its
// launcher records) at a random moment of each run: while the browser
// starts or its session opens, while the model is asked, during an
// action or an observation. A run recovered if surf relaunched the
// browser, answered, and exited 0. It reports "N/M recovered", and how
// long surf took to exit after printing the run's end. Run it with
//
//	go test ./cmd/surf -run '^$' -bench '^BenchmarkRunKilled$' -benchtime 20x
func BenchmarkRunKilled(b *testing.B) {
	site, err := demosite.Start()
	if err != nil {
		b.Fatal(err)
	}
	defer site.Close()
	pages := []string{"/branches", "/branch/harbour", "/search?q=harbour", "/branch/harbour", "/branches"}
	var turns []fakeopenai.Turn
	for _, p := range pages {
		turns = append(turns, fakeopenai.Turn{Reply: fakeopenai.Reply{Delay: 300 * time.Millisecond,
			ToolCalls: []fakeopenai.ToolCall{{Name: "visit_url", Arguments: fmt.Sprintf(`{"url": %q}`, site.URL+p)}}}})
	}
	turns = append(turns, fakeopenai.Turn{Reply: fakeopenai.Reply{ToolCalls: []fakeopenai.ToolCall{{Name: "stop_action", Arguments: `{"answer": "done"}`}}}})

	// One run without a kill sets the window the kills fall in.
	base := killedSurfRun(b, site, turns, -1)
	if !base.ok {
		b.Fatalf("the run without a kill failed:\n%s", base.out)
	}
	b.Logf("a run without a kill: first step at %v, %v to its end, exit %v after it", base.firstStep.Round(time.Millisecond), base.ended.Round(time.Millisecond), base.exit.Round(time.Millisecond))

	recovered, landed, during := 0, 0, 0
	var exits []time.Duration
	for i := 1; b.Loop(); i++ {
		// A kill drawn after the run's end (runs vary) is drawn again,
		// earlier, so that each iteration kills a run in progress.
		var r killedRunResult
		var at time.Duration
		// Every other kill is drawn from the steps only, after the
		// browser started (which takes much of a run on a busy machine).
		from := time.Duration(0)
		if i%2 == 0 {
			from = base.firstStep
		}
		for try, window := 0, (base.ended-from)*4/5; try < 3 && !r.killed; try, window = try+1, window/2 {
			at = from + time.Duration(rand.Int64N(int64(window)))
			r = killedSurfRun(b, site, turns, at)
			if !r.killed {
				fmt.Printf("run %d: the kill at %v came after the run's end; drawn again\n", i, at.Round(time.Millisecond))
			}
		}
		if !r.killed {
			continue
		}
		landed++
		exits = append(exits, r.exit)
		status := "recovered"
		phase := "before the first step"
		if strings.Contains(r.out, "recovered: ") {
			phase = "during the steps (relaunched)"
			during++
		}
		if r.ok {
			recovered++
		} else {
			status = "NOT recovered"
			fmt.Printf("run %d output:\n%s", i, r.out)
		}
		fmt.Printf("run %d: killed at %v %s: %s; exited %v after the run's end\n", i, at.Round(time.Millisecond), phase, status, r.exit.Round(time.Millisecond))
	}
	b.StopTimer()
	slices.Sort(exits)
	if len(exits) > 0 {
		fmt.Printf("%d/%d recovered; exit after the run's end: median %v, max %v\n", recovered, landed, exits[len(exits)/2].Round(time.Millisecond), exits[len(exits)-1].Round(time.Millisecond))
		b.ReportMetric(float64(exits[len(exits)-1].Milliseconds()), "max-exit-ms")
	}
	fmt.Printf("%d/%d recovered (%d killed during the steps, %d before the first step)\n", recovered, landed, during, landed-during)
	b.ReportMetric(float64(recovered), "recovered")
	b.ReportMetric(float64(landed), "killed")
}

type killedRunResult struct {
	ok, killed bool
	// From the start to the first step's line and to the "ended:" line;
	// from that to the exit.
	firstStep, ended, exit time.Duration
	out                    string
}

// killedSurfRun runs `surf run` and, unless at < 0, kills its browser at
// that moment (or as soon as the browser exists, if later).
func killedSurfRun(b *testing.B, site *demosite.Server, turns []fakeopenai.Turn, at time.Duration) killedRunResult {
	b.Helper()
	fake, err := fakeopenai.Listen("127.0.0.1:0", fakeopenai.NewScript(turns...))
	if err != nil {
		b.Fatal(err)
	}
	defer fake.Close()
	dir := b.TempDir()
	cmd := exec.Command("surf", "run", "Look around the library site, then stop.", "--start-url", site.URL+"/",
		"--allow", site.Host, "--journal", filepath.Join(dir, "journal.jsonl"), "--max-time", "5m")
	cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+fake.URL(), "OPENAI_API_KEY=fake-key", "SURF_MODEL=test-model")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var text strings.Builder
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	endedc := make(chan time.Time, 1)
	var firstStep time.Time
	readc := make(chan struct{})
	go func() {
		defer close(readc)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			text.WriteString(sc.Text() + "\n")
			if firstStep.IsZero() && strings.HasPrefix(sc.Text(), "step ") {
				firstStep = time.Now()
			}
			if strings.HasPrefix(sc.Text(), "ended: ") {
				endedc <- time.Now()
			}
		}
	}()
	var r killedRunResult
	var endedAt time.Time
	if at >= 0 {
		timer := time.NewTimer(at)
	wait:
		for {
			select {
			case endedAt = <-endedc:
				break wait
			case <-timer.C:
				if pid := browserPID(cmd.Process.Pid); pid > 0 {
					_ = syscall.Kill(-pid, syscall.SIGKILL)
					_ = syscall.Kill(pid, syscall.SIGKILL)
					r.killed = true
					break wait
				}
				timer.Reset(20 * time.Millisecond) // no browser yet
			}
		}
	}
	done := make(chan error, 1)
	go func() { <-readc; done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(6 * time.Minute):
		cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump on its stderr
		werr = <-done
		text.WriteString("surf did not exit; killed with SIGQUIT\n")
	}
	exited := time.Now()
	if endedAt.IsZero() {
		select {
		case endedAt = <-endedc:
		default:
			endedAt = exited
		}
	}
	r.ended, r.exit = endedAt.Sub(start), exited.Sub(endedAt)
	if !firstStep.IsZero() {
		r.firstStep = firstStep.Sub(start)
	}
	r.out = text.String() + stderr.String()
	if werr != nil {
		r.out += "exit: " + werr.Error() + "\n"
	}
	r.ok = werr == nil && strings.Contains(text.String(), "answer: done")
	for _, m := range leftoverDirs(cmd.Process.Pid) {
		os.RemoveAll(m)
	}
	return r
}

// browserPID is the pid of the newest browser a surf process launched,
// from its launcher's pid file; 0 if there is none yet.
func browserPID(surf int) int {
	files, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", surf), "browser.pid"))
	pid := 0
	var newest time.Time
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil || fi.ModTime().Before(newest) {
			continue
		}
		b, err := os.ReadFile(f)
		var rec struct {
			PID int `json:"pid"`
		}
		if err == nil && json.Unmarshal(b, &rec) == nil && rec.PID > 0 {
			pid, newest = rec.PID, fi.ModTime()
		}
	}
	return pid
}

func leftoverDirs(pid int) []string {
	m, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("surf-%d-*", pid)))
	return m
}
