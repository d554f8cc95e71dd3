package board

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// sourceBoard is an embedded board with two tasks done by a worker that
// stored files for them, a failed one, one cancelled, one ready and one
// pending after it; besides, a key-value bucket and an object store of
// the kind other parts of the board keep (saved states, settings), made
// here directly so that Migrate is seen to copy what it does not know.
func sourceBoard(t *testing.T, ctx context.Context) (*Board, map[string][]byte) {
	t.Helper()
	src := openTest(t, "")
	if _, err := src.Add(ctx,
		Task{ID: "a", Instruction: "first", Labels: map[string]string{"batch": "m"}},
		Task{ID: "b", Instruction: "then {{a.answer}}", After: []string{"a"}},
		Task{ID: "f", Instruction: "fails"},
	); err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 300<<10) // three chunks
	rand.Read(big)
	files := map[string][]byte{}
	var mu sync.Mutex
	run := func(ctx context.Context, c *Claim) (*Result, error) {
		if c.Task.ID == "f" {
			return &Result{EndReason: "error"}, errors.New("it broke")
		}
		res := &Result{Answer: "answer of " + c.Task.ID, EndReason: "answered", Steps: 2, Tokens: 7}
		name, err := c.PutFile(ctx, "journal.jsonl", strings.NewReader(`{"task":"`+c.Task.ID+`"}`+"\n"))
		if err != nil {
			return nil, err
		}
		res.Journal = name
		img, err := c.PutFile(ctx, "big.bin", bytes.NewReader(big))
		if err != nil {
			return nil, err
		}
		res.Images = []string{img}
		mu.Lock()
		files[name] = []byte(`{"task":"` + c.Task.ID + `"}` + "\n")
		files[img] = big
		mu.Unlock()
		return res, nil
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		src.Work(wctx, WorkConfig{Name: "w", Workers: 2, Run: run, MaxAttempts: 1})
	}()
	if _, err := src.Wait(ctx, "a", "b", "f"); err != nil && !strings.Contains(err.Error(), "f") {
		t.Fatal(err)
	}
	stop()
	<-done
	if _, err := src.Add(ctx,
		Task{ID: "c", Instruction: "ready, not run yet"},
		Task{ID: "d", Instruction: "after c", After: []string{"c"}},
		Task{ID: "x", Instruction: "cancelled"},
	); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Cancel(ctx, "x", "not needed"); err != nil {
		t.Fatal(err)
	}
	kv, err := src.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "surf_extra", History: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "lease", []byte("90s")); err != nil {
		t.Fatal(err)
	}
	obj, err := src.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: "surf_extra_objects"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := obj.PutBytes(ctx, "shop.age", []byte("age-encryption.org/v1 ...")); err != nil {
		t.Fatal(err)
	}
	extra, err := src.js.CreateStream(ctx, jetstream.StreamConfig{Name: "SURF_EXTRA", Subjects: []string{"surf.extra.>"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		m := nats.NewMsg(fmt.Sprintf("surf.extra.%d", i))
		m.Data = []byte(fmt.Sprintf("event %d", i))
		m.Header.Set("Surf-Kind", "test")
		if _, err := src.js.PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := extra.DeleteMsg(ctx, 2); err != nil {
		t.Fatal(err)
	}
	return src, files
}

// streamMsgs is what stream name of b holds: "subject header data" per
// message.
func streamMsgs(t *testing.T, ctx context.Context, b *Board, name string) []string {
	t.Helper()
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Subject+" "+m.Header.Get("Surf-Kind")+" "+string(m.Data))
	}
	return out
}

// sameRecords fails unless got has the records of want, as they are.
func sameRecords(t *testing.T, want, got []Record) {
	t.Helper()
	enc := func(rs []Record) string {
		var b strings.Builder
		for _, r := range rs {
			j, _ := json.Marshal(r)
			b.Write(j)
			b.WriteByte('\n')
		}
		return b.String()
	}
	if w, g := enc(want), enc(got); w != g {
		t.Fatalf("the records differ:\nsource:\n%s\ntarget:\n%s", w, g)
	}
}

func consumerLease(t *testing.T, ctx context.Context, b *Board) time.Duration {
	t.Helper()
	c, err := b.js.Consumer(ctx, ReadyStream, WorkersGroup)
	if err != nil {
		t.Fatal(err)
	}
	return c.CachedInfo().Config.AckWait
}

func readAll(t *testing.T, ctx context.Context, b *Board, name string) []byte {
	t.Helper()
	rc, err := b.File(ctx, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return data
}

// Issue 31, acceptance 7: an embedded board with done tasks, files and
// other buckets moves to a three-node cluster; the cluster then has the
// same records, files and keys, keeps them three times, runs what was
// left to run, and a second migration finds everything there.
func TestMigrateEmbeddedToCluster(t *testing.T) {
	ctx := testCtx(t)
	src, files := sourceBoard(t, ctx)
	want, err := src.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	srvs := startCluster(t)
	dst, err := Open(ctx, Config{URL: srvs[0].ClientURL() + "," + srvs[1].ClientURL(), Replicas: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })

	var progress []string
	stats, err := Migrate(ctx, src, dst, MigrateOptions{Progress: func(s BucketStats) {
		progress = append(progress, fmt.Sprintf("%s %d/%d", s.Name, s.Copied, s.Total))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migrated: %q", progress)
	byName := map[string]BucketStats{}
	for _, s := range stats {
		byName[s.Name] = s
	}
	if s := byName[TasksBucket]; s.Copied != 6 || s.Total != 6 {
		t.Errorf("tasks: %+v, want 6 copied", s)
	}
	if s := byName[FilesBucket]; s.Copied != len(files) {
		t.Errorf("files: %+v, want %d copied", s, len(files))
	}
	if s := byName["surf_extra"]; s.Copied != 1 {
		t.Errorf("the extra bucket: %+v", s)
	}
	if s := byName["surf_extra_objects"]; s.Copied != 1 {
		t.Errorf("the extra object store: %+v", s)
	}
	if s := byName["SURF_EXTRA"]; s.Copied != 3 || s.Total != 3 {
		t.Errorf("the extra stream: %+v, want its 3 messages copied", s)
	}

	got, err := dst.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, want, got)
	for name, data := range files {
		if back := readAll(t, ctx, dst, name); !bytes.Equal(back, data) {
			t.Errorf("%s: %d bytes on the cluster, %d on the source", name, len(back), len(data))
		}
	}
	kv, err := dst.js.KeyValue(ctx, "surf_extra")
	if err != nil {
		t.Fatal(err)
	}
	if e, err := kv.Get(ctx, "lease"); err != nil || string(e.Value()) != "90s" {
		t.Errorf("the extra bucket's key on the cluster: %v", err)
	}
	obj, err := dst.js.ObjectStore(ctx, "surf_extra_objects")
	if err != nil {
		t.Fatal(err)
	}
	if data, err := obj.GetBytes(ctx, "shop.age"); err != nil || string(data) != "age-encryption.org/v1 ..." {
		t.Errorf("the extra object on the cluster: %q %v", data, err)
	}
	for _, name := range []string{"KV_surf_extra", "OBJ_surf_extra_objects", "KV_" + TasksBucket, "OBJ_" + FilesBucket} {
		s, err := dst.js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := s.CachedInfo().Config.Replicas; r != 3 {
			t.Errorf("%s has %d replicas on the cluster, want 3", name, r)
		}
	}

	if d := consumerLease(t, ctx, dst); d != 2*time.Second {
		t.Errorf("the cluster's lease is %s, want the source's 2s", d)
	}
	if w, g := strings.Join(streamMsgs(t, ctx, src, "SURF_EXTRA"), "\n"), strings.Join(streamMsgs(t, ctx, dst, "SURF_EXTRA"), "\n"); w != g || len(w) == 0 {
		t.Errorf("the extra stream on the cluster:\n%s\nwant:\n%s", g, w)
	}

	// again: everything is there already
	again, err := Migrate(ctx, src, dst, MigrateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range again {
		if s.Copied != 0 || s.Same != s.Total {
			t.Errorf("a second migration copied %+v", s)
		}
	}

	// a migration interrupted before it queued the ready task queues it
	// when run again, once; one that was not leaves the queue as it is
	queue := func() uint64 {
		t.Helper()
		info, err := dst.ready.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	if n := queue(); n != 1 {
		t.Fatalf("the cluster's queue holds %d tasks, want c", n)
	}
	if err := dst.ready.Purge(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, src, dst, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := queue(); n != 1 {
		t.Fatalf("after a migration that had not queued c, the queue holds %d tasks, want c", n)
	}
	if _, err := Migrate(ctx, src, dst, MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := queue(); n != 1 {
		t.Fatalf("after one more migration the queue holds %d entries, want c once", n)
	}

	// the task left ready, and the one pending after it, run on the cluster
	ran := map[string]bool{}
	var mu sync.Mutex
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		dst.Work(wctx, WorkConfig{Name: "cluster", Run: func(ctx context.Context, c *Claim) (*Result, error) {
			mu.Lock()
			ran[c.Task.ID] = true
			mu.Unlock()
			return &Result{Answer: "ran " + c.Task.ID, EndReason: "answered"}, nil
		}})
	}()
	end, err := dst.Wait(ctx, "c", "d")
	stop()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range end {
		if r.State != Done {
			t.Errorf("%s ended %s on the cluster", r.Task.ID, r.State)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 2 {
		t.Errorf("the cluster ran %v, want c and d only", ran)
	}
}

// A target with a different task under a source's id is refused with the
// task named, and nothing is written to it; with Force it gets the
// source's. A task running on the source stops the migration.
func TestMigrateConflictsAndRunning(t *testing.T) {
	ctx := testCtx(t)
	src, files := sourceBoard(t, ctx)
	dst := openTest(t, "")
	if _, err := dst.Add(ctx, Task{ID: "a", Instruction: "another task"}, Task{ID: "mine", Instruction: "only here"}); err != nil {
		t.Fatal(err)
	}
	if err := dst.ensureConsumer(ctx, 5*time.Second); err != nil { // a lease of its own
		t.Fatal(err)
	}
	if _, err := dst.js.CreateStream(ctx, jetstream.StreamConfig{Name: "SURF_EXTRA", Subjects: []string{"surf.extra.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := dst.js.Publish(ctx, "surf.extra.mine", []byte("mine")); err != nil {
		t.Fatal(err)
	}
	_, err := Migrate(ctx, src, dst, MigrateOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 3 || ce.Conflicts[0] != "lease: 5s on the target, 2s here" ||
		ce.Conflicts[1] != "SURF_EXTRA/1 messages on the target, 3 here" || !strings.Contains(ce.Conflicts[2], TasksBucket+"/a: another task") {
		t.Fatalf("migrating onto another task a, another lease and another stream: %v, want a conflict on each", err)
	}
	if got := streamMsgs(t, ctx, dst, "SURF_EXTRA"); len(got) != 1 {
		t.Errorf("a refused migration changed the target's stream: %q", got)
	}
	recs, err := dst.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Errorf("a refused migration left %d tasks on the target, want its 2", len(recs))
	}
	if infos, err := dst.files.List(ctx); !errors.Is(err, jetstream.ErrNoObjectsFound) {
		t.Errorf("a refused migration wrote %d files: %v", len(infos), err)
	}
	if _, err := dst.js.KeyValue(ctx, "surf_extra"); !errors.Is(err, jetstream.ErrBucketNotFound) {
		t.Errorf("a refused migration made the source's other bucket on the target: %v", err)
	}

	if _, err := Migrate(ctx, src, dst, MigrateOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	a, err := dst.Get(ctx, "a")
	if err != nil || a.Task.Instruction != "first" || a.State != Done {
		t.Errorf("after --force the target's a is %+v (%v), want the source's", a, err)
	}
	if d := consumerLease(t, ctx, dst); d != 2*time.Second {
		t.Errorf("after --force the target's lease is %s, want the source's 2s", d)
	}
	if w, g := strings.Join(streamMsgs(t, ctx, src, "SURF_EXTRA"), "\n"), strings.Join(streamMsgs(t, ctx, dst, "SURF_EXTRA"), "\n"); w != g {
		t.Errorf("after --force the target's stream is:\n%s\nwant:\n%s", g, w)
	}
	if _, err := dst.Get(ctx, "mine"); err != nil {
		t.Errorf("the target's own task is gone: %v", err)
	}
	for name := range files {
		readAll(t, ctx, dst, name)
	}

	// a task running on the source
	if _, err := src.update(ctx, "c", func(r *Record) error { r.State, r.Worker = Running, "w9"; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := Migrate(ctx, src, openTest(t, ""), MigrateOptions{}); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "c (on w9)") {
		t.Fatalf("migrating a board with a running task: %v, want ErrRunning naming it", err)
	}
}

// TestHasData checks that HasData tells a board's data directory (after a
// board was opened there) from an empty one and a missing one.
func TestHasData(t *testing.T) {
	empty, dir := t.TempDir(), t.TempDir()
	if HasData(empty) || HasData(empty+"/missing") {
		t.Error("HasData of a directory without a board is true")
	}
	b := openTest(t, dir)
	if _, err := b.Add(testCtx(t), Task{ID: "a", Instruction: "x"}); err != nil {
		t.Fatal(err)
	}
	if !HasData(dir) {
		t.Error("HasData of a board's directory is false")
	}
}
