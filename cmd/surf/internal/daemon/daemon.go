// Package daemon is the plumbing of surf's session daemons, the background
// processes that keep a browser session open between shell commands.
//
// An agent working through a shell drives a session one command at a time
// ("surf open URL", "surf click 12", "surf close"). The package finds the user's runtime directory and
// names a session's files in it (socket, pid file, lock, log); it serves
// JSON-line requests on a unix socket that only the same user may connect to
// (checked with SO_PEERCRED), one request at a time, until an idle timeout,
// a stop signal or its context ends; and it dials a daemon from the client
// side, telling "no daemon" apart from other failures. It knows nothing about
// browsers: the daemon's Handler does the work.
package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"
)

// Defaults for the zero values of Config.
const (
	// DefaultIdle is how long a daemon waits for a request before it
	// exits.
	DefaultIdle = 10 * time.Minute
	// DefaultRequestTimeout bounds one request's handling.
	DefaultRequestTimeout = 2 * time.Minute
	// DefaultMaxConns caps the connections a daemon serves at once.
	DefaultMaxConns = 32
)

// Size limits of one line of the protocol.
const (
	MaxRequestBytes  = 8 << 20
	MaxResponseBytes = 64 << 20
	// MaxToolName caps Request.Tool.
	MaxToolName = 64
)

// Exit codes a Response may carry, as the surf CLI uses them.
const (
	ExitFailed = 1 // the request failed (a tool error, a denied URL)
	ExitUsage  = 2 // the request was malformed or named no known action
)

var (
	// ErrNoDaemon is returned by Dial when no daemon listens on the
	// socket: it does not exist, or its daemon died (a stale socket).
	ErrNoDaemon = errors.New("no session daemon is running")
	// ErrBusy is returned by Acquire when another process holds the
	// session's lock: a daemon for the session is already running.
	ErrBusy = errors.New("the session is held by another daemon")
	// ErrPeer is returned by Dial when the socket belongs to a process of
	// another user; the server refuses such peers itself.
	ErrPeer = errors.New("the session socket belongs to another user")
)

// Request is one line from the client: a tool of surf's action space by
// name with its arguments, or a built-in of the daemon (such as "observe"
// or "close"), which the Handler tells apart.
type Request struct {
	Tool string          `json:"tool"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response is the daemon's answer to one Request.
type Response struct {
	OK   bool   `json:"ok"`
	Text string `json:"text,omitempty"`
	// Image is an image the request asked for (a screenshot); it is
	// base64 on the wire.
	Image []byte `json:"image_b64,omitempty"`
	// Error says why the request failed, Hint what the user can do.
	Error string `json:"error,omitempty"`
	Hint  string `json:"hint,omitempty"`
	// ExitCode is the exit code a CLI should end with: 0 on success,
	// ExitFailed or ExitUsage (or another code the handler chose) on
	// failure.
	ExitCode int `json:"exit_code,omitempty"`
	// Observation is the session's latest observation as JSON, when the
	// request made or kept one (a client's --json prints it).
	Observation json.RawMessage `json:"observation,omitempty"`
}

// Fail returns a failed Response with err's message, a hint (may be empty)
// and an exit code; a code of 0 means ExitFailed.
func Fail(code int, err error, hint string) Response {
	if code == 0 {
		code = ExitFailed
	}
	msg := "unknown error"
	if err != nil {
		msg = err.Error()
	}
	return Response{Error: msg, Hint: hint, ExitCode: code}
}

// Handler handles the requests of a daemon, one at a time.
type Handler interface {
	Handle(ctx context.Context, req Request) Response
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req Request) Response

var _ Handler = HandlerFunc(nil)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req Request) Response { return f(ctx, req) }

// DecodeRequest parses one request line. It refuses unknown fields,
// trailing data, a missing or overlong tool name and arguments that are
// not a JSON object; null or absent arguments mean none.
func DecodeRequest(line []byte) (Request, error) {
	var req Request
	if len(line) > MaxRequestBytes {
		return req, fmt.Errorf("request of %d bytes is over the limit of %d", len(line), MaxRequestBytes)
	}
	r := bytes.NewReader(line)
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return Request{}, fmt.Errorf("bad request: %w", err)
	}
	rest, _ := io.ReadAll(io.MultiReader(dec.Buffered(), r))
	if len(bytes.TrimSpace(rest)) != 0 {
		return Request{}, errors.New("bad request: data after the JSON object")
	}
	if req.Tool == "" {
		return Request{}, errors.New("bad request: no tool")
	}
	if len(req.Tool) > MaxToolName {
		return Request{}, fmt.Errorf("bad request: tool name longer than %d bytes", MaxToolName)
	}
	args := bytes.TrimSpace(req.Args)
	switch {
	case len(args) == 0 || bytes.Equal(args, []byte("null")):
		req.Args = nil
	case args[0] != '{':
		return Request{}, errors.New("bad request: args must be a JSON object")
	default:
		req.Args = args
	}
	return req, nil
}

// RuntimeDir is the directory that holds the sessions' sockets, as getenv
// describes it: $SURF_RUNTIME_DIR when set, else $XDG_RUNTIME_DIR/surf,
// else surf-<uid> under the temp dir ($TMPDIR or /tmp). Call EnsureDir
// before use.
func RuntimeDir(getenv func(string) string) string {
	if d := getenv("SURF_RUNTIME_DIR"); d != "" {
		return filepath.Clean(d)
	}
	if d := getenv("XDG_RUNTIME_DIR"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "surf")
	}
	tmp := getenv("TMPDIR")
	if tmp == "" || !filepath.IsAbs(tmp) {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "surf-"+strconv.Itoa(os.Getuid()))
}

// EnsureDir creates dir (and its parents) with mode 0700 if it does not
// exist, then checks that it is a real directory (not a symbolic link),
// owned by this user and closed to everyone else. A directory that fails
// the check is refused, not repaired: in a shared temp dir it may be
// someone else's trap.
func EnsureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the runtime directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("checking the runtime directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("runtime directory %s is not a directory (a symbolic link?)", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("runtime directory %s belongs to uid %d, not to this user (uid %d)", dir, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("runtime directory %s is open to other users (mode %04o); it must be 0700", dir, perm)
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// CheckName checks a session name: 1 to 64 letters, digits, '_', '.' or
// '-', starting with a letter or digit.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("bad session name %q: use 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit", name)
	}
	return nil
}

// maxSocketPath is the longest unix socket path Linux accepts (108 bytes
// with the terminating NUL).
const maxSocketPath = 107

// Paths are the files of one session in the runtime directory.
type Paths struct {
	Dir    string
	Name   string
	Socket string // the unix socket, NAME.sock
	PID    string // the daemon's pid, NAME.pid
	Lock   string // held by the daemon for its life, NAME.lock
	Log    string // the daemon's stderr, NAME.log
}

// PathsFor names the files of session name in dir. It checks the name and
// that the socket path fits in a unix socket address.
func PathsFor(dir, name string) (Paths, error) {
	if err := CheckName(name); err != nil {
		return Paths{}, err
	}
	p := Paths{
		Dir:    dir,
		Name:   name,
		Socket: filepath.Join(dir, name+".sock"),
		PID:    filepath.Join(dir, name+".pid"),
		Lock:   filepath.Join(dir, name+".lock"),
		Log:    filepath.Join(dir, name+".log"),
	}
	if len(p.Socket) > maxSocketPath {
		return Paths{}, fmt.Errorf("socket path %s is %d bytes, over the limit of %d for unix sockets; set SURF_RUNTIME_DIR to a shorter directory", p.Socket, len(p.Socket), maxSocketPath)
	}
	return p, nil
}

// ReadPID reads a pid file; 0 when it is missing or unreadable.
func ReadPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// WritePID writes this process's pid to path (mode 0600).
func WritePID(path string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
