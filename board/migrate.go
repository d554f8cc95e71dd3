package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// MigrateOptions says how Migrate treats a target that already holds
// something.
type MigrateOptions struct {
	// Force replaces what the target holds under a name the source also
	// has (a task, a key, a file) when the two differ. Without it Migrate
	// refuses such a target and changes nothing.
	Force bool
	// Progress, when set, is called as each bucket or stream is done.
	Progress func(BucketStats)
}

// BucketStats is what Migrate did with one of the board's buckets or
// streams.
type BucketStats struct {
	// Name is the bucket's (for a key-value bucket or an object store) or
	// the stream's name.
	Name string `json:"name"`
	// Kind is "kv", "objects", "stream" or, for the lease, "setting".
	Kind string `json:"kind"`
	// Total counts the source's keys, objects or messages; Copied those
	// written to the target; Same those the target already held as they
	// are.
	Total  int `json:"total"`
	Copied int `json:"copied"`
	Same   int `json:"same"`
}

// ConflictError is Migrate's refusal of a target that holds something
// else under the source's names.
type ConflictError struct {
	// Conflicts are "bucket/name: why" (for the lease "lease: why"), at
	// most 20 of them.
	Conflicts []string
	// More counts those left out.
	More int
}

func (e *ConflictError) Error() string {
	s := "the target board already holds other data under the same names: " + strings.Join(e.Conflicts, "; ")
	if e.More > 0 {
		s += fmt.Sprintf(" (and %d more)", e.More)
	}
	return s
}

// ErrRunning is Migrate's refusal of a source board with running tasks:
// a claim cannot move from one board to another.
var ErrRunning = errors.New("tasks are running on the source board")

// Migrate copies board from, every bucket and stream of it, onto board
// to: every key of every key-value bucket (the tasks with their results
// and any other the board keeps), every object of every object store
// (journals, images, reports, saved states), every message of any other
// stream, and the board's lease. The work queue is not copied but
// rebuilt: each ready task is queued on the target. Buckets the target
// lacks are made with the source's settings and the target's
// replication.
//
// Migrate can be run again, after an interruption or after the source
// moved on: what the target holds as the source has it is skipped, and a
// task whose record moved on at the source (same task, created at the
// same time, updated later) is brought up to date. Anything else the
// target holds under a source's name (a different task with the same id,
// a task that moved on at the target, a key or file with other contents)
// is a *ConflictError, found before anything is written, unless
// opts.Force, which replaces it with the source's. What the target holds
// under other names is left alone.
//
// The source must have no running task (ErrRunning): stop its workers
// first. Tasks and keys are written after the files they name, so a task
// record on the target never names a file that is not there yet.
func Migrate(ctx context.Context, from, to *Board, opts MigrateOptions) ([]BucketStats, error) {
	plans, err := planMigration(ctx, from, to)
	if err != nil {
		return nil, err
	}
	if !opts.Force {
		var c ConflictError
		for _, p := range plans {
			for _, s := range p.conflicts {
				sep := "/"
				if p.kind == "setting" {
					sep = ": "
				}
				if len(c.Conflicts) < 20 {
					c.Conflicts = append(c.Conflicts, p.name+sep+s)
				} else {
					c.More++
				}
			}
		}
		if len(c.Conflicts) > 0 {
			return nil, &c
		}
	}
	var stats []BucketStats
	for _, p := range plans {
		st, err := p.copy(ctx)
		if err != nil {
			return stats, fmt.Errorf("copying %s: %w", p.name, err)
		}
		stats = append(stats, st)
		if opts.Progress != nil {
			opts.Progress(st)
		}
	}
	// the work queue: every ready task on it once, and pending tasks
	// settled on the target as they would be on the source
	if err := requeueReady(ctx, to); err != nil {
		return stats, err
	}
	if err := to.sweep(ctx); err != nil {
		return stats, fmt.Errorf("settling the target's pending tasks: %w", err)
	}
	return stats, nil
}

// requeueReady puts each ready task of b that is not on b's work queue
// on it. A task is never queued twice: a second entry would be taken, by
// the worker that claims it, for the first one's lost claim. Tasks
// queued by an earlier migration are there; those of one interrupted
// before it queued them are not.
func requeueReady(ctx context.Context, b *Board) error {
	recs, err := b.List(ctx)
	if err != nil {
		return fmt.Errorf("listing the target's tasks: %w", err)
	}
	queued := map[string]bool{}
	err = retry(ctx, func(ctx context.Context) error {
		clear(queued)
		info, err := b.ready.Info(ctx)
		if err != nil {
			return err
		}
		for seq := info.State.FirstSeq; info.State.Msgs > 0 && seq <= info.State.LastSeq; seq++ {
			m, err := b.ready.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // taken and acknowledged
			}
			if err != nil {
				return err
			}
			queued[string(m.Data)] = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the target's work queue: %w", err)
	}
	run := randomToken()[:12]
	for _, r := range recs {
		if r.State != Ready || queued[r.Task.ID] {
			continue
		}
		// not the id's usual message id: the queue's deduplication may
		// remember that from an entry taken since
		msgID := r.Task.ID + ":ready:" + run
		if err := retry(ctx, func(ctx context.Context) error {
			_, err := b.js.Publish(ctx, readySubject, []byte(r.Task.ID), jetstream.WithMsgID(msgID))
			return err
		}); err != nil {
			return fmt.Errorf("queueing %s on the target: %w", r.Task.ID, err)
		}
	}
	return nil
}

// bucketPlan is one bucket or stream to copy: what differs is known
// before anything is written.
type bucketPlan struct {
	name, kind string
	total      int
	same       int
	conflicts  []string
	copy       func(ctx context.Context) (BucketStats, error)
}

// planMigration looks at every stream of the source and what the target
// holds of it. Object stores come first, the task bucket last.
func planMigration(ctx context.Context, from, to *Board) ([]*bucketPlan, error) {
	var names []string
	err := retry(ctx, func(ctx context.Context) error {
		names = names[:0]
		l := from.js.StreamNames(ctx)
		for n := range l.Name() {
			names = append(names, n)
		}
		return l.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("listing the source's streams: %w", err)
	}
	rank := func(n string) int {
		switch {
		case strings.HasPrefix(n, "OBJ_"):
			return 0
		case n == "KV_"+TasksBucket:
			return 3
		case strings.HasPrefix(n, "KV_"):
			return 1
		}
		return 2
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	lease, err := planLease(ctx, from, to)
	if err != nil {
		return nil, err
	}
	plans := []*bucketPlan{lease}
	for _, n := range names {
		if n == ReadyStream {
			continue // rebuilt from the task records
		}
		var p *bucketPlan
		var err error
		switch {
		case strings.HasPrefix(n, "OBJ_"):
			p, err = planObjects(ctx, from, to, strings.TrimPrefix(n, "OBJ_"))
		case n == "KV_"+TasksBucket:
			p, err = planTasks(ctx, from, to)
		case strings.HasPrefix(n, "KV_"):
			p, err = planKV(ctx, from, to, strings.TrimPrefix(n, "KV_"))
		default:
			p, err = planStream(ctx, from, to, n)
		}
		if err != nil {
			return nil, err
		}
		// the target gets the stream when the copy starts, not before:
		// a refused migration leaves it as it was
		copyFn := p.copy
		p.copy = func(ctx context.Context) (BucketStats, error) {
			if err := ensureStream(ctx, from, to, n); err != nil {
				return BucketStats{}, err
			}
			return copyFn(ctx)
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// planLease plans the board's lease (the workers' consumer's AckWait,
// which lives with the work queue rather than in a bucket): a new target,
// one without tasks, takes the source's; another lease on a target with
// tasks is a conflict. It is copied first: a worker on the target claims
// by it.
func planLease(ctx context.Context, from, to *Board) (*bucketPlan, error) {
	lease := func(b *Board) (time.Duration, error) {
		var d time.Duration
		err := retry(ctx, func(ctx context.Context) error {
			c, err := b.js.Consumer(ctx, ReadyStream, WorkersGroup)
			if err != nil {
				return err
			}
			d = c.CachedInfo().Config.AckWait
			return nil
		})
		return d, err
	}
	src, err := lease(from)
	if err != nil {
		return nil, fmt.Errorf("the source's lease: %w", err)
	}
	dst, err := lease(to)
	if err != nil {
		return nil, fmt.Errorf("the target's lease: %w", err)
	}
	p := &bucketPlan{name: "lease", kind: "setting", total: 1}
	if src == dst {
		p.same = 1
		p.copy = func(context.Context) (BucketStats, error) {
			return BucketStats{Name: p.name, Kind: p.kind, Total: 1, Same: 1}, nil
		}
		return p, nil
	}
	tasks, err := kvEntries(ctx, to.js, TasksBucket)
	if err != nil {
		return nil, err
	}
	if len(tasks) > 0 {
		p.conflicts = append(p.conflicts, fmt.Sprintf("%s on the target, %s here", dst, src))
	}
	p.copy = func(ctx context.Context) (BucketStats, error) {
		st := BucketStats{Name: p.name, Kind: p.kind, Total: 1}
		if err := retry(ctx, func(ctx context.Context) error { return to.ensureConsumer(ctx, src) }); err != nil {
			return st, err
		}
		st.Copied = 1
		return st, nil
	}
	return p, nil
}

// ensureStream makes stream name on the target, with the source's
// settings and the target's replication, when the target lacks it.
func ensureStream(ctx context.Context, from, to *Board, name string) error {
	return retry(ctx, func(ctx context.Context) error {
		if _, err := to.js.Stream(ctx, name); err == nil {
			return nil
		} else if !errors.Is(err, jetstream.ErrStreamNotFound) {
			return err
		}
		s, err := from.js.Stream(ctx, name)
		if err != nil {
			return err
		}
		cfg := s.CachedInfo().Config
		r, err := to.replicas(ctx)
		if err != nil {
			return err
		}
		cfg.Replicas = r
		cfg.Placement = nil
		// the server's own metadata is the target server's to set
		for k := range cfg.Metadata {
			if strings.HasPrefix(k, "_nats.") {
				delete(cfg.Metadata, k)
			}
		}
		if _, err := to.js.CreateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("making %s on the target: %w", name, err)
		}
		return nil
	})
}

// kvEntries is every key of a bucket with its value.
func kvEntries(ctx context.Context, js jetstream.JetStream, bucket string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := retry(ctx, func(ctx context.Context) error {
		clear(out)
		kv, err := js.KeyValue(ctx, bucket)
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil // nothing yet
		}
		if err != nil {
			return err
		}
		return eachEntry(ctx, kv, func(e jetstream.KeyValueEntry) { out[e.Key()] = e.Value() })
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", bucket, err)
	}
	return out, nil
}

// planKV plans a key-value bucket: a key the target lacks is copied, a
// key with another value is a conflict.
func planKV(ctx context.Context, from, to *Board, bucket string) (*bucketPlan, error) {
	src, err := kvEntries(ctx, from.js, bucket)
	if err != nil {
		return nil, err
	}
	dst, err := kvEntries(ctx, to.js, bucket)
	if err != nil {
		return nil, err
	}
	p := &bucketPlan{name: bucket, kind: "kv", total: len(src)}
	var write []string
	for _, k := range slices.Sorted(maps.Keys(src)) {
		v, ok := dst[k]
		switch {
		case !ok:
		case bytes.Equal(v, src[k]):
			p.same++
			continue
		default:
			p.conflicts = append(p.conflicts, k+": another value")
		}
		write = append(write, k)
	}
	p.copy = func(ctx context.Context) (BucketStats, error) {
		return putKeys(ctx, to, bucket, src, write, p)
	}
	return p, nil
}

func putKeys(ctx context.Context, to *Board, bucket string, src map[string][]byte, keys []string, p *bucketPlan) (BucketStats, error) {
	st := BucketStats{Name: bucket, Kind: p.kind, Total: p.total, Same: p.same}
	kv, err := to.js.KeyValue(ctx, bucket)
	if err != nil {
		return st, err
	}
	for _, k := range keys {
		if err := retry(ctx, func(ctx context.Context) error {
			_, err := kv.Put(ctx, k, src[k])
			return err
		}); err != nil {
			return st, fmt.Errorf("key %s: %w", k, err)
		}
		st.Copied++
	}
	return st, nil
}

// planTasks plans the task bucket: as planKV, but a record that moved on
// at the source since an earlier migration is brought up to date, and a
// running task on the source stops the migration.
func planTasks(ctx context.Context, from, to *Board) (*bucketPlan, error) {
	src, err := kvEntries(ctx, from.js, TasksBucket)
	if err != nil {
		return nil, err
	}
	dst, err := kvEntries(ctx, to.js, TasksBucket)
	if err != nil {
		return nil, err
	}
	p := &bucketPlan{name: TasksBucket, kind: "kv", total: len(src)}
	var write, running []string
	for _, k := range slices.Sorted(maps.Keys(src)) {
		var s Record
		if err := json.Unmarshal(src[k], &s); err != nil {
			return nil, fmt.Errorf("task %s on the source: unreadable record: %v", k, err)
		}
		if s.State == Running {
			running = append(running, fmt.Sprintf("%s (on %s)", k, s.Worker))
		}
		v, ok := dst[k]
		switch {
		case !ok:
		case bytes.Equal(v, src[k]):
			p.same++
			continue
		default:
			if why := taskConflict(s, v); why != "" {
				p.conflicts = append(p.conflicts, k+": "+why)
			}
		}
		write = append(write, k)
	}
	if len(running) > 0 {
		return nil, fmt.Errorf("%w: %s; stop its workers (or cancel the tasks) and migrate again", ErrRunning, strings.Join(cutList(running, 10), ", "))
	}
	p.copy = func(ctx context.Context) (BucketStats, error) {
		return putKeys(ctx, to, TasksBucket, src, write, p)
	}
	return p, nil
}

// taskConflict says why the target's record dst may not be replaced by
// the source's s ("" when it may: the same task, moved on at the source).
func taskConflict(s Record, dst []byte) string {
	var d Record
	if err := json.Unmarshal(dst, &d); err != nil {
		return "the target's record is unreadable"
	}
	st, _ := json.Marshal(s.Task)
	dt, _ := json.Marshal(d.Task)
	switch {
	case !bytes.Equal(st, dt) || !s.Created.Equal(d.Created):
		return "another task with this id"
	case d.Updated.After(s.Updated):
		return fmt.Sprintf("it moved on at the target (%s there, %s here)", d.State, s.State)
	}
	return ""
}

func cutList(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
}

// planObjects plans an object store: an object the target lacks is
// copied, one with another digest is a conflict.
func planObjects(ctx context.Context, from, to *Board, bucket string) (*bucketPlan, error) {
	list := func(js jetstream.JetStream) (map[string]*jetstream.ObjectInfo, error) {
		out := map[string]*jetstream.ObjectInfo{}
		err := retry(ctx, func(ctx context.Context) error {
			clear(out)
			store, err := js.ObjectStore(ctx, bucket)
			if errors.Is(err, jetstream.ErrBucketNotFound) {
				return nil // nothing yet
			}
			if err != nil {
				return err
			}
			infos, err := store.List(ctx)
			if errors.Is(err, jetstream.ErrNoObjectsFound) {
				return nil
			}
			for _, i := range infos {
				out[i.Name] = i
			}
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", bucket, err)
		}
		return out, nil
	}
	src, err := list(from.fjs)
	if err != nil {
		return nil, err
	}
	dst, err := list(to.fjs)
	if err != nil {
		return nil, err
	}
	p := &bucketPlan{name: bucket, kind: "objects", total: len(src)}
	var write []string
	for _, n := range slices.Sorted(maps.Keys(src)) {
		if src[n].Opts != nil && src[n].Opts.Link != nil {
			p.conflicts = append(p.conflicts, n+": a link, which migrate does not copy")
			continue
		}
		d, ok := dst[n]
		switch {
		case !ok:
		case d.Digest == src[n].Digest && d.Size == src[n].Size:
			p.same++
			continue
		default:
			p.conflicts = append(p.conflicts, n+": another file")
		}
		write = append(write, n)
	}
	p.copy = func(ctx context.Context) (BucketStats, error) {
		st := BucketStats{Name: bucket, Kind: p.kind, Total: p.total, Same: p.same}
		srcStore, err := from.fjs.ObjectStore(ctx, bucket)
		if err != nil {
			return st, err
		}
		dstStore, err := to.fjs.ObjectStore(ctx, bucket)
		if err != nil {
			return st, err
		}
		for _, n := range write {
			if err := copyObject(ctx, srcStore, dstStore, src[n], to.cfg.AckWait); err != nil {
				return st, fmt.Errorf("file %s: %w", n, err)
			}
			st.Copied++
		}
		return st, nil
	}
	return p, nil
}

// copyObject copies one object, trying again (from its start) when a
// write fails or does not read back with the source's digest.
func copyObject(ctx context.Context, src, dst jetstream.ObjectStore, info *jetstream.ObjectInfo, ackWait time.Duration) error {
	var data []byte
	if err := retry(ctx, func(ctx context.Context) error {
		var err error
		data, err = src.GetBytes(ctx, info.Name)
		return err
	}); err != nil {
		return fmt.Errorf("reading it: %w", err)
	}
	meta := info.ObjectMeta
	if info.Opts != nil {
		meta.Opts = &jetstream.ObjectMetaOptions{ChunkSize: info.Opts.ChunkSize}
	}
	var last error
	for try := 1; try <= 5; try++ {
		// per chunk the store waits AckWait (its JetStream's timeout),
		// which it does only when ctx has no deadline (see putOnce)
		pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, cancel)
		t := time.AfterFunc(10*ackWait+time.Duration(len(data)>>17)*ackWait, cancel)
		got, err := dst.Put(pctx, meta, bytes.NewReader(data))
		t.Stop()
		stop()
		cancel()
		if err == nil && got.Digest == info.Digest {
			return nil
		}
		if err == nil {
			err = fmt.Errorf("it was stored with digest %s, not %s", got.Digest, info.Digest)
		}
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(try) * 200 * time.Millisecond):
		}
	}
	return last
}

// planStream plans a stream that is neither a bucket nor the work queue:
// its messages are copied to an empty target stream; a target stream
// with as many messages is taken as copied; one with another count is a
// conflict (Force purges it first).
func planStream(ctx context.Context, from, to *Board, name string) (*bucketPlan, error) {
	var srcInfo, dstInfo *jetstream.StreamInfo
	err := retry(ctx, func(ctx context.Context) error {
		s, err := from.js.Stream(ctx, name)
		if err != nil {
			return err
		}
		if srcInfo, err = s.Info(ctx); err != nil {
			return err
		}
		d, err := to.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			dstInfo = &jetstream.StreamInfo{} // nothing yet
			return nil
		}
		if err != nil {
			return err
		}
		dstInfo, err = d.Info(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("stream %s: %w", name, err)
	}
	p := &bucketPlan{name: name, kind: "stream", total: int(srcInfo.State.Msgs)}
	purge := false
	switch n := dstInfo.State.Msgs; {
	case n == srcInfo.State.Msgs && n > 0:
		p.same = int(n)
		p.copy = func(context.Context) (BucketStats, error) {
			return BucketStats{Name: name, Kind: p.kind, Total: p.total, Same: p.same}, nil
		}
		return p, nil
	case n > 0:
		p.conflicts = append(p.conflicts, fmt.Sprintf("%d messages on the target, %d here", n, srcInfo.State.Msgs))
		purge = true
	}
	p.copy = func(ctx context.Context) (BucketStats, error) {
		st := BucketStats{Name: name, Kind: p.kind, Total: p.total}
		s, err := from.js.Stream(ctx, name)
		if err != nil {
			return st, err
		}
		if purge {
			d, err := to.js.Stream(ctx, name)
			if err != nil {
				return st, err
			}
			if err := d.Purge(ctx); err != nil {
				return st, err
			}
		}
		for seq := srcInfo.State.FirstSeq; seq <= srcInfo.State.LastSeq && srcInfo.State.Msgs > 0; seq++ {
			var m *jetstream.RawStreamMsg
			err := retry(ctx, func(ctx context.Context) error {
				var err error
				m, err = s.GetMsg(ctx, seq)
				if errors.Is(err, jetstream.ErrMsgNotFound) {
					return permanent(err)
				}
				return err
			})
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue // deleted
			}
			if err != nil {
				return st, fmt.Errorf("message %d: %w", seq, err)
			}
			msg := &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}
			if err := retry(ctx, func(ctx context.Context) error {
				_, err := to.js.PublishMsg(ctx, msg)
				return err
			}); err != nil {
				return st, fmt.Errorf("message %d: %w", seq, err)
			}
			st.Copied++
		}
		return st, nil
	}
	return p, nil
}
