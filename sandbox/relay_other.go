//go:build !linux

package sandbox

import (
	"errors"
	"log/slog"
	"time"

	"github.com/surfkit/surf/internal/cdpmux"
)

// The DevTools relay needs descriptor passing as Linux does it; elsewhere
// the driver's pipe is left alone.
const relaySupported = false

type relayListener struct{ path, token string }

func listenRelay() (*relayListener, error) { return nil, errors.ErrUnsupported }

func (l *relayListener) close() {}

func (l *relayListener) accept(time.Time, *slog.Logger) (*cdpmux.Mux, error) {
	return nil, errors.ErrUnsupported
}

func handOverPipe(path, token string) error { return errors.ErrUnsupported }
