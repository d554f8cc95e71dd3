//go:build linux

package sandbox

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/surfkit/surf/internal/cdpmux"
)

// The DevTools relay: Playwright starts the launcher with the DevTools
// pipe on fds 3 (commands in) and 4 (replies out). The launcher makes a
// new pipe pair for the browser, sends both pairs' far ends to surf's
// process over a Unix socket in a private directory (with a one-time
// token), puts the browser's ends on fds 3 and 4, and execs the browser as
// before. surf's process then relays the pipe (package cdpmux) and can
// send its own commands on it.

const relaySupported = true

// relayListener waits for one launcher's pipe ends.
type relayListener struct {
	dir   string
	path  string
	token string
	ln    *net.UnixListener
}

func listenRelay() (*relayListener, error) {
	dir, err := os.MkdirTemp("", "surf-relay-")
	if err != nil {
		return nil, fmt.Errorf("devtools relay: %w", err)
	}
	path := filepath.Join(dir, "s")
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("devtools relay: %w", err)
	}
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		ln.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("devtools relay: %w", err)
	}
	return &relayListener{dir: dir, path: path, token: hex.EncodeToString(tok[:]), ln: ln}, nil
}

// close stops listening and removes the socket.
func (l *relayListener) close() {
	l.ln.Close()
	os.RemoveAll(l.dir)
}

// accept takes the launcher's pipe ends and starts the relay. Connections
// without the token are dropped.
func (l *relayListener) accept(deadline time.Time, log *slog.Logger) (*cdpmux.Mux, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	for {
		if err := l.ln.SetDeadline(deadline); err != nil {
			return nil, err
		}
		c, err := l.ln.AcceptUnix()
		if err != nil {
			return nil, fmt.Errorf("devtools relay: the launcher did not hand over the browser's pipe: %w", err)
		}
		fds, err := receiveFDs(c, l.token, deadline)
		if err != nil {
			c.Close()
			log.Warn("devtools relay: dropped a connection", "err", err)
			continue
		}
		_, _ = c.Write([]byte{1})
		c.Close()
		files := make([]*os.File, 4)
		for i, fd := range fds {
			files[i] = os.NewFile(uintptr(fd), fmt.Sprintf("devtools-pipe-%d", i))
		}
		// fds: the driver's commands, the driver's replies, the browser's
		// commands, the browser's replies.
		return cdpmux.Start(files[0], files[1], files[2], files[3], cdpmux.Config{CBOR: true, Logger: log}), nil
	}
}

func receiveFDs(c *net.UnixConn, token string, deadline time.Time) ([]int, error) {
	if err := c.SetDeadline(deadline); err != nil {
		return nil, err
	}
	buf := make([]byte, 64)
	oob := make([]byte, syscall.CmsgSpace(4*4))
	n, oobn, _, _, err := c.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	var fds []int
	if msgs, err := syscall.ParseSocketControlMessage(oob[:oobn]); err == nil {
		for _, m := range msgs {
			if got, err := syscall.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if subtle.ConstantTimeCompare(buf[:n], []byte(token)) != 1 || len(fds) != 4 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return nil, errors.New("bad token or descriptors")
	}
	for _, fd := range fds {
		syscall.CloseOnExec(fd)
		// Non-blocking, so that os.File polls it and Close interrupts
		// a read in progress.
		if err := syscall.SetNonblock(fd, true); err != nil {
			for _, fd := range fds {
				syscall.Close(fd)
			}
			return nil, err
		}
	}
	return fds, nil
}

// handOverPipe runs in the launcher, before the exec: it sends the
// driver's pipe ends and a new pipe pair's far ends to surf's process, and
// puts the pair's near ends on fds 3 and 4 for the browser.
func handOverPipe(path, token string) error {
	c, err := net.DialUnix("unix", nil, &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	defer c.Close()
	var toBrowser, fromBrowser [2]int // [read, write]
	if err := syscall.Pipe2(toBrowser[:], syscall.O_CLOEXEC); err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	if err := syscall.Pipe2(fromBrowser[:], syscall.O_CLOEXEC); err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	// Bigger pipes: a snapshot is megabytes; fewer wake-ups to move it.
	const fSetPipeSz = 1031
	for _, fd := range []int{toBrowser[1], fromBrowser[1]} {
		_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), fSetPipeSz, 1<<20)
	}
	rights := syscall.UnixRights(3, 4, toBrowser[1], fromBrowser[0])
	if _, _, err := c.WriteMsgUnix([]byte(token), rights, nil); err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	ack := make([]byte, 1)
	if _, err := c.Read(ack); err != nil {
		return fmt.Errorf("devtools relay: surf did not take the pipe: %w", err)
	}
	if err := syscall.Dup3(toBrowser[0], 3, 0); err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	if err := syscall.Dup3(fromBrowser[1], 4, 0); err != nil {
		return fmt.Errorf("devtools relay: %w", err)
	}
	for _, fd := range []int{toBrowser[0], toBrowser[1], fromBrowser[0], fromBrowser[1]} {
		syscall.Close(fd)
	}
	return nil
}
