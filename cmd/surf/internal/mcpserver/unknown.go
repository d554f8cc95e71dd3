package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Unknown tools. A call of a tool the server does not have is a JSON-RPC
// error (invalid params), not an error result: the MCP specification
// (2025-06-18 and 2025-11-25, "Error Handling" under Tools) lists unknown
// tools among the protocol errors, and the official conformance suite
// counts an error result as a failed call. What surf adds is the message:
// it names the tools there are, so that a client (or the model behind it)
// can correct itself.

// unknownToolMiddleware rewrites the SDK's "unknown tool" error to list
// the server's tools.
func (s *Server) unknownToolMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err == nil {
			return res, err
		}
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(werr.Message, "unknown tool ") {
			return res, err
		}
		name := ""
		if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
			name = p.Name
		}
		return nil, &jsonrpc.Error{
			Code:    jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("unknown tool %q: this server's tools are %s (tools/list describes them)", name, strings.Join(s.list, ", ")),
		}
	}
}
