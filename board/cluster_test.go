package board

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// freePorts returns n loopback ports that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// startCluster starts three embedded NATS servers with JetStream, routed
// to each other on loopback.
func startCluster(t *testing.T) []*server.Server {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 3)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", p))
	}
	var srvs []*server.Server
	for i, p := range ports {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   filepath.Join(dir, fmt.Sprintf("n%d", i+1)),
			NoSigs:     true,
			NoLog:      true,
			Cluster:    server.ClusterOpts{Name: "surf-test", Host: "127.0.0.1", Port: p},
			Routes:     server.RoutesFromStr(strings.Join(routes, ",")),
		}
		s, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		srvs = append(srvs, s)
		t.Cleanup(s.Shutdown)
	}
	for _, s := range srvs {
		if !s.ReadyForConnections(20 * time.Second) {
			t.Fatalf("%s did not start", s.Name())
		}
	}
	return srvs
}

// Three NATS nodes keep three copies of the board; workers attached to
// different nodes run a batch; the node that leads the task bucket (with
// a worker attached to it) is stopped mid-batch; every task still ends
// done, with its result, and every result can be read from the nodes
// that are left.
func TestClusterNodeLossLosesNothing(t *testing.T) {
	srvs := startCluster(t)
	ctx := testCtx(t)
	open := func(s *server.Server) *Board {
		b, err := Open(ctx, Config{URL: s.ClientURL(), Replicas: 3, Lease: 2 * time.Second})
		if err != nil {
			t.Fatalf("opening the board on %s: %v", s.Name(), err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	boards := []*Board{open(srvs[0]), open(srvs[1]), open(srvs[2])}
	// a later client that does not name a replication keeps the board's
	lister, err := Open(ctx, Config{URL: srvs[0].ClientURL()})
	if err != nil {
		t.Fatal(err)
	}
	lister.Close()
	si, err := boards[0].js.Stream(ctx, "KV_"+TasksBucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := si.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.Replicas != 3 || info.Cluster == nil || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("the task bucket is not replicated 3 times: %+v", info.Cluster)
	}
	leader := -1
	for i, s := range srvs {
		if s.Name() == info.Cluster.Leader {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatalf("no leader among the nodes: %q", info.Cluster.Leader)
	}
	adder := boards[(leader+1)%3]

	const n = 12
	var tasks []Task
	var ids []string
	for i := range n {
		id := fmt.Sprintf("c%02d", i)
		task := Task{ID: id, Instruction: "task " + id}
		if i >= 4 {
			task.After = []string{fmt.Sprintf("c%02d", i-4)}
		}
		tasks = append(tasks, task)
		ids = append(ids, id)
	}
	if _, err := adder.Add(ctx, tasks...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ran := map[string]int{}
	run := func(ctx context.Context, c *Claim) (*Result, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(400 * time.Millisecond):
		}
		mu.Lock()
		ran[c.Task.ID]++
		mu.Unlock()
		return &Result{Answer: "answer of " + c.Task.ID, EndReason: "answered"}, nil
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for i, b := range boards {
		if b == adder {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Work(wctx, WorkConfig{Name: srvs[i].Name(), Workers: 2, Run: run})
		}()
	}
	// stop the leader once a few tasks have ended
	for ev, err := range adder.Watch(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Record.State == Done && ev.Record.Task.ID >= "c02" {
			break
		}
	}
	t.Logf("stopping %s, the task bucket's leader", srvs[leader].Name())
	srvs[leader].Shutdown()
	srvs[leader].WaitForShutdown()

	got, err := adder.Wait(ctx, ids...)
	stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got {
		if r.State != Done || r.Result == nil || r.Result.Answer != "answer of "+r.Task.ID {
			t.Errorf("%s: %s %q %+v", r.Task.ID, r.State, r.Reason, r.Result)
		}
	}
	for i, b := range boards {
		if i == leader {
			continue
		}
		all, err := b.List(ctx)
		if err != nil {
			t.Fatalf("listing on %s: %v", srvs[i].Name(), err)
		}
		done := 0
		for _, r := range all {
			if r.State == Done && r.Result != nil {
				done++
			}
		}
		if done != n {
			t.Errorf("%s sees %d of %d results", srvs[i].Name(), done, n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if ran[id] == 0 {
			t.Errorf("%s never ran", id)
		}
	}
}

// streamLeader is the name of the node that leads stream name.
func streamLeader(ctx context.Context, t *testing.T, b *Board, name string) string {
	t.Helper()
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || info.Cluster.Leader == "" {
		t.Fatalf("%s has no leader: %+v", name, info.Cluster)
	}
	return info.Cluster.Leader
}

// pausingReader reads data and, the first time it reaches at, says so on
// paused and waits for resume.
type pausingReader struct {
	*bytes.Reader
	at     int64
	once   sync.Once
	paused chan<- struct{}
	resume <-chan struct{}
}

func (p *pausingReader) Read(b []byte) (int, error) {
	if pos, _ := p.Seek(0, io.SeekCurrent); pos >= p.at {
		p.once.Do(func() { close(p.paused); <-p.resume })
	}
	return p.Reader.Read(b)
}

// Issue 28, point 5: the file store's leader is stopped while a finished
// run stores its files. The write waits out the election in short tries
// (each chunk waits AckWait for its acknowledgement), the run ends done on
// its first attempt and is never run again, and its files read back whole
// from the nodes that are left.
func TestClusterFileLeaderLostWhileStoring(t *testing.T) {
	srvs := startCluster(t)
	ctx := testCtx(t)
	first, err := Open(ctx, Config{URL: srvs[0].ClientURL(), Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	leaderName := streamLeader(ctx, t, first, "OBJ_"+FilesBucket)
	first.Close()
	leader := -1
	for i, s := range srvs {
		if s.Name() == leaderName {
			leader = i
		}
	}
	if leader < 0 {
		t.Fatalf("the file store's leader %q is none of the nodes", leaderName)
	}
	open := func(i int) *Board {
		b, err := Open(ctx, Config{URL: srvs[i].ClientURL(), Lease: 30 * time.Second, AckWait: time.Second,
			Logger: slog.New(slog.NewTextHandler(tlogw{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		if err != nil {
			t.Fatalf("opening the board on %s: %v", srvs[i].Name(), err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	worker, watcher := open((leader+1)%3), open((leader+2)%3)

	big := make([]byte, 1<<20) // eight chunks of the object store's 128 KiB
	rand.Read(big)
	paused, resume := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	ran := 0
	run := func(ctx context.Context, c *Claim) (*Result, error) {
		mu.Lock()
		ran++
		mu.Unlock()
		res := &Result{Answer: "stored", EndReason: "answered"}
		var err error
		if res.Journal, err = c.PutFile(ctx, "journal.jsonl", strings.NewReader("{}\n")); err != nil {
			return nil, Retry(err) // as the task runner did: the run again
		}
		// the leader is stopped after three of the image's chunks
		img, err := c.PutFile(ctx, "big.bin", &pausingReader{Reader: bytes.NewReader(big), at: 3 << 17, paused: paused, resume: resume})
		if err != nil {
			return nil, Retry(err)
		}
		res.Images = []string{img}
		if res.Report, err = c.PutFile(ctx, "report.html", strings.NewReader("<p>report</p>")); err != nil {
			return nil, Retry(err)
		}
		return res, nil
	}
	if _, err := watcher.Add(ctx, Task{ID: "store", Instruction: "store files"}); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		worker.Work(wctx, WorkConfig{Name: "w", Workers: 2, Run: run})
	}()
	defer func() { stop(); <-done }()

	select {
	case <-paused:
	case <-ctx.Done():
		t.Fatal("the run never stored its image")
	}
	t.Logf("stopping %s, the file store's leader, in the middle of a file", leaderName)
	srvs[leader].Shutdown()
	srvs[leader].WaitForShutdown()
	stopped := time.Now()
	close(resume)

	got, err := watcher.Wait(ctx, "store")
	if err != nil {
		c2, cc := context.WithTimeout(context.Background(), 10*time.Second)
		r1, e1 := watcher.Get(c2, "store")
		r2, e2 := worker.Get(c2, "store")
		cc()
		t.Fatalf("waiting for the task: %v (the watcher's node has it %s after %d attempts (%v), the worker's %s after %d (%v))", err, r1.State, r1.Attempts, e1, r2.State, r2.Attempts, e2)
	}
	t.Logf("the run's end was recorded %s after the leader was stopped", time.Since(stopped).Round(100*time.Millisecond))
	r := got[0]
	if r.State != Done || r.Attempts != 1 || r.Result == nil || r.Result.Answer != "stored" {
		t.Fatalf("the task ended %s after %d attempts (%q, notes %q, result %+v); want done on the first", r.State, r.Attempts, r.Reason, r.Notes, r.Result)
	}
	mu.Lock()
	if ran != 1 {
		t.Errorf("the run ran %d times, want once", ran)
	}
	mu.Unlock()
	if want := "store/attempt-1/big.bin"; len(r.Result.Images) != 1 || r.Result.Images[0] != want {
		t.Fatalf("images %q, want [%s]", r.Result.Images, want)
	}
	rc, err := watcher.File(ctx, r.Result.Images[0])
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		t.Fatalf("reading the image back: %v", err)
	}
	if !bytes.Equal(back, big) {
		t.Errorf("the image read back is %d bytes, not the %d stored", len(back), len(big))
	}
}

// tlogw writes a board's log to the test's.
type tlogw struct{ t *testing.T }

func (w tlogw) Write(b []byte) (int, error) { w.t.Logf("%s", b); return len(b), nil }
