package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/surfkit/surf/board"
)

// runSurf runs one surf command line in this process with env as its
// environment.
func runSurf(ctx context.Context, env map[string]string, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	cli := &CLI{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
	code := cli.Run(ctx, args)
	return code, stdout.String(), stderr.String()
}

// natsCluster starts three NATS nodes with JetStream in this process,
// routed to each other on loopback, and returns their client URLs.
func natsCluster(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var ports []int
	var ls []net.Listener
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	var routes []string
	for _, l := range ls {
		routes = append(routes, "nats-route://"+l.Addr().String())
		l.Close()
	}
	var srvs []*server.Server
	var urls []string
	for i, p := range ports {
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("n%d", i+1), Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: filepath.Join(dir, fmt.Sprintf("n%d", i+1)), NoSigs: true, NoLog: true,
			Cluster: server.ClusterOpts{Name: "surf-cli", Host: "127.0.0.1", Port: p},
			Routes:  server.RoutesFromStr(strings.Join(routes, ",")),
		})
		if err != nil {
			t.Fatal(err)
		}
		go s.Start()
		t.Cleanup(s.Shutdown)
		srvs = append(srvs, s)
	}
	for _, s := range srvs {
		if !s.ReadyForConnections(30 * time.Second) {
			t.Fatalf("%s did not start", s.Name())
		}
		urls = append(urls, s.ClientURL())
	}
	return strings.Join(urls, ",")
}

// Issue 31, acceptance 7: 'surf board migrate' moves an embedded board
// with done tasks (their journals and images), a failed, a ready and a
// pending task to a three-node cluster; 'surf board show' and 'surf board
// list' there give what they gave on the embedded board, the report of a
// done task is made from the cluster's copy of its journal, and the
// migration run again copies nothing. A board with another task under the
// same id is refused, and --force replaces it.
func TestBoardMigrateCLI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	src, err := board.Open(ctx, board.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Add(ctx,
		board.Task{ID: "hours", Instruction: "find the opening hours", Labels: map[string]string{"batch": "m"}},
		board.Task{ID: "plan", Instruction: "plan a visit: {{hours.answer}}", After: []string{"hours"}},
		board.Task{ID: "broken", Instruction: "fails"},
	); err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Work(wctx, board.WorkConfig{Name: "w", MaxAttempts: 1, Run: func(ctx context.Context, c *board.Claim) (*board.Result, error) {
			if c.Task.ID == "broken" {
				return &board.Result{EndReason: "error"}, errors.New("it broke")
			}
			return storeRun(ctx, t, c, "answer of "+c.Task.ID)
		}})
	}()
	src.Wait(ctx, "hours", "plan", "broken")
	stop()
	<-done
	if _, err := src.Add(ctx, board.Task{ID: "later", Instruction: "not run yet"}, board.Task{ID: "last", Instruction: "after later", After: []string{"later"}}); err != nil {
		t.Fatal(err)
	}
	src.Close()

	urls := natsCluster(t)
	env := map[string]string{}
	code, out, errOut := runSurf(ctx, env, "board", "migrate", "--from", dir, "--to", urls, "--replicas", "3", "--json")
	if code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, errOut)
	}
	var stats []board.BucketStats
	if err := json.Unmarshal([]byte(out), &stats); err != nil {
		t.Fatalf("migrate --json: %v\n%s", err, out)
	}
	copied := map[string]int{}
	for _, s := range stats {
		copied[s.Name] = s.Copied
	}
	if copied[board.TasksBucket] != 5 || copied[board.FilesBucket] < 4 {
		t.Errorf("migrate copied %v, want 5 tasks and the files of two runs", copied)
	}

	onSource := func(args ...string) string {
		t.Helper()
		code, out, errOut := runSurf(ctx, env, append(args, "--data", dir)...)
		if code != 0 {
			t.Fatalf("%q on the embedded board: exit %d\n%s", args, code, errOut)
		}
		return out
	}
	onCluster := func(args ...string) string {
		t.Helper()
		code, out, errOut := runSurf(ctx, env, append(args, "--nats", urls)...)
		if code != 0 {
			t.Fatalf("%q on the cluster: exit %d\n%s", args, code, errOut)
		}
		return out
	}
	for _, id := range []string{"hours", "plan", "broken", "later", "last"} {
		if s, c := onSource("board", "show", id, "--json"), onCluster("board", "show", id, "--json"); s != c {
			t.Errorf("board show %s differs:\nembedded:\n%s\ncluster:\n%s", id, s, c)
		}
	}
	if s, c := onSource("board", "list", "--json"), onCluster("board", "list", "--json"); s != c {
		t.Errorf("board list differs:\nembedded:\n%s\ncluster:\n%s", s, c)
	}
	if s, c := onSource("board", "export", "--format", "csv"), onCluster("board", "export", "--format", "csv"); s != c {
		t.Errorf("board export differs:\nembedded:\n%s\ncluster:\n%s", s, c)
	}
	html := filepath.Join(t.TempDir(), "hours.html")
	onCluster("board", "report", "hours", "-o", html)
	if data, err := os.ReadFile(html); err != nil || !bytes.Contains(data, []byte("answer of hours")) || !bytes.Contains(data, []byte("data:image/png")) {
		t.Errorf("the report made on the cluster lacks the answer or the image (%d bytes, %v)", len(data), err)
	}

	// again: nothing to copy
	code, out, errOut = runSurf(ctx, env, "board", "migrate", "--from", dir, "--to", urls)
	if code != 0 {
		t.Fatalf("migrate again: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, board.TasksBucket+": 0 of 5 copied, 5 already there") {
		t.Errorf("migrate again says:\n%s%s", errOut, out)
	}

	// another board with a task "hours" of its own
	other := t.TempDir()
	if code, _, errOut := runSurf(ctx, env, "board", "add", "something else", "--id", "hours", "--data", other); code != 0 {
		t.Fatal(errOut)
	}
	code, _, errOut = runSurf(ctx, env, "board", "migrate", "--from", other, "--to", urls)
	if code != 1 || !strings.Contains(errOut, board.TasksBucket+"/hours: another task with this id") || !strings.Contains(errOut, "--force") {
		t.Fatalf("migrating another task hours: exit %d\n%s", code, errOut)
	}
	var rec board.Record
	if err := json.Unmarshal([]byte(onCluster("board", "show", "hours", "--json")), &rec); err != nil || rec.Task.Instruction != "find the opening hours" {
		t.Fatalf("a refused migration changed hours on the cluster: %+v %v", rec.Task, err)
	}
	if code, _, errOut := runSurf(ctx, env, "board", "migrate", "--from", other, "--to", urls, "--force"); code != 0 {
		t.Fatalf("migrate --force: exit %d\n%s", code, errOut)
	}
	if err := json.Unmarshal([]byte(onCluster("board", "show", "hours", "--json")), &rec); err != nil || rec.Task.Instruction != "something else" {
		t.Fatalf("after --force hours on the cluster is %+v %v", rec.Task, err)
	}
}

// The TLS and nkey files come from flags or the environment, are only
// for a NATS server named with --nats, and a missing one is named by its
// path in the error.
func TestBoardTLSFlags(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	code, _, errOut := runSurf(ctx, nil, "board", "list", "--tls-ca", "ca.pem", "--data", t.TempDir())
	if code != 2 || !strings.Contains(errOut, "are for a NATS server named with --nats") {
		t.Errorf("--tls-ca without --nats: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runSurf(ctx, nil, "board", "list", "--nats", "nats://127.0.0.1:1", "--tls-cert", "c.pem")
	if code != 2 || !strings.Contains(errOut, "--tls-cert and --tls-key go together") {
		t.Errorf("--tls-cert alone: exit %d\n%s", code, errOut)
	}
	missing := filepath.Join(t.TempDir(), "user.nk")
	code, _, errOut = runSurf(ctx, map[string]string{"SURF_NATS_URL": "nats://127.0.0.1:1", "SURF_NATS_NKEY": missing}, "board", "list")
	if code != 1 || !strings.Contains(errOut, "the nkey seed: "+missing) {
		t.Errorf("$SURF_NATS_NKEY naming a missing file: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runSurf(ctx, nil, "board", "list", "--nats", "nats://me:s3cret-pw@127.0.0.1:1")
	if code != 1 || !strings.Contains(errOut, "warning: the user or password in --nats shows in ps") || !strings.Contains(errOut, "nats://***@127.0.0.1:1") || strings.Contains(errOut, "s3cret-pw") {
		t.Errorf("a password in --nats: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runSurf(ctx, map[string]string{"SURF_NATS_URL": "nats://me:s3cret-pw@127.0.0.1:1"}, "board", "list")
	if code != 1 || strings.Contains(errOut, "warning") || strings.Contains(errOut, "s3cret-pw") {
		t.Errorf("a password in $SURF_NATS_URL: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runSurf(ctx, nil, "serve", "--nkey", missing)
	if code != 2 || !strings.Contains(errOut, "name the task board of --board") {
		t.Errorf("serve --nkey without --board: exit %d\n%s", code, errOut)
	}
}
