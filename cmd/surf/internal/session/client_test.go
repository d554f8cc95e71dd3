package session_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/surfkit/surf/cmd/surf/internal/daemon"
	"github.com/surfkit/surf/cmd/surf/internal/session"
)

// runtimeEnv is a getenv with SURF_RUNTIME_DIR in a fresh short temp dir
// (socket paths are short).
func runtimeEnv(t *testing.T) (func(string) string, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "sc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	rt := filepath.Join(dir, "rt")
	return func(k string) string {
		if k == "SURF_RUNTIME_DIR" {
			return rt
		}
		return ""
	}, rt
}

// serve runs an in-process daemon for session name that answers with h.
func serve(t *testing.T, getenv func(string) string, name string, h daemon.HandlerFunc) daemon.Paths {
	t.Helper()
	p, err := session.PathsOf(getenv, name)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := daemon.Listen(daemon.Config{Socket: p.Socket, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return p
}

func TestPathsOfRefusesABadNameAsUsage(t *testing.T) {
	getenv, rt := runtimeEnv(t)
	p, err := session.PathsOf(getenv, "ok.name")
	if err != nil || p.Socket != filepath.Join(rt, "ok.name.sock") {
		t.Fatalf("PathsOf(ok.name) = %+v, %v", p, err)
	}
	_, err = session.PathsOf(getenv, "../evil")
	var he *daemon.HintError
	if !errors.As(err, &he) || he.Code != daemon.ExitUsage {
		t.Fatalf("PathsOf(../evil) = %v (%T), want a *daemon.HintError with exit code %d", err, err, daemon.ExitUsage)
	}
}

func TestPathsOfAdvisesOnAnOpenRuntimeDir(t *testing.T) {
	getenv, rt := runtimeEnv(t)
	if err := os.MkdirAll(rt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(rt, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := session.PathsOf(getenv, "default")
	var he *daemon.HintError
	if !errors.As(err, &he) || !strings.Contains(he.Hint, "SURF_RUNTIME_DIR") || he.Code != 0 {
		t.Fatalf("PathsOf in a 0755 dir = %v, want a hint to set SURF_RUNTIME_DIR and the default exit code", err)
	}
}

func TestCallWithoutADaemonSaysNoSessionIsOpen(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	for name, want := range map[string]string{
		"default": "run 'surf open URL' first",
		"work":    "run 'surf open URL --session work' first",
	} {
		_, err := session.Call(context.Background(), getenv, name, daemon.Request{Tool: session.ReqObserve})
		var he *daemon.HintError
		if !errors.As(err, &he) || he.Err.Error() != `no surf session "`+name+`" is open` || he.Hint != want {
			t.Errorf("Call(%s) without a daemon = %v, want %q with hint %q", name, err, "no surf session is open", want)
		}
	}
}

func TestCallReturnsAFailedResponseAsAnError(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	serve(t, getenv, "default", func(ctx context.Context, req daemon.Request) daemon.Response {
		if req.Tool == "click" {
			return daemon.Response{Error: "no element 99", Hint: "observe again", ExitCode: daemon.ExitFailed}
		}
		return daemon.Response{OK: true, Text: "did " + req.Tool}
	})
	ctx := context.Background()
	resp, err := session.Call(ctx, getenv, "default", daemon.Request{Tool: session.ReqObserve})
	if err != nil || resp.Text != "did observe" {
		t.Fatalf("Call(observe) = %+v, %v", resp, err)
	}
	_, err = session.Call(ctx, getenv, "default", daemon.Request{Tool: "click"})
	var re *daemon.ResponseError
	if !errors.As(err, &re) || re.Response.Error != "no element 99" || re.Response.Hint != "observe again" {
		t.Fatalf("Call(click) = %v, want the failed response as a *daemon.ResponseError", err)
	}
	resp, err = session.CallRaw(ctx, getenv, "default", daemon.Request{Tool: "click"})
	if err != nil || resp.OK || resp.Error != "no element 99" {
		t.Fatalf("CallRaw(click) = %+v, %v, want the failed response itself", resp, err)
	}
}

func TestCheckSameFlags(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	have := []string{"--allow=example.com", "--idle=5m0s"}
	for _, name := range []string{"default", "other"} {
		p := serve(t, getenv, name, func(ctx context.Context, req daemon.Request) daemon.Response {
			b, _ := json.Marshal(session.Status{Session: name, PID: os.Getpid(), Flags: have})
			return daemon.Response{OK: true, Text: string(b)}
		})
		ctx := context.Background()
		c, err := daemon.Dial(ctx, p.Socket)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := session.CheckSameFlags(ctx, c, name, slices.Clone(have)); err != nil {
			t.Errorf("%s: the same flags are refused: %v", name, err)
		}
		err = session.CheckSameFlags(ctx, c, name, []string{"--allow=example.org"})
		var he *daemon.HintError
		if !errors.As(err, &he) || he.Code != daemon.ExitUsage {
			t.Fatalf("%s: other flags = %v, want a usage *daemon.HintError", name, err)
		}
		if want := `session "` + name + `" is already open with other flags: --allow=example.com --idle=5m0s`; he.Err.Error() != want {
			t.Errorf("%s: error %q, want %q", name, he.Err, want)
		}
		closeCmd := "run 'surf close' first"
		if name != session.DefaultName {
			closeCmd = "run 'surf close --session " + name + "' first"
		}
		if !strings.Contains(he.Hint, closeCmd) {
			t.Errorf("%s: hint %q does not say %q", name, he.Hint, closeCmd)
		}
	}
}

func TestFlagArgs(t *testing.T) {
	fs := pflag.NewFlagSet("", pflag.ContinueOnError)
	fs.StringSlice("allow", nil, "")
	fs.String("policy", "", "")
	fs.String("state", "", "")
	fs.Duration("idle", 0, "")
	fs.Bool("json", false, "")
	fs.String("unset", "", "")
	if err := fs.Parse([]string{"--allow=a.com,b.com", "--policy=p.yaml", "--idle=1m", "--json", "--state="}); err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{"allow": true, "policy": true, "state": true, "idle": true, "unset": true}
	got := session.FlagArgs(fs, names)
	abs, _ := filepath.Abs("p.yaml")
	want := []string{"--allow=a.com", "--allow=b.com", "--idle=1m0s", "--policy=" + abs, "--state="}
	if !slices.Equal(got, want) {
		t.Errorf("FlagArgs = %q, want %q", got, want)
	}
}

func TestNamesListsSessionsBySocket(t *testing.T) {
	getenv, rt := runtimeEnv(t)
	serve(t, getenv, "zeta", func(ctx context.Context, req daemon.Request) daemon.Response { return daemon.Response{OK: true} })
	serve(t, getenv, "alpha", func(ctx context.Context, req daemon.Request) daemon.Response { return daemon.Response{OK: true} })
	if err := os.WriteFile(filepath.Join(rt, "alpha.log"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := session.Names(getenv)
	if err != nil || !slices.Equal(got, []string{"alpha", "zeta"}) {
		t.Fatalf("Names = %q, %v, want [alpha zeta]", got, err)
	}
}

func TestCloseOfNoSessionRemovesAStaleSocket(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	// A stale socket: one a dead daemon left, nothing listens on it.
	stale, err := session.PathsOf(getenv, "stale")
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: stale.Socket, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	_, err = session.Close(context.Background(), stale, nil)
	if !errors.Is(err, daemon.ErrNoDaemon) {
		t.Fatalf("Close(stale) = %v, want ErrNoDaemon", err)
	}
	if _, err := os.Lstat(stale.Socket); !os.IsNotExist(err) {
		t.Errorf("the stale socket is still there: %v", err)
	}
}

func TestCloseReturnsARefusal(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	p := serve(t, getenv, "default", func(ctx context.Context, req daemon.Request) daemon.Response {
		return daemon.Response{Error: "busy saving", ExitCode: 3}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := session.Close(ctx, p, nil)
	var re *daemon.ResponseError
	if !errors.As(err, &re) || re.Response.ExitCode != 3 {
		t.Fatalf("Close = %v, want the daemon's refusal as a *daemon.ResponseError", err)
	}
}

func TestOpenReusesARunningSession(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	var mu sync.Mutex
	var got []string
	p := serve(t, getenv, "default", func(ctx context.Context, req daemon.Request) daemon.Response {
		mu.Lock()
		got = append(got, req.Tool+" "+string(req.Args))
		mu.Unlock()
		if req.Tool == session.ReqStatus {
			b, _ := json.Marshal(session.Status{Flags: []string{"--allow=example.com"}})
			return daemon.Response{OK: true, Text: string(b)}
		}
		return daemon.Response{OK: true, Text: "opened"}
	})
	ctx := context.Background()
	refuse := func(string) error { t.Error("a running session's URL is checked by the client"); return nil }
	resp, err := session.Open(ctx, p, nil, "http://example.com/", refuse)
	if err != nil || resp.Text != "opened" {
		t.Fatalf("Open = %+v, %v", resp, err)
	}
	resp, err = session.Open(ctx, p, []string{"--allow=example.com"}, "", refuse)
	if err != nil || resp.Text != "opened" {
		t.Fatalf("Open with the same flags = %+v, %v", resp, err)
	}
	_, err = session.Open(ctx, p, []string{"--allow=example.org"}, "", refuse)
	var he *daemon.HintError
	if !errors.As(err, &he) || he.Code != daemon.ExitUsage {
		t.Fatalf("Open with other flags = %v, want a usage *daemon.HintError", err)
	}
	want := []string{`open {"url":"http://example.com/"}`, "status ", `open {"url":""}`, "status "}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(got, want) {
		t.Errorf("the daemon got %q, want %q", got, want)
	}
}

func TestOpenChecksTheURLBeforeStartingADaemon(t *testing.T) {
	getenv, _ := runtimeEnv(t)
	p, err := session.PathsOf(getenv, "new")
	if err != nil {
		t.Fatal(err)
	}
	denied := errors.New("denied: host not in allowlist")
	_, err = session.Open(context.Background(), p, nil, "http://evil.example/", func(string) error { return denied })
	if !errors.Is(err, denied) {
		t.Fatalf("Open = %v, want the check's error", err)
	}
	if _, err := os.Stat(p.Log); !os.IsNotExist(err) {
		t.Errorf("a daemon was started for a denied URL (its log: %v)", err)
	}
}
