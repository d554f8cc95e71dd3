//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock is a session's lock: an exclusive flock on its lock file, held by
// the daemon for as long as it runs. The kernel releases it when the
// process dies however it dies, so a held lock means a live daemon and a
// free lock next to a socket means a stale socket.
type Lock struct {
	f *os.File
}

// Acquire takes the lock at path without waiting. It returns ErrBusy when
// another process holds it.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the session lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrBusy
		}
		return nil, fmt.Errorf("taking the session lock: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release releases the lock. The lock file stays: removing it would let
// two processes lock two different files of the same name.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
