package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/surfkit/surf/board"
	"github.com/surfkit/surf/internal/testkit/fakeopenai"
	"github.com/surfkit/surf/policy"
	"github.com/surfkit/surf/sandbox"
	"github.com/surfkit/surf/worker"
)

// loginSite says "Signed in" to a request with the session cookie, and
// counts those requests.
func loginSite(t *testing.T, cookie string) (*httptest.Server, *atomic.Int32) {
	var in atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if c, err := r.Cookie("sid"); err == nil && c.Value == cookie {
			in.Add(1)
			fmt.Fprint(w, "<!doctype html><title>Account</title><h1>Signed in as Ada Lovelace</h1>")
			return
		}
		fmt.Fprint(w, "<!doctype html><title>Sign in</title><h1>Signed out</h1>")
	}))
	t.Cleanup(srv.Close)
	return srv, &in
}

// Issue 31, saved logins: a task that names a saved state on the board
// starts signed in on a worker whose identity opens it; on a worker
// without an identity, or with one the state is not encrypted to, it
// fails at once (one attempt) with the reason. No record and no stored
// file holds the cookie's value.
func TestSavedStateOnTheBoard(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cookie := "c" + rand.Text()
	site, signedIn := loginSite(t, cookie)
	b, err := board.Open(ctx, board.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	dir := t.TempDir()
	keyFile, otherKey := filepath.Join(dir, "worker.key"), filepath.Join(dir, "other.key")
	pub, err := worker.KeyGen(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the key file: %v, %v", fi, err)
	}
	if _, err := worker.KeyGen(keyFile); err == nil {
		t.Fatal("KeyGen replaced an existing key file")
	}
	otherPub, err := worker.KeyGen(otherKey)
	if err != nil {
		t.Fatal(err)
	}
	// a cookie for the site, and one for a host the policy denies
	st, err := sandbox.ParseState([]byte(`{"cookies": [{"name": "sid", "value": "` + cookie + `", "domain": "127.0.0.1", "path": "/", "expires": -1, "sameSite": "Lax"},
		{"name": "sid", "value": "smuggled-` + cookie + `", "domain": "other.test", "path": "/", "expires": -1, "sameSite": "Lax"}], "origins": []}`))
	if err != nil {
		t.Fatal(err)
	}
	put := func(name, key string) {
		rs, err := worker.ParseRecipients(key)
		if err != nil {
			t.Fatal(err)
		}
		sealed, info, err := worker.SealState(name, st, rs)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(sealed), cookie) || info.Cookies != 2 || info.Recipients[0] != key {
			t.Fatalf("sealed %s: %+v", name, info)
		}
		if err := b.PutState(ctx, info, sealed); err != nil {
			t.Fatal(err)
		}
	}
	put("acct", pub)
	put("foreign", otherPub)

	// the worker may reach both hosts; task in, only the site
	pol, err := policy.New(policy.Config{Allow: []policy.HostRule{mustHostRule(t, "127.0.0.1"), mustHostRule(t, "other.test")}})
	if err != nil {
		t.Fatal(err)
	}
	runAll := func(cfg worker.Config, ids ...string) []board.Record {
		t.Helper()
		w, err := worker.New(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		work, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- b.Work(work, board.WorkConfig{Run: w.Run, MaxAttempts: 3}) }()
		recs, err := b.Wait(ctx, ids...)
		stop()
		<-done
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	cfg := worker.Config{Sandbox: sandbox.Config{Env: sandbox.EnvFrom(os.Getenv), Policy: pol}, MaxSteps: 3}

	// A worker without an identity.
	if _, err := b.Add(ctx, board.Task{ID: "noid", Instruction: "Say what you see.", StartURL: site.URL + "/account", SavedState: "acct"}); err != nil {
		t.Fatal(err)
	}
	// the model answers the one task that runs
	cfg.Model = fakeModel(t, fakeopenai.CallTool("stop_action", `{"answer": "seen"}`))
	r := runAll(cfg, "noid")[0]
	if r.State != board.Failed || r.Attempts != 1 || !strings.Contains(r.Reason, `saved state "acct"`) || !strings.Contains(r.Reason, worker.ErrNoStateIdentity.Error()) {
		t.Errorf("task noid on a worker without an identity: %s after %d attempts: %q", r.State, r.Attempts, r.Reason)
	}

	// A worker with one: the state it opens signs the task in; the one
	// it does not open fails.
	if _, err := b.Add(ctx,
		board.Task{ID: "in", Instruction: "Say what you see.", StartURL: site.URL + "/account", SavedState: "acct",
			Policy: &board.Policy{Allow: []policy.HostRule{mustHostRule(t, "127.0.0.1")}}},
		board.Task{ID: "foreign", Instruction: "Say what you see.", StartURL: site.URL + "/account", SavedState: "foreign"},
	); err != nil {
		t.Fatal(err)
	}
	cfg.StateIdentity = keyFile
	loaded := &stateWatcher{}
	cfg.Watcher = loaded
	recs := runAll(cfg, "in", "foreign")
	in, foreign := recs[0], recs[1]
	if in.State != board.Done || in.Attempts != 1 {
		t.Errorf("task in: %s after %d attempts: %q", in.State, in.Attempts, in.Reason)
	}
	if signedIn.Load() == 0 {
		t.Error("the login site never saw the task's session signed in")
	}
	// the task's own policy filtered the state: the other host's cookie,
	// which the worker's policy allows, was not loaded
	if sum := loaded.get("in"); sum.Cookies != 1 || sum.DroppedCookies != 1 || !sum.Encrypted {
		t.Errorf("task in loaded %+v, want 1 cookie, 1 dropped by the policy", sum)
	}
	if foreign.State != board.Failed || foreign.Attempts != 1 || !strings.Contains(foreign.Reason, worker.ErrStateNotForWorker.Error()) || !strings.Contains(foreign.Reason, otherPub) {
		t.Errorf("task foreign: %s after %d attempts: %q", foreign.State, foreign.Attempts, foreign.Reason)
	}

	// No record, and no file of the runs, holds the cookie's value.
	all, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range all {
		js, _ := json.Marshal(rec)
		if strings.Contains(string(js), cookie) {
			t.Errorf("the record of %s holds the cookie", rec.Task.ID)
		}
		if rec.Result == nil {
			continue
		}
		for _, name := range append([]string{rec.Result.Journal, rec.Result.Report}, rec.Result.Images...) {
			if name == "" {
				continue
			}
			f, err := b.File(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(f)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(data), cookie) {
				t.Errorf("%s holds the cookie", name)
			}
		}
	}

	// A worker with an identity file that does not parse does not start.
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte("not a key\n"), 0o600)
	cfg.StateIdentity = bad
	if w, err := worker.New(ctx, cfg); err == nil {
		w.Close()
		t.Fatal("New took an identity file that does not parse")
	}
}

func mustHostRule(t *testing.T, s string) policy.HostRule {
	t.Helper()
	r, err := policy.ParseHostRule(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// stateWatcher records what each task's session loaded from its state.
type stateWatcher struct {
	mu     sync.Mutex
	loaded map[string]sandbox.StateSummary
}

var _ worker.Watcher = (*stateWatcher)(nil)

func (w *stateWatcher) Watch(_ context.Context, run *worker.Run) (worker.Watch, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.loaded == nil {
		w.loaded = map[string]sandbox.StateSummary{}
	}
	w.loaded[run.Claim.Task.ID] = run.Session.StateLoaded()
	return recordWatch{&recorder{}}, nil
}

func (w *stateWatcher) get(id string) sandbox.StateSummary {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.loaded[id]
}
