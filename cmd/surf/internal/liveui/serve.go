package liveui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/cmd/surf/internal/mcpserver"
)

// Server is a live view served on its own address, with its own hub of
// live sessions (surf run --ui, surf work --ui).
type Server struct {
	Hub      *live.Hub
	LoginURL string // the address a person opens first (mcpserver.LoginURL)

	ui    *Handler
	srv   *http.Server
	errc  chan error
	close sync.Once
}

// Serve listens on addr and serves a new hub's UI behind mcpserver's
// HTTP checks with the options o, until Close. The server's requests run
// on a context that keeps ctx's values but not its end.
func Serve(ctx context.Context, addr string, o mcpserver.HTTPOptions, logger *slog.Logger) (*Server, error) {
	hub := live.New(live.Config{Logger: logger})
	ui, err := New(Config{Hub: hub, Logger: logger})
	if err != nil {
		hub.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		ui.Close()
		hub.Close()
		return nil, fmt.Errorf("--ui: listening on %s: %w", addr, err)
	}
	s := &Server{Hub: hub, LoginURL: mcpserver.LoginURL(ln.Addr(), o), ui: ui, errc: make(chan error, 1)}
	s.srv = &http.Server{
		Handler:           mcpserver.Guard(ui, ln.Addr().String(), o, true, logger),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	go func() { s.errc <- s.srv.Serve(ln) }()
	return s, nil
}

// Close ends the sessions, the streams and the server. Closing again, or
// a nil *Server, does nothing.
func (s *Server) Close() {
	if s != nil {
		s.close.Do(s.shutdown)
	}
}

func (s *Server) shutdown() {
	s.Hub.Close()
	s.ui.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	if err := <-s.errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		_ = err // the server is gone either way
	}
}
