package board

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// embedded is the NATS server of a data directory, shared by the
// processes that open it. The one holding the directory's lock runs the
// server and writes its address and token to server.addr (mode 0600);
// the others read it and connect. When the process running the server
// ends, another one takes the lock and starts the server again on the
// same address, over the same store, and the clients' reconnects find it.
type embedded struct {
	dir        string
	log        *slog.Logger
	url, token string

	mu       sync.Mutex
	srv      *server.Server
	lock     *os.File
	closed   bool
	takingOn bool
}

const (
	lockName = "server.lock"
	addrName = "server.addr"
)

func openEmbedded(ctx context.Context, dir string, log *slog.Logger) (*embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("the board's data directory: %v", err)
	}
	e := &embedded{dir: dir, log: log}
	deadline := time.Now().Add(15 * time.Second)
	for {
		started, err := e.tryStart()
		if err != nil {
			return nil, err
		}
		if started {
			return e, nil
		}
		if u, tok, err := readAddr(dir); err == nil && reachable(u) {
			e.url, e.token = u, tok
			return e, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the board's server in %s is locked by another process but does not answer", dir)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tryStart takes the directory's lock and starts the server; false when
// another process holds the lock.
func (e *embedded) tryStart() (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.srv != nil {
		return e.srv != nil, nil
	}
	f, err := os.OpenFile(filepath.Join(e.dir, lockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return false, fmt.Errorf("the board's lock: %v", err)
	}
	ok, err := tryLock(f)
	if err != nil || !ok {
		f.Close()
		return false, err
	}
	port, token := -1, ""
	if u, tok, err := readAddr(e.dir); err == nil {
		if pu, err := url.Parse(u); err == nil {
			if p, err := strconv.Atoi(pu.Port()); err == nil {
				port, token = p, tok
			}
		}
	}
	if e.token != "" {
		token = e.token // a client taking over keeps the address it knows
		if pu, err := url.Parse(e.url); err == nil {
			if p, err := strconv.Atoi(pu.Port()); err == nil {
				port = p
			}
		}
	}
	if token == "" {
		token = randomToken()
	}
	srv, err := startServer(e.dir, port, token)
	if err != nil && port != -1 {
		// the old port is taken: a new address (clients of the old one
		// must reopen the board)
		port, token = -1, randomToken()
		srv, err = startServer(e.dir, port, token)
	}
	if err != nil {
		unlock(f)
		f.Close()
		return false, err
	}
	u := srv.ClientURL()
	if err := writeAddr(e.dir, u, token); err != nil {
		srv.Shutdown()
		unlock(f)
		f.Close()
		return false, err
	}
	e.srv, e.lock, e.url, e.token = srv, f, u, token
	e.log.Info("board: started the embedded NATS server", "dir", e.dir, "url", u)
	return true, nil
}

func startServer(dir string, port int, token string) (*server.Server, error) {
	opts := &server.Options{
		ServerName:    "surf-board",
		Host:          "127.0.0.1",
		Port:          port,
		Authorization: token,
		JetStream:     true,
		StoreDir:      dir,
		NoSigs:        true,
		NoLog:         true,
		MaxPayload:    1 << 20,
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("the embedded NATS server: %v", err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(15 * time.Second) {
		srv.Shutdown()
		return nil, fmt.Errorf("the embedded NATS server did not start (port %d)", port)
	}
	return srv, nil
}

// takeOver is called when the connection drops: if the process that ran
// the server is gone, this one starts it (on the same address).
func (e *embedded) takeOver() {
	e.mu.Lock()
	if e.closed || e.srv != nil || e.takingOn {
		e.mu.Unlock()
		return
	}
	e.takingOn = true
	e.mu.Unlock()
	go func() {
		defer func() {
			e.mu.Lock()
			e.takingOn = false
			e.mu.Unlock()
		}()
		for i := 0; i < 100; i++ {
			started, err := e.tryStart()
			if err != nil {
				e.log.Warn("board: taking over the embedded server", "err", err)
			}
			if started || reachable(e.url) {
				return
			}
			e.mu.Lock()
			closed := e.closed
			e.mu.Unlock()
			if closed {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

func (e *embedded) close() {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	if e.srv != nil {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
		e.srv = nil
	}
	if e.lock != nil {
		unlock(e.lock)
		e.lock.Close()
		e.lock = nil
	}
}

func reachable(u string) bool {
	pu, err := url.Parse(u)
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("tcp", pu.Host, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func readAddr(dir string) (u, token string, err error) {
	f, err := os.Open(filepath.Join(dir, addrName))
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() && len(lines) < 2 {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "nats://") || lines[1] == "" {
		return "", "", errors.New("unreadable server address")
	}
	return lines[0], lines[1], nil
}

func writeAddr(dir, u, token string) error {
	tmp, err := os.CreateTemp(dir, ".addr-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := fmt.Fprintf(tmp, "%s\n%s\n", u, token); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, addrName))
}

func randomToken() string {
	var b [24]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
