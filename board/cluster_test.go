package board

import (
	"context"
	"fmt"
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
