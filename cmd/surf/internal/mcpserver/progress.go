package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/cmd/surf/internal/live"
	"github.com/surfkit/surf/websurfer"
)

// withProgress makes a call's progress (websurfer.WithProgress: each step
// of a websurfer run, a page loading, ...) into MCP progress
// notifications, when the client asked for them with a progress token.
// Progress counts the notifications sent; there is no total.
func (s *Server) withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if notify := s.notifier(ctx, req); notify != nil {
		ctx = context.WithValue(ctx, notifierKey{}, notify)
		return websurfer.WithProgress(ctx, notify)
	}
	return ctx
}

type notifierKey struct{}

// liveProgress reports a call's progress to the live view as well as to
// the client's notifier, if it has one.
func liveProgress(ctx context.Context, ls *live.Session) func(string) {
	notify, _ := ctx.Value(notifierKey{}).(func(string))
	if notify == nil {
		return ls.Progress
	}
	return func(msg string) {
		notify(msg)
		ls.Progress(msg)
	}
}
