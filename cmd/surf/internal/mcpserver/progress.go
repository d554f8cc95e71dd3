package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/surfkit/surf/websurfer"
)

// withProgress makes a call's progress (websurfer.WithProgress: each step
// of a websurfer run, a page loading, ...) into MCP progress
// notifications, when the client asked for them with a progress token.
// Progress counts the notifications sent; there is no total.
func (s *Server) withProgress(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if notify := s.notifier(ctx, req); notify != nil {
		return websurfer.WithProgress(ctx, notify)
	}
	return ctx
}
