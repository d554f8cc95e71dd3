// Package board is surf's task board: many web tasks, run by many
// surfers, with dependencies between them, kept durably on NATS JetStream.
//
// A Board holds task records in a JetStream key-value bucket (updated by
// compare-and-set on their revision), hands ready tasks to workers through
// a work-queue stream (claim once, heartbeat while running, redelivered
// after the lease when a worker dies) and keeps what runs produce
// (journals, images, reports, downloads) and the files tasks are given
// (Task.Attach) in an object store. By default it starts an
// embedded NATS server over a data directory, shared by every process on
// the machine that opens the same directory, so one machine needs nothing
// installed; Config.URL points it at a real NATS cluster instead. Add puts
// tasks on the board (refusing unknown dependencies and cycles), Work runs
// them, Wait and Watch follow them. docs/DESIGN.md ("board") describes the
// orderings that make a crash at any point harmless.
package board

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/surfkit/surf/policy"
	"go.opentelemetry.io/otel/trace"
)

// Names of what the board keeps in JetStream.
const (
	TasksBucket   = "surf_tasks"
	FilesBucket   = "surf_files"
	ReadyStream   = "SURF_READY"
	readySubject  = "surf.ready"
	WorkersGroup  = "surf_workers"
	defaultLease  = time.Minute
	defaultTries  = 3
	defaultAck    = 5 * time.Second
	maxTaskIDLen  = 64
	maxInstrBytes = 16 << 10
)

// State is where a task is in its life.
type State string

// The states of a task: pending (waiting for its dependencies), ready (on
// the queue), running (claimed by a worker), and the terminal done, failed
// and cancelled.
const (
	Pending   State = "pending"
	Ready     State = "ready"
	Running   State = "running"
	Done      State = "done"
	Failed    State = "failed"
	Cancelled State = "cancelled"
)

// Terminal reports whether a task in state s will not change again.
func (s State) Terminal() bool { return s == Done || s == Failed || s == Cancelled }

// Task is a web task for a surfer.
type Task struct {
	// ID names the task; Add makes one when it is empty. Letters, digits,
	// '-' and '_', at most 64.
	ID string `json:"id,omitempty"`
	// Instruction is what the surfer is asked to do.
	Instruction string `json:"instruction"`
	// StartURL is opened before the first step, when set.
	StartURL string `json:"start_url,omitempty"`
	// Policy narrows the worker's policy for this task; it never widens
	// it.
	Policy *Policy `json:"policy,omitempty"`
	// After lists the tasks that must be done before this one starts.
	After []string `json:"after,omitempty"`
	// RunAfterFailure lets the task run once its dependencies have ended,
	// even when one of them failed or was cancelled. By default a failed
	// dependency fails the task with its reason.
	RunAfterFailure bool `json:"run_after_failure,omitempty"`
	// MaxSteps and MaxTime bound the run; zero means the worker's
	// defaults.
	MaxSteps int      `json:"max_steps,omitempty"`
	MaxTime  Duration `json:"max_time,omitempty"`
	// Labels are free-form, for the people and programs that read the
	// board.
	Labels map[string]string `json:"labels,omitempty"`
	// OutputSchema, when set, is a JSON Schema the task's structured
	// result must match (see tools.ParseOutputSchema); the result then
	// carries it in Result.Data. Add refuses a schema that is not one.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	// SavedState names a saved state on the board (see PutState): the
	// task's session starts with its cookies and local storage, as far
	// as the task's policy allows. Add refuses a name the board does not
	// hold; a worker without an identity that opens it fails the task.
	SavedState string `json:"saved_state,omitempty"`
	// Attachments are the files stored with the task for its uploads
	// (see Attach): names, sizes and digests; Add sets them.
	Attachments []File `json:"attachments,omitempty"`

	attach []attachment // to store when added
}

// Policy is a task's narrowing of the worker's policy: hosts it may reach
// (when not empty, only those), hosts that need approval, hosts it may not
// reach, and action rules.
type Policy struct {
	Allow   []policy.HostRule   `json:"allow,omitempty"`
	Ask     []policy.HostRule   `json:"ask,omitempty"`
	Deny    []policy.HostRule   `json:"deny,omitempty"`
	Actions []policy.ActionRule `json:"actions,omitempty"`
}

// Restriction is p as a policy restriction, for policy.Policy.Restrict.
func (p *Policy) Restriction() policy.Restriction {
	if p == nil {
		return policy.Restriction{}
	}
	return policy.Restriction{Allow: p.Allow, Ask: p.Ask, Deny: p.Deny, Actions: p.Actions}
}

// Apply returns base narrowed by p (base itself when p is nil).
func (p *Policy) Apply(base *policy.Policy) (*policy.Policy, error) {
	if p == nil {
		return base, nil
	}
	return base.Restrict(p.Restriction())
}

// Duration is a time.Duration written in JSON as a string ("5m"); a
// number is read as seconds.
type Duration time.Duration

// MarshalJSON writes d as "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads "1m30s" or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %v", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var secs float64
	if err := json.Unmarshal(b, &secs); err != nil {
		return fmt.Errorf("a duration is a string like \"5m\" or a number of seconds, not %s", b)
	}
	*d = Duration(secs * float64(time.Second))
	return nil
}

// Result is what a run of a task produced.
type Result struct {
	Answer string `json:"answer,omitempty"`
	// Data is the structured result, validated against the task's
	// OutputSchema.
	Data json.RawMessage `json:"data,omitempty"`
	// EndReason is how the run ended (answered, max_steps, error, ...).
	EndReason string   `json:"end_reason,omitempty"`
	Steps     int      `json:"steps,omitempty"`
	Tokens    int      `json:"tokens,omitempty"`
	Duration  Duration `json:"duration,omitempty"`
	// Journal, Images and Report name files in the board's file store
	// (see Board.File).
	Journal string   `json:"journal,omitempty"`
	Images  []string `json:"images,omitempty"`
	Report  string   `json:"report,omitempty"`
	// Downloads are the files the run downloaded, stored on the board.
	Downloads []File `json:"downloads,omitempty"`
}

// Record is a task on the board: the task, its state and, when it ended,
// its result.
type Record struct {
	Task  Task  `json:"task"`
	State State `json:"state"`
	// Reason says why a task failed or was cancelled.
	Reason string `json:"reason,omitempty"`
	// Worker names the worker that runs (or last ran) the task.
	Worker string `json:"worker,omitempty"`
	// Attempts counts the runs started, including one in progress.
	Attempts int `json:"attempts"`
	// Progress is the running worker's last word on what it is doing.
	Progress string `json:"progress,omitempty"`
	// Notes tell what happened to earlier attempts (a worker lost, a
	// task handed back).
	Notes    []string  `json:"notes,omitempty"`
	Created  time.Time `json:"created"`
	Updated  time.Time `json:"updated"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	Result   *Result   `json:"result,omitempty"`
	// Attaching marks a task whose attachments Add is still storing: it
	// stays pending until they are all on the board. (One whose Add died
	// meanwhile stays so; cancel it.)
	Attaching bool `json:"attaching,omitempty"`
	// Traceparent is the W3C trace context of the span that added the
	// task (empty when tracing was off): the worker's span of the task
	// is its child, so a task's spans share its creator's trace.
	Traceparent string `json:"traceparent,omitempty"`
	// Revision is the record's revision in the bucket.
	Revision uint64 `json:"-"`
}

// HandedAnswer is what a task that runs after this one is told it
// answered: its answer, or why it has none (a dependency that failed,
// for a task that runs after failures).
func (r Record) HandedAnswer() string {
	if r.Result != nil && r.Result.Answer != "" && r.State == Done {
		return r.Result.Answer
	}
	why := string(r.State)
	if r.Reason != "" {
		why += ": " + r.Reason
	}
	if r.Result != nil && r.Result.Answer != "" {
		return fmt.Sprintf("(the task ended %s; its last answer was: %s)", why, r.Result.Answer)
	}
	return fmt.Sprintf("(no answer: the task ended %s)", why)
}

// ResultData is the record's structured result, if it has one.
func (r Record) ResultData() json.RawMessage {
	if r.Result == nil || r.State != Done {
		return nil
	}
	return r.Result.Data
}

// Config says where the board lives. The zero Config opens the board of
// the user's data directory with an embedded NATS server.
type Config struct {
	// Dir holds the embedded server's data (default DefaultDir()). Every
	// process that opens the same Dir shares one server: the first starts
	// it, the others connect to it, and when its process ends another
	// takes it over on the same address.
	Dir string
	// URL, when set, is a NATS server or cluster (comma-separated URLs) to
	// use instead of an embedded server.
	URL string
	// Creds is a NATS credentials file for URL.
	Creds string
	// TLSCA is a PEM file of the certificate authorities that sign the
	// servers of URL (default: the system's). Setting it, or TLSCert,
	// makes the connection use TLS.
	TLSCA string
	// TLSCert and TLSKey are PEM files of a client certificate and its
	// key, for servers that verify their clients; both or neither.
	TLSCert, TLSKey string
	// NKeySeed is a file holding an nkey user's seed (SU...), to
	// authenticate to URL with instead of, or besides, Creds.
	//
	// Creds, TLSKey and NKeySeed are files, never their contents: the
	// board reads them when it connects and names them in errors, never
	// quotes them.
	NKeySeed string
	// Replicas is how many copies JetStream keeps of the board (1 for an
	// embedded server; 3 on a cluster of three). It only ever grows a
	// board: zero, or fewer than the board has, keeps what it has (1 for
	// a new board).
	Replicas int
	// Lease is how long a claimed task stays with a worker that stops
	// heartbeating before it goes back to the board, for a board this
	// Open creates (default 1m). It is a setting of the board, not of
	// each process: a board that exists keeps its own, which only
	// SetLease changes, and every worker heartbeats by it.
	Lease time.Duration
	// AckWait is how long a write to the file store waits for the
	// acknowledgement of each chunk it sends before that write is tried
	// again (default 5s): a NATS node lost, or the file store's leader
	// being elected, costs a few short tries, not the caller's whole
	// budget.
	AckWait time.Duration
	// MaxFileBytes caps one file a task has attached or downloaded
	// (default DefaultMaxFileBytes, 100 MiB).
	MaxFileBytes int64
	// TracerProvider makes the spans of Add and of each task a worker
	// runs (a child of the span that added it, through the record's
	// Traceparent); nil means otel's global provider (a no-op unless the
	// program set one).
	TracerProvider trace.TracerProvider
	// Logger receives the board's diagnostics; nil discards them.
	Logger *slog.Logger
}

// DefaultDir is the board's data directory: $XDG_DATA_HOME/surf/board,
// else ~/.local/share/surf/board.
func DefaultDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "surf", "board"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no data directory for the board: %v (set --data or $XDG_DATA_HOME)", err)
	}
	return filepath.Join(home, ".local", "share", "surf", "board"), nil
}

// HasData reports whether dir holds the data of an embedded board (one
// was opened there before): Open with that Dir opens it rather than
// starting an empty board, as Migrate's source must.
func HasData(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "jetstream"))
	return err == nil
}

// Board is an open task board. It is safe for concurrent use.
type Board struct {
	cfg   Config
	log   *slog.Logger
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	files jetstream.ObjectStore
	fjs   jetstream.JetStream // for object stores: waits AckWait per chunk
	ready jetstream.Stream
	emb   *embedded // nil with Config.URL

	plansMu sync.Mutex
	plansKV jetstream.KeyValue // see plans

	closeOnce sync.Once
}

// Open connects to the board, creating its bucket, stream and object
// store when they do not exist yet.
func Open(ctx context.Context, cfg Config) (*Board, error) {
	if cfg.URL == "" && (cfg.Creds != "" || cfg.TLSCA != "" || cfg.TLSCert != "" || cfg.TLSKey != "" || cfg.NKeySeed != "") {
		return nil, errors.New("credentials, TLS and nkeys are for a NATS server named by URL, not the embedded server")
	}
	if cfg.Lease <= 0 {
		cfg.Lease = defaultLease
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = defaultAck
	}
	b := &Board{cfg: cfg, log: cfg.Logger}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	opts := []nats.Option{nats.Name("surf board"), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond)}
	url := cfg.URL
	if url == "" {
		if cfg.Dir == "" {
			d, err := DefaultDir()
			if err != nil {
				return nil, err
			}
			cfg.Dir = d
			b.cfg.Dir = d
		}
		emb, err := openEmbedded(ctx, cfg.Dir, b.log)
		if err != nil {
			return nil, err
		}
		b.emb = emb
		url = emb.url
		opts = append(opts, nats.Token(emb.token), nats.DisconnectErrHandler(func(*nats.Conn, error) { emb.takeOver() }))
	} else {
		auth, err := cfg.authOptions()
		if err != nil {
			return nil, err
		}
		opts = append(opts, auth...)
	}
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		b.emb.close()
		return nil, cfg.connectError(url, err)
	}
	b.nc = nc
	if err := b.setup(ctx); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// setup creates (or finds) the bucket, stream, consumer and object store.
// A cluster that is still electing its leaders answers with errors for a
// while, so setup tries again until ctx ends or 30 s pass.
func (b *Board) setup(ctx context.Context) error {
	js, err := jetstream.New(b.nc)
	if err != nil {
		return err
	}
	b.js = js
	// The file store's writes wait AckWait per chunk: Put sets that per
	// publish from its JetStream's default timeout (see PutFile).
	fjs, err := jetstream.New(b.nc, jetstream.WithDefaultTimeout(b.cfg.AckWait))
	if err != nil {
		return err
	}
	b.fjs = fjs
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return retry(ctx, func(ctx context.Context) error {
		have, err := b.streams(ctx)
		if err != nil {
			return err
		}
		r := b.replicasOf(have)
		tasks := jetstream.KeyValueConfig{
			Bucket: TasksBucket, Description: "surf task records", History: 1,
			Storage: jetstream.FileStorage, Replicas: r,
		}
		if b.kv, err = ensureKV(ctx, js, have, tasks); err != nil {
			return fmt.Errorf("the task bucket: %w", err)
		}
		ready := jetstream.StreamConfig{
			Name: ReadyStream, Description: "surf tasks ready to run", Subjects: []string{readySubject},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Replicas: r,
			Duplicates: 10 * time.Minute,
		}
		if sameStream(have[ReadyStream], ready) {
			b.ready, err = js.Stream(ctx, ReadyStream)
		} else {
			b.ready, err = js.CreateOrUpdateStream(ctx, ready)
		}
		if err != nil {
			return fmt.Errorf("the ready stream: %w", err)
		}
		// the consumer's lease is the board's setting: set when the
		// board is created, changed only by SetLease
		if _, err := js.Consumer(ctx, ReadyStream, WorkersGroup); errors.Is(err, jetstream.ErrConsumerNotFound) {
			if err := b.ensureConsumer(ctx, b.cfg.Lease); err != nil {
				return err
			}
		} else if err != nil {
			return err
		}
		files := jetstream.ObjectStoreConfig{
			Bucket: FilesBucket, Description: "surf journals, images and reports",
			Storage: jetstream.FileStorage, Replicas: r,
		}
		if sameStream(have["OBJ_"+FilesBucket], objectStream(files)) {
			b.files, err = fjs.ObjectStore(ctx, FilesBucket)
		} else {
			b.files, err = fjs.CreateOrUpdateObjectStore(ctx, files)
		}
		if err != nil {
			return fmt.Errorf("the file store: %w", err)
		}
		// the saved states' store is made by the first PutState; one
		// that exists grows with the board
		if c, ok := have["OBJ_"+StatesBucket]; ok && !sameStream(c, objectStream(stateStoreConfig(r))) {
			if _, err := b.createStateStore(ctx, r); err != nil {
				return fmt.Errorf("the saved states' store: %w", err)
			}
		}
		// so is the plans' bucket, made by the first plan (plans.go)
		if c, ok := have["KV_"+PlansBucket]; ok && !sameStream(c, kvStream(plansConfig(r))) {
			if _, err := js.CreateOrUpdateKeyValue(ctx, plansConfig(r)); err != nil {
				return fmt.Errorf("the plans' bucket: %w", err)
			}
		}
		return nil
	})
}

// boardStreams are the streams behind the board's buckets and queue.
var boardStreams = []string{"KV_" + TasksBucket, ReadyStream, "OBJ_" + FilesBucket, "OBJ_" + StatesBucket, "KV_" + PlansBucket}

// streams returns the configuration of each of the board's streams that
// exists.
func (b *Board) streams(ctx context.Context) (map[string]jetstream.StreamConfig, error) {
	out := map[string]jetstream.StreamConfig{}
	for _, name := range boardStreams {
		s, err := b.js.Stream(ctx, name)
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[name] = s.CachedInfo().Config
	}
	return out, nil
}

// replicas is the replication to create or update the board's streams
// with: the configured one, never fewer than the board has now.
func (b *Board) replicas(ctx context.Context) (int, error) {
	have, err := b.streams(ctx)
	if err != nil {
		return 0, err
	}
	return b.replicasOf(have), nil
}

func (b *Board) replicasOf(have map[string]jetstream.StreamConfig) int {
	r := max(b.cfg.Replicas, 1)
	for _, c := range have {
		r = max(r, c.Replicas)
	}
	return r
}

// sameStream reports whether a stream's configuration already has the
// settings surf gives it in want, a zero limit meaning the server's
// default (its other settings are the server's defaults or a person's, and
// are not surf's to change). Opening the board updates only a stream that
// differs: an update is a write to the stream's store, and nats-server
// v2.15 races it against a consumer being created on the same stream by
// another process (a watcher of the task bucket).
func sameStream(have, want jetstream.StreamConfig) bool {
	return have.Description == want.Description && have.Storage == want.Storage &&
		have.Replicas == want.Replicas && have.Retention == want.Retention &&
		(want.MaxMsgsPerSubject == 0 || have.MaxMsgsPerSubject == want.MaxMsgsPerSubject) &&
		(want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		(want.Subjects == nil || slices.Equal(have.Subjects, want.Subjects))
}

// kvStream is the part of a key-value bucket's stream that sameStream
// compares: nats.go keeps History as the stream's MaxMsgsPerSubject.
func kvStream(c jetstream.KeyValueConfig) jetstream.StreamConfig {
	return jetstream.StreamConfig{Description: c.Description, Storage: c.Storage, Replicas: max(c.Replicas, 1), MaxMsgsPerSubject: int64(max(c.History, 1))}
}

// objectStream is the part of an object store's stream that sameStream
// compares.
func objectStream(c jetstream.ObjectStoreConfig) jetstream.StreamConfig {
	return jetstream.StreamConfig{Description: c.Description, Storage: c.Storage, Replicas: max(c.Replicas, 1)}
}

// ensureKV opens a key-value bucket, creating it or updating its settings
// only when they are not cfg's already (see sameStream).
func ensureKV(ctx context.Context, js jetstream.JetStream, have map[string]jetstream.StreamConfig, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if sameStream(have["KV_"+cfg.Bucket], kvStream(cfg)) {
		return js.KeyValue(ctx, cfg.Bucket)
	}
	return js.CreateOrUpdateKeyValue(ctx, cfg)
}

func (b *Board) ensureConsumer(ctx context.Context, lease time.Duration) error {
	_, err := b.js.CreateOrUpdateConsumer(ctx, ReadyStream, jetstream.ConsumerConfig{
		Durable: WorkersGroup, Description: "surf workers", AckPolicy: jetstream.AckExplicitPolicy,
		AckWait: lease, MaxDeliver: -1, MaxAckPending: -1,
	})
	if err != nil {
		return fmt.Errorf("the workers' consumer: %w", err)
	}
	return nil
}

// Close disconnects; with an embedded server it stops the server when
// this process runs it.
func (b *Board) Close() error {
	b.closeOnce.Do(func() {
		if b.nc != nil {
			b.nc.Drain()
			for i := 0; i < 100 && !b.nc.IsClosed(); i++ {
				time.Sleep(20 * time.Millisecond)
			}
			b.nc.Close()
		}
		b.emb.close()
	})
	return nil
}

// Dir is the data directory of the embedded server ("" with Config.URL).
func (b *Board) Dir() string {
	if b.emb == nil {
		return ""
	}
	return b.cfg.Dir
}

// Conn is the board's NATS connection, for what travels beside the
// board on the same NATS (cmd/surf's live sessions, say). It belongs to
// the board: Close closes it.
func (b *Board) Conn() *nats.Conn { return b.nc }

// Lease is the board's lease: how long a claimed task stays with a
// worker that stops heartbeating (the AckWait of the workers' consumer,
// which JetStream keeps with the board).
func (b *Board) Lease(ctx context.Context) (time.Duration, error) {
	var d time.Duration
	err := retry(ctx, func(ctx context.Context) error {
		c, err := b.js.Consumer(ctx, ReadyStream, WorkersGroup)
		if err != nil {
			return err
		}
		d = c.CachedInfo().Config.AckWait
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("the board's lease: %w", err)
	}
	return d, nil
}

// MinLease is the shortest lease a board takes: workers heartbeat three
// times a lease.
const MinLease = 300 * time.Millisecond

// SetLease changes the board's lease for every worker: tasks claimed from
// now on are handed back after d without a heartbeat, and running
// workers heartbeat by it from their next beat (within a few seconds).
func (b *Board) SetLease(ctx context.Context, d time.Duration) error {
	if d < MinLease {
		return fmt.Errorf("a lease of %s is too short: at least %s, as workers heartbeat three times a lease", d, MinLease)
	}
	return retry(ctx, func(ctx context.Context) error { return b.ensureConsumer(ctx, d) })
}

// ErrNotFound is returned for a task id the board does not hold.
var ErrNotFound = errors.New("no such task")

// Get returns the record of task id.
func (b *Board) Get(ctx context.Context, id string) (Record, error) {
	var rec Record
	err := retry(ctx, func(ctx context.Context) error {
		e, err := b.kv.Get(ctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNotFound, id))
		}
		if errors.Is(err, jetstream.ErrInvalidKey) {
			return permanent(fmt.Errorf("%w: %q is not a task id", ErrNotFound, id))
		}
		if err != nil {
			return err
		}
		rec, err = decode(e)
		if err != nil {
			return permanent(err)
		}
		return nil
	})
	return rec, err
}

// List returns every record, oldest first.
func (b *Board) List(ctx context.Context) ([]Record, error) {
	var out []Record
	err := retry(ctx, func(ctx context.Context) error {
		out = out[:0]
		return eachEntry(ctx, b.kv, func(e jetstream.KeyValueEntry) {
			rec, err := decode(e)
			if err != nil {
				b.log.Warn("board: unreadable record", "key", e.Key(), "err", err)
				return
			}
			out = append(out, rec)
		})
	})
	sortRecords(out)
	return out, err
}

// eachEntry calls f with every entry of kv as it is now (deletes left
// out).
func eachEntry(ctx context.Context, kv jetstream.KeyValue, f func(jetstream.KeyValueEntry)) error {
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("the watcher of bucket %s stopped", kv.Bucket())
			}
			if e == nil {
				return nil
			}
			f(e)
		}
	}
}

func sortRecords(rs []Record) {
	// insertion order by creation, then id: lists are short enough
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && less(rs[j], rs[j-1]); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

func less(a, b Record) bool {
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	return a.Task.ID < b.Task.ID
}

func decode(e jetstream.KeyValueEntry) (Record, error) {
	var rec Record
	if err := json.Unmarshal(e.Value(), &rec); err != nil {
		return rec, fmt.Errorf("task %s: unreadable record: %v", e.Key(), err)
	}
	rec.Revision = e.Revision()
	return rec, nil
}

// errStop ends an update without writing.
var errStop = errors.New("no change")

// update changes task id's record by compare-and-set: fn edits a fresh
// copy, and is called again when another writer got there first. fn
// returning errStop leaves the record as it is.
func (b *Board) update(ctx context.Context, id string, fn func(*Record) error) (Record, error) {
	return b.updateFor(ctx, retryPatience, id, fn)
}

// updateFor is update trying for up to patience on errors that may pass.
func (b *Board) updateFor(ctx context.Context, patience time.Duration, id string, fn func(*Record) error) (Record, error) {
	var rec Record
	err := retryFor(ctx, patience, func(ctx context.Context) error {
		e, err := b.kv.Get(ctx, id)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return permanent(fmt.Errorf("%w: %s", ErrNotFound, id))
		}
		if err != nil {
			return err
		}
		if rec, err = decode(e); err != nil {
			return permanent(err)
		}
		if err := fn(&rec); err != nil {
			return permanent(err)
		}
		rec.Updated = time.Now().UTC()
		data, err := json.Marshal(rec)
		if err != nil {
			return permanent(err)
		}
		rev, err := b.kv.Update(ctx, id, data, rec.Revision)
		if err != nil {
			if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
				return errConflict
			}
			return err
		}
		rec.Revision = rev
		return nil
	})
	if errors.Is(err, errStop) {
		return rec, nil
	}
	return rec, err
}

var errConflict = errors.New("revision conflict")

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return permanentError{err} }

// retry calls f until it succeeds, returns a permanent error, or ctx ends
// (at most 20 s on errors that may pass: a NATS node restarting, a
// leader being elected, a compare-and-set conflict).
func retry(ctx context.Context, f func(context.Context) error) error {
	return retryFor(ctx, retryPatience, f)
}

// How long board operations try again on errors that may pass, and how
// long a worker tries to record a finished run's result (it keeps the
// claim meanwhile).
const (
	retryPatience  = 20 * time.Second
	resultPatience = 2 * time.Minute
)

// retryFor is retry for up to patience.
func retryFor(ctx context.Context, patience time.Duration, f func(context.Context) error) error {
	deadline := time.Now().Add(patience)
	wait := 20 * time.Millisecond
	for {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := f(cctx)
		cancel()
		var p permanentError
		if err == nil {
			return nil
		}
		if errors.As(err, &p) {
			return p.err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return err
		}
		if errors.Is(err, errConflict) {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, time.Second)
	}
}

// ErrNoFile is returned for a name the board's file store does not hold.
var ErrNoFile = errors.New("the board holds no file")

// File opens a file of the board's store (a journal, an image, a
// report, an attachment, a download).
func (b *Board) File(ctx context.Context, name string) (io.ReadCloser, error) {
	r, err := b.files.Get(ctx, name)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w %q", ErrNoFile, name)
	}
	return r, err
}

// PutFile stores r as name in the board's file store, and reads it back
// to check that it is whole. A write that fails, or does not read back
// whole, because a NATS node was lost or the file store's leader is being
// elected, is tried again from r's start until it succeeds or ctx ends:
// each chunk waits Config.AckWait for its acknowledgement, so a leader
// change costs a few tries of that length. r is read again from where it
// was when it is an io.Seeker (a file), else it is read into memory
// first. A name that is stored again is replaced.
func (b *Board) PutFile(ctx context.Context, name string, r io.Reader) error {
	if name == "" || strings.Contains(name, "..") {
		return fmt.Errorf("bad file name %q", name)
	}
	rs, ok := r.(io.ReadSeeker)
	var start int64
	if ok {
		var err error
		if start, err = rs.Seek(0, io.SeekCurrent); err != nil {
			ok = false
		}
	}
	if !ok {
		data, err := io.ReadAll(r)
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		rs = bytes.NewReader(data)
	}
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		if _, err := rs.Seek(start, io.SeekStart); err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		src := &readErrs{r: rs}
		err := b.putOnce(ctx, name, src)
		switch {
		case err == nil:
			return nil
		case src.err != nil:
			return fmt.Errorf("reading %s: %w", name, src.err)
		case ctx.Err() != nil:
			return fmt.Errorf("storing %s (%d %s): %w", name, try, plural(try, "try", "tries"), err)
		}
		b.log.Debug("board: storing a file, trying again", "name", name, "try", try, "err", err)
		select {
		case <-ctx.Done():
			return fmt.Errorf("storing %s (%d %s): %w", name, try, plural(try, "try", "tries"), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// putOnce is one try of PutFile: the write, then the read back. The
// object store waits for each chunk's acknowledgement for its
// JetStream's default timeout (Config.AckWait) only when ctx has no
// deadline, so Put gets ctx's cancellation without its deadline; a timer
// ends a try that outlasts any acknowledgement it waits for (a lost
// reply, say) all the same.
func (b *Board) putOnce(ctx context.Context, name string, r *readErrs) error {
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	defer time.AfterFunc(10*b.cfg.AckWait, cancel).Stop()
	info, err := b.files.Put(pctx, jetstream.ObjectMeta{Name: name}, r)
	if err != nil {
		return err
	}
	// A chunk sent again while a leader is elected can be stored twice,
	// or after the next one: the object's digest finds out.
	rctx, rcancel := context.WithTimeout(ctx, 10*b.cfg.AckWait)
	defer rcancel()
	back, err := b.files.Get(rctx, name)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	defer back.Close()
	n, err := io.Copy(io.Discard, back)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	if uint64(n) != info.Size {
		return fmt.Errorf("reading it back: %d bytes of %d", n, info.Size)
	}
	return nil
}

// readErrs remembers the error of a reader that failed: that is not the
// store's to retry.
type readErrs struct {
	r   io.Reader
	err error
}

func (e *readErrs) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF {
		e.err = err
	}
	return n, err
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// checkID refuses ids that are not usable as keys or on a command line.
func checkID(id string) error {
	if len(id) > maxTaskIDLen || !idPattern.MatchString(id) {
		return fmt.Errorf("task id %q: use letters, digits, '-' and '_' (at most %d, starting with a letter or digit)", cut(id, 80), maxTaskIDLen)
	}
	return nil
}

func newID() string {
	const alphabet = "abcdefghijkmnpqrstuvwxyz23456789"
	var buf [8]byte
	rand.Read(buf[:])
	out := make([]byte, 0, 10)
	out = append(out, 't', '-')
	for _, c := range buf {
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "..."
}

// RedactURL hides the user and password of NATS URLs (comma-separated)
// for messages: nats://user:pw@host:4222 becomes nats://***@host:4222.
func RedactURL(u string) string {
	parts := strings.Split(u, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if s := strings.Index(p, "://"); s >= 0 && s < at {
				parts[i] = p[:s+3] + "***" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}
