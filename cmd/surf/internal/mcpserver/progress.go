package mcpserver

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/websurfer"
)

// withProgress makes a call's progress (websurfer.WithProgress: each step
// of a websurfer run, a page loading, ...) into MCP progress
// notifications, when the client asked for them with a progress token.
// Progress counts the notifications sent; there is no total.
func (s *Server) withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if req == nil || req.Params == nil || req.Session == nil {
		return ctx
	}
	token := req.Params.GetProgressToken()
	if token == nil {
		return ctx
	}
	var mu sync.Mutex
	n := 0
	return websurfer.WithProgress(ctx, func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		n++
		// ctx carries the request: over HTTP the notification goes on the
		// call's own stream.
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
		if err != nil {
			s.log.Debug("sending progress", "err", err)
		}
	})
}
