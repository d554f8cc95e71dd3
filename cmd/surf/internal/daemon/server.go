package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// Config configures a Server. Socket and Handler are required; every other
// zero value is a documented default.
type Config struct {
	// Socket is the unix socket path to listen on (Paths.Socket). Its
	// directory should have passed EnsureDir. A socket file already there
	// is removed: the caller holds the session's Lock, so it is stale.
	Socket string
	// Handler answers the requests, one at a time.
	Handler Handler
	// Idle is how long the server waits without a request before Serve
	// returns; zero means DefaultIdle.
	Idle time.Duration
	// RequestTimeout bounds one request's handling (its context);
	// zero means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// MaxConns caps the connections served at once; more are closed at
	// once. Zero means DefaultMaxConns.
	MaxConns int
	// Stop, when closed, makes Serve return once the request being
	// handled (if any) has had its response written: the handler closes
	// it to end the daemon after a "close" request, or when its browser
	// is gone.
	Stop <-chan struct{}
	// Logger receives refused peers and bad requests; nil discards.
	Logger *slog.Logger
}

// Server serves a daemon's socket.
type Server struct {
	cfg  Config
	ln   *net.UnixListener
	sock os.FileInfo // the socket file as bound
	log  *slog.Logger
	uid  int // the only uid allowed to connect
	sem  chan struct{}
	reqM sync.Mutex // serializes requests

	mu       sync.Mutex
	conns    map[*serverConn]struct{}
	busy     int
	last     time.Time
	stopping bool
	reason   string

	wg        sync.WaitGroup
	closeOnce sync.Once
}

type serverConn struct {
	c    *net.UnixConn
	busy bool
}

// Listen validates cfg, removes a stale socket file and listens on
// cfg.Socket with mode 0600.
func Listen(cfg Config) (*Server, error) {
	if cfg.Socket == "" {
		return nil, errors.New("daemon: no socket path")
	}
	if cfg.Handler == nil {
		return nil, errors.New("daemon: no handler")
	}
	if cfg.Idle < 0 || cfg.RequestTimeout < 0 || cfg.MaxConns < 0 {
		return nil, errors.New("daemon: negative limit")
	}
	if cfg.Idle == 0 {
		cfg.Idle = DefaultIdle
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if fi, err := os.Lstat(cfg.Socket); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket; remove it", cfg.Socket)
		}
		if err := os.Remove(cfg.Socket); err != nil {
			return nil, fmt.Errorf("removing the stale socket: %w", err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: cfg.Socket, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", cfg.Socket, err)
	}
	// The directory is 0700 (EnsureDir), so nobody else could reach the
	// socket between bind and chmod.
	if err := os.Chmod(cfg.Socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("restricting the socket: %w", err)
	}
	ln.SetUnlinkOnClose(false) // Close removes it, and only if it is still ours
	fi, err := os.Lstat(cfg.Socket)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("checking the socket: %w", err)
	}
	return &Server{
		sock:  fi,
		cfg:   cfg,
		ln:    ln,
		log:   log,
		uid:   os.Getuid(),
		sem:   make(chan struct{}, cfg.MaxConns),
		conns: map[*serverConn]struct{}{},
		last:  time.Now(),
	}, nil
}

// Serve accepts connections and answers their requests until ctx ends,
// cfg.Stop is closed, or no request came for cfg.Idle. It then stops
// accepting, lets the request being handled finish and closes every
// connection. It returns ctx's error when ctx ended, nil otherwise; Reason
// says why it stopped.
func (s *Server) Serve(ctx context.Context) error {
	acceptErr := make(chan error, 1)
	go func() { acceptErr <- s.accept(ctx) }()
	timer := time.NewTimer(s.cfg.Idle)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			s.shutdown("interrupted")
			return ctx.Err()
		case <-s.cfg.Stop:
			s.shutdown("stopped")
			return nil
		case err := <-acceptErr:
			if err == nil { // Close was called
				s.shutdown("closed")
				return nil
			}
			s.shutdown("listener failed")
			return fmt.Errorf("accepting connections: %w", err)
		case <-timer.C:
			s.mu.Lock()
			left := s.cfg.Idle - time.Since(s.last)
			if s.busy > 0 {
				left = s.cfg.Idle
			}
			s.mu.Unlock()
			if left <= 0 {
				s.shutdown("idle")
				return nil
			}
			timer.Reset(left)
		}
	}
}

// Reason says why Serve returned: "idle", "stopped", "interrupted" or
// "listener failed"; empty while it runs.
func (s *Server) Reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// Close stops the server if Serve has not, and removes the socket file if
// it is still the one this server made. It is safe to call more than once.
func (s *Server) Close() error {
	s.shutdown("closed")
	return nil
}

func (s *Server) accept(ctx context.Context) error {
	for {
		c, err := s.ln.AcceptUnix()
		if err != nil {
			s.mu.Lock()
			stopping := s.stopping
			s.mu.Unlock()
			if stopping {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		select {
		case s.sem <- struct{}{}:
		default:
			s.log.Warn("session daemon: too many connections; refusing one", "max", s.cfg.MaxConns)
			c.Close()
			continue
		}
		sc := &serverConn{c: c}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			c.Close()
			<-s.sem
			return nil
		}
		s.conns[sc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, sc)
				s.mu.Unlock()
				c.Close()
				<-s.sem
				s.wg.Done()
			}()
			s.serveConn(ctx, sc)
		}()
	}
}

// serveConn answers the requests of one connection, in order.
func (s *Server) serveConn(ctx context.Context, sc *serverConn) {
	uid, pid, err := peerCred(sc.c)
	if err != nil {
		s.log.Warn("session daemon: refusing a connection whose peer cannot be checked", "err", err)
		return
	}
	if uid != s.uid {
		s.log.Warn("session daemon: refusing a connection from another user", "uid", uid, "pid", pid)
		return
	}
	r := bufio.NewReaderSize(sc.c, 64<<10)
	for {
		line, err := readLine(r, MaxRequestBytes)
		if errors.Is(err, errTooLong) {
			s.write(sc, Fail(ExitUsage, fmt.Errorf("request over the limit of %d bytes", MaxRequestBytes), ""))
			return
		}
		if err != nil {
			return // EOF, or closed by shutdown
		}
		s.mu.Lock()
		if s.stopping {
			s.mu.Unlock()
			return
		}
		sc.busy = true
		s.busy++
		s.mu.Unlock()

		var resp Response
		req, err := DecodeRequest(line)
		if err != nil {
			s.log.Debug("session daemon: bad request", "err", err)
			resp = Fail(ExitUsage, err, "")
		} else {
			resp = s.handle(ctx, req)
		}
		werr := s.write(sc, resp)

		s.mu.Lock()
		sc.busy = false
		s.busy--
		s.last = time.Now()
		stopping := s.stopping
		s.mu.Unlock()
		if werr != nil || stopping {
			return
		}
	}
}

// handle runs one request under the request lock, with the request
// timeout, turning a panic into a failed response.
func (s *Server) handle(ctx context.Context, req Request) (resp Response) {
	s.reqM.Lock()
	defer s.reqM.Unlock()
	rctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("session daemon: handler panicked", "tool", req.Tool, "panic", p)
			resp = Fail(ExitFailed, fmt.Errorf("internal error handling %q: %v", req.Tool, p), "")
		}
	}()
	resp = s.cfg.Handler.Handle(rctx, req)
	if !resp.OK && resp.ExitCode == 0 {
		resp.ExitCode = ExitFailed
	}
	return resp
}

// write sends one response line, with a deadline so that a client that
// stopped reading cannot hold the daemon.
func (s *Server) write(sc *serverConn, resp Response) error {
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(Fail(ExitFailed, fmt.Errorf("encoding the response: %w", err), ""))
	}
	b = append(b, '\n')
	sc.c.SetWriteDeadline(time.Now().Add(30 * time.Second))
	_, err = sc.c.Write(b)
	return err
}

// shutdown stops accepting, closes idle connections, lets busy ones write
// their response, waits for them (bounded) and removes the socket.
func (s *Server) shutdown(reason string) {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.stopping = true
		s.reason = reason
		s.ln.Close()
		for sc := range s.conns {
			if !sc.busy {
				sc.c.Close()
			}
		}
		s.mu.Unlock()
		done := make(chan struct{})
		go func() { s.wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(s.cfg.RequestTimeout + 30*time.Second):
			s.log.Warn("session daemon: connections still open at shutdown")
		}
		// Remove the socket only if it is the file this server bound;
		// a socket some other daemon made since is not ours to remove.
		if sameFile(s.sock, s.cfg.Socket) {
			os.Remove(s.cfg.Socket)
		}
	})
}

func sameFile(fi os.FileInfo, path string) bool {
	now, err := os.Lstat(path)
	if err != nil {
		return false
	}
	a, ok1 := fi.Sys().(*syscall.Stat_t)
	b, ok2 := now.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && a.Ino == b.Ino && a.Dev == b.Dev
}

var errTooLong = errors.New("line too long")

// readLine reads one '\n'-terminated line of at most max bytes. A last
// line without '\n' is returned at EOF.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, errTooLong
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) > 0 {
				return line, nil
			}
			return nil, err
		}
		return line, nil
	}
}
