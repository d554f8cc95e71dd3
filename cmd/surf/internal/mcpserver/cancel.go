package mcpserver

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Cancellation. A call's context ends when the client cancels it
// (notifications/cancelled) or its connection breaks; the surfer's actions
// then interrupt the browser (websurfer stops the tab's loading) and
// return at once. The SDK does not end a call's context when its session
// is closed (an HTTP DELETE, the session timeout, Serve or ServeTransport
// stopping): ServerSession.Close waits for the calls in flight instead.
// So a session also has its own stop, quit, which ends its calls' contexts
// before anything waits for them.

// errSessionEnded is the cause of a call's context ended by its session's
// end.
var errSessionEnded = errors.New("the MCP session ended")

// errNamedSessionClosed is the cause of a call's context ended by
// session_close.
var errNamedSessionClosed = errors.New("the session was closed")

// callContext is ctx, also ended when the session or its client is
// stopped.
func (se *session) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-se.cl.quit.c:
			cancel(errSessionEnded)
		case <-se.quit.c:
			cancel(errNamedSessionClosed)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// stop ends the contexts of the client's calls, running and to come.
func (cl *client) stop() { cl.quit.stop() }

// stopper is a channel closed once, to stop a session's calls.
type stopper struct {
	once sync.Once
	c    chan struct{}
}

func newStopper() *stopper { return &stopper{c: make(chan struct{})} }

func (s *stopper) stop() { s.once.Do(func() { close(s.c) }) }

// stopSession stops the calls of an MCP session, if it has any.
func (s *Server) stopSession(ss *mcp.ServerSession) {
	s.mu.Lock()
	cl := s.clients[ss]
	s.mu.Unlock()
	if cl != nil {
		cl.stop()
	}
}

// stopSessionID stops the calls of the MCP session with an HTTP session
// id.
func (s *Server) stopSessionID(id string) {
	if ss := s.mcpSession(id); ss != nil {
		s.stopSession(ss)
	}
}

// serve runs one MCP session on t until the client goes away or ctx ends.
// It is mcp.Server.Run, except that on ctx's end it stops the session's
// calls first (Run would wait for them to finish on their own), and that
// an ordinary stop is not logged as an error.
func (s *Server) serve(ctx context.Context, t mcp.Transport) error {
	ss, err := s.mcp.Connect(ctx, t, nil)
	if err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err := <-ended:
		s.log.Debug("mcp: the client went away", "err", err)
		return err
	case <-ctx.Done():
	}
	s.stopSession(ss)
	ss.Close()
	<-ended
	s.log.Debug("mcp: stopped", "cause", context.Cause(ctx))
	return ctx.Err()
}
