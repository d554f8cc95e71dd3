package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testDir is a private runtime dir with a short path (unix socket paths
// are limited to 107 bytes).
func testDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dmn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serve starts a server on a fresh socket and returns it, its socket and
// a channel that gets Serve's result.
func serve(t *testing.T, cfg Config) (*Server, string, <-chan error) {
	t.Helper()
	if cfg.Socket == "" {
		cfg.Socket = filepath.Join(testDir(t), "s.sock")
	}
	srv, err := Listen(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		done <- srv.Serve(ctx)
		close(finished)
	}()
	t.Cleanup(func() {
		cancel()
		<-finished
		srv.Close()
	})
	return srv, cfg.Socket, done
}

func echo() Handler {
	return HandlerFunc(func(ctx context.Context, req Request) Response {
		if req.Tool == "fail" {
			return Fail(0, errors.New("it failed"), "try again")
		}
		return Response{OK: true, Text: req.Tool + " " + string(req.Args)}
	})
}

func call(t *testing.T, socket string, req Request) *Response {
	t.Helper()
	c, err := Dial(context.Background(), socket)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestRoundTrip(t *testing.T) {
	_, sock, _ := serve(t, Config{Handler: echo()})
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.PID() != os.Getpid() {
		t.Errorf("PID() = %d, want this process %d", c.PID(), os.Getpid())
	}
	for i := range 3 { // several requests on one connection
		resp, err := c.Call(context.Background(), Request{Tool: "click", Args: json.RawMessage(fmt.Sprintf(`{"target_id":%d}`, i+1))})
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`click {"target_id":%d}`, i+1)
		if !resp.OK || resp.Text != want || resp.ExitCode != 0 {
			t.Errorf("response %d = %+v, want OK %q", i, resp, want)
		}
	}
	resp, err := c.Call(context.Background(), Request{Tool: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OK || resp.Error != "it failed" || resp.Hint != "try again" || resp.ExitCode != ExitFailed {
		t.Errorf("failed response = %+v", resp)
	}
}

func TestImageIsBase64OnTheWire(t *testing.T) {
	b, err := json.Marshal(Response{OK: true, Image: []byte{0xff, 0xd8, 0xff}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"ok":true,"image_b64":"/9j/"}`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
}

func TestSocketIsPrivate(t *testing.T) {
	_, sock, _ := serve(t, Config{Handler: echo()})
	fi, err := os.Lstat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode = %v, want a socket with 0600", fi.Mode())
	}
}

func TestRequestsAreSerialized(t *testing.T) {
	var inflight, most, total atomic.Int32
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		total.Add(1)
		return Response{OK: true}
	})
	_, sock, _ := serve(t, Config{Handler: h})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				c, err := Dial(context.Background(), sock)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := c.Call(context.Background(), Request{Tool: "x"}); err != nil {
					t.Error(err)
				}
				c.Close()
			}
		}()
	}
	wg.Wait()
	if most.Load() != 1 || total.Load() != 24 {
		t.Errorf("at most %d requests ran at once (want 1), %d ran (want 24)", most.Load(), total.Load())
	}
}

func TestIdleTimeoutEndsServe(t *testing.T) {
	srv, sock, done := serve(t, Config{Handler: echo(), Idle: 50 * time.Millisecond})
	call(t, sock, Request{Tool: "ping"})
	if err := <-done; err != nil {
		t.Fatalf("Serve = %v, want nil", err)
	}
	if srv.Reason() != "idle" {
		t.Errorf("Reason = %q, want idle", srv.Reason())
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still there after the idle timeout: %v", err)
	}
	if _, err := Dial(context.Background(), sock); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("Dial after stop = %v, want ErrNoDaemon", err)
	}
}

func TestIdleWaitsForARunningRequest(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		close(started)
		<-release
		return Response{OK: true, Text: "finished"}
	})
	// The idle period leaves the test time to connect even on a busy
	// machine; the request then runs for several of them.
	const idle = 250 * time.Millisecond
	_, sock, done := serve(t, Config{Handler: h, Idle: idle})
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make(chan *Response, 1)
	go func() {
		resp, err := c.Call(context.Background(), Request{Tool: "slow"})
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	select {
	case <-started:
	case resp := <-got:
		t.Fatalf("the request ended before its handler ran: %+v", resp)
	case err := <-done:
		t.Fatalf("Serve returned (%v) before the request reached it", err)
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) while a request was running", err)
	case <-time.After(4 * idle): // several idle periods
	}
	close(release)
	if resp := <-got; resp == nil || resp.Text != "finished" {
		t.Errorf("the running request got %+v", resp)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

func TestStopAfterResponse(t *testing.T) {
	stop := make(chan struct{})
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		if req.Tool == "close" {
			close(stop)
			time.Sleep(20 * time.Millisecond) // let Serve see Stop first
			return Response{OK: true, Text: "closed"}
		}
		return Response{OK: true}
	})
	srv, sock, done := serve(t, Config{Handler: h, Stop: stop})
	idle, err := Dial(context.Background(), sock) // an idle connection is closed at stop
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	resp := call(t, sock, Request{Tool: "close"})
	if !resp.OK || resp.Text != "closed" {
		t.Errorf("close response = %+v", resp)
	}
	if err := <-done; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if srv.Reason() != "stopped" {
		t.Errorf("Reason = %q", srv.Reason())
	}
	if _, err := idle.Call(context.Background(), Request{Tool: "x"}); err == nil {
		t.Error("a request on a connection of a stopped server succeeded")
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still there: %v", err)
	}
}

func TestContextEndsServe(t *testing.T) {
	sock := filepath.Join(testDir(t), "s.sock")
	srv, err := Listen(Config{Socket: sock, Handler: echo()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	call(t, sock, Request{Tool: "ping"})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Serve = %v, want context.Canceled", err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("socket still there: %v", err)
	}
}

func TestStaleSocket(t *testing.T) {
	sock := filepath.Join(testDir(t), "s.sock")
	if _, err := Dial(context.Background(), sock); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("Dial with no socket = %v, want ErrNoDaemon", err)
	}
	// A daemon that died leaves its socket file with nobody listening.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Lstat(sock); err != nil {
		t.Fatalf("the stale socket should still exist: %v", err)
	}
	if _, err := Dial(context.Background(), sock); !errors.Is(err, ErrNoDaemon) {
		t.Fatalf("Dial to a stale socket = %v, want ErrNoDaemon", err)
	}
	// The next server takes its place.
	_, _, _ = serve(t, Config{Socket: sock, Handler: echo()})
	if resp := call(t, sock, Request{Tool: "ping"}); !resp.OK {
		t.Errorf("response = %+v", resp)
	}
}

func TestListenRefusesANonSocket(t *testing.T) {
	path := filepath.Join(testDir(t), "s.sock")
	if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(Config{Socket: path, Handler: echo()}); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("Listen over a regular file = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "mine" {
		t.Error("the file was changed")
	}
}

func TestOtherUsersAreRefused(t *testing.T) {
	var ran atomic.Bool
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		ran.Store(true)
		return Response{OK: true}
	})
	sock := filepath.Join(testDir(t), "s.sock")
	srv, err := Listen(Config{Socket: sock, Handler: h})
	if err != nil {
		t.Fatal(err)
	}
	srv.uid = os.Getuid() + 1 // as if this process were another user
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if resp, err := c.Call(context.Background(), Request{Tool: "x"}); err == nil {
		t.Errorf("a peer of another uid got %+v", resp)
	}
	if ran.Load() {
		t.Error("the handler ran for a peer of another uid")
	}
}

func TestBadRequestsGetAnErrorAndTheConnectionLivesOn(t *testing.T) {
	_, sock, _ := serve(t, Config{Handler: echo()})
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, line := range []string{`not json`, `{"tool":""}`, `{"tool":"x","extra":1}`, `{"tool":"x","args":[1]}`, `{"tool":"x"} {"tool":"y"}`} {
		fmt.Fprintln(conn, line)
		b, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		var resp Response
		if err := json.Unmarshal(b, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.OK || resp.ExitCode != ExitUsage || !strings.HasPrefix(resp.Error, "bad request") {
			t.Errorf("%s: got %+v, want a bad request", line, resp)
		}
	}
	fmt.Fprintln(conn, `{"tool":"ping"}`)
	b, err := r.ReadBytes('\n')
	if err != nil || !strings.Contains(string(b), `"ok":true`) {
		t.Errorf("good request after bad ones: %s %v", b, err)
	}
}

func TestOversizedRequest(t *testing.T) {
	_, sock, _ := serve(t, Config{Handler: echo()})
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		big := `{"tool":"x","args":{"s":"` + strings.Repeat("a", MaxRequestBytes) + `"}}` + "\n"
		conn.Write([]byte(big))
	}()
	b, err := bufio.NewReader(conn).ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "over the limit") {
		t.Errorf("oversized request got %s", b)
	}
}

func TestHandlerPanicIsAnError(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		if req.Tool == "boom" {
			panic("kaboom")
		}
		return Response{OK: true}
	})
	_, sock, _ := serve(t, Config{Handler: h})
	resp := call(t, sock, Request{Tool: "boom"})
	if resp.OK || !strings.Contains(resp.Error, "kaboom") {
		t.Errorf("panicking handler gave %+v", resp)
	}
	if resp := call(t, sock, Request{Tool: "ok"}); !resp.OK {
		t.Errorf("after the panic: %+v", resp)
	}
}

func TestRequestTimeout(t *testing.T) {
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		<-ctx.Done()
		return Fail(0, ctx.Err(), "")
	})
	_, sock, _ := serve(t, Config{Handler: h, RequestTimeout: 20 * time.Millisecond})
	if resp := call(t, sock, Request{Tool: "hang"}); resp.OK || !strings.Contains(resp.Error, "deadline") {
		t.Errorf("response = %+v", resp)
	}
}

func TestClientContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := HandlerFunc(func(ctx context.Context, req Request) Response {
		<-release
		return Response{OK: true}
	})
	_, sock, _ := serve(t, Config{Handler: h})
	c, err := Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := c.Call(ctx, Request{Tool: "hang"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Call = %v, want context.Canceled", err)
	}
}

func TestListenValidates(t *testing.T) {
	sock := filepath.Join(testDir(t), "s.sock")
	for _, cfg := range []Config{
		{Handler: echo()},
		{Socket: sock},
		{Socket: sock, Handler: echo(), Idle: -time.Second},
	} {
		if srv, err := Listen(cfg); err == nil {
			srv.Close()
			t.Errorf("Listen(%+v) succeeded", cfg)
		}
	}
}

func TestLock(t *testing.T) {
	path := filepath.Join(testDir(t), "s.lock")
	l, err := Acquire(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(path); !errors.Is(err, ErrBusy) {
		t.Errorf("second Acquire = %v, want ErrBusy", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(path)
	if err != nil {
		t.Fatalf("Acquire after Release = %v", err)
	}
	l2.Release()
}

func TestRuntimeDir(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	uid := fmt.Sprint(os.Getuid())
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"SURF_RUNTIME_DIR": "/x/rt/", "XDG_RUNTIME_DIR": "/run/user/1"}, "/x/rt"},
		{map[string]string{"XDG_RUNTIME_DIR": "/run/user/1", "TMPDIR": "/t"}, "/run/user/1/surf"},
		{map[string]string{"XDG_RUNTIME_DIR": "relative", "TMPDIR": "/t"}, "/t/surf-" + uid},
		{map[string]string{}, "/tmp/surf-" + uid},
	} {
		if got := RuntimeDir(env(tc.env)); got != tc.want {
			t.Errorf("RuntimeDir(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}

func TestEnsureDir(t *testing.T) {
	base := testDir(t)
	dir := filepath.Join(base, "a", "b")
	if err := EnsureDir(dir); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("created dir: %v %v", fi.Mode(), err)
	}

	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	if err := EnsureDir(open); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("EnsureDir on a 0755 dir = %v", err)
	}
	if fi, _ := os.Stat(open); fi.Mode().Perm() != 0o755 {
		t.Error("EnsureDir changed the mode of a dir it refused")
	}

	link := filepath.Join(base, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := EnsureDir(link); err == nil {
		t.Error("EnsureDir accepted a symbolic link")
	}

	if os.Getuid() == 0 { // only root can give a directory away
		theirs := filepath.Join(base, "theirs")
		if err := os.Mkdir(theirs, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := EnsureDir(theirs); err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
			t.Errorf("EnsureDir on another user's dir = %v", err)
		}
	}
}

func TestPathsFor(t *testing.T) {
	p, err := PathsFor("/run/user/1/surf", "work-2")
	if err != nil {
		t.Fatal(err)
	}
	if p.Socket != "/run/user/1/surf/work-2.sock" || p.PID != "/run/user/1/surf/work-2.pid" || p.Lock != "/run/user/1/surf/work-2.lock" || p.Log != "/run/user/1/surf/work-2.log" {
		t.Errorf("paths = %+v", p)
	}
	for _, bad := range []string{"", ".hidden", "../x", "a/b", "a b", strings.Repeat("x", 65), "-x"} {
		if _, err := PathsFor("/run/user/1/surf", bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	if _, err := PathsFor("/"+strings.Repeat("d", 100), "default"); err == nil || !strings.Contains(err.Error(), "SURF_RUNTIME_DIR") {
		t.Errorf("overlong socket path: %v", err)
	}
}

func TestPIDFile(t *testing.T) {
	path := filepath.Join(testDir(t), "s.pid")
	if ReadPID(path) != 0 {
		t.Error("ReadPID of a missing file is not 0")
	}
	if err := WritePID(path); err != nil {
		t.Fatal(err)
	}
	if got := ReadPID(path); got != os.Getpid() {
		t.Errorf("ReadPID = %d, want %d", got, os.Getpid())
	}
}

func TestDecodeRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		tool string
		args string
		ok   bool
	}{
		{`{"tool":"click","args":{"target_id":3}}`, "click", `{"target_id":3}`, true},
		{`{"tool":"observe"}` + "\n", "observe", "", true},
		{`{"tool":"observe","args":null}`, "observe", "", true},
		{` {"tool":"x","args": {} } `, "x", "{}", true},
		{`{"tool":"x","args":"{}"}`, "", "", false},
		{`{"tool":"x","args":[]}`, "", "", false},
		{`{"tool":7}`, "", "", false},
		{`{}`, "", "", false},
		{`{"tool":"x"}]`, "", "", false},
		{`{"tool":"x"}{}`, "", "", false},
		{`{"tool":"` + strings.Repeat("t", MaxToolName+1) + `"}`, "", "", false},
		{``, "", "", false},
	} {
		req, err := DecodeRequest([]byte(tc.in))
		if (err == nil) != tc.ok {
			t.Errorf("DecodeRequest(%q) error = %v, want ok=%v", tc.in, err, tc.ok)
			continue
		}
		if tc.ok && (req.Tool != tc.tool || string(req.Args) != tc.args) {
			t.Errorf("DecodeRequest(%q) = %q %s, want %q %s", tc.in, req.Tool, req.Args, tc.tool, tc.args)
		}
	}
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{`{"tool":"click","args":{"target_id":3}}`, `{"tool":"x","args":null}`, `{"tool":"x"}]`, `{`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := DecodeRequest(line)
		if err != nil {
			return
		}
		if req.Tool == "" || len(req.Tool) > MaxToolName {
			t.Fatalf("accepted tool %q", req.Tool)
		}
		if req.Args != nil && (req.Args[0] != '{' || !json.Valid(req.Args)) {
			t.Fatalf("accepted args %q", req.Args)
		}
		// What was accepted encodes to a request that decodes the same.
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeRequest(b)
		if err != nil || again.Tool != req.Tool {
			t.Fatalf("re-encoded %s: %+v, %v", b, again, err)
		}
	})
}
