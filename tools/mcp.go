package tools

import (
	"context"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AddToMCPServer registers the named tools on an MCP server, each with its
// input schema and a handler that dispatches through r.Call, so MCP calls
// get the same validation, panic recovery and offered-set gate as any
// other. Names that are not registered are skipped.
//
// offered, if not nil, is asked on every call for the tools available now
// (for example those that make sense on the current page); a call to any
// other tool gets an error result. A nil offered allows every tool named
// here.
//
// Results map to MCP as text content followed by one image content per
// image, with IsError set for tool errors. A runtime error from a handler
// becomes an MCP protocol error.
func (r *Registry) AddToMCPServer(s *mcp.Server, offered func(context.Context) []string, names ...string) {
	var registered []string
	for _, n := range names {
		if _, ok := r.Lookup(n); ok {
			registered = append(registered, n)
		}
	}
	for _, n := range registered {
		t, _ := r.Lookup(n)
		s.AddTool(&mcp.Tool{
			Name:        t.name,
			Description: t.description,
			InputSchema: t.Schema(),
		}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			allowed := registered
			if offered != nil {
				now := offered(ctx)
				allowed = slices.DeleteFunc(slices.Clone(registered), func(n string) bool { return !slices.Contains(now, n) })
			}
			var args []byte
			if req != nil && req.Params != nil {
				args = req.Params.Arguments
			}
			res, err := r.Call(ctx, t.name, args, allowed...)
			if err != nil {
				return nil, err
			}
			return MCPResult(res), nil
		})
	}
}

// MCPResult converts a Result to an MCP tool result: the text (if any)
// then the images, with IsError and Data (as structuredContent) carried
// over.
func MCPResult(res *Result) *mcp.CallToolResult {
	out := &mcp.CallToolResult{Content: []mcp.Content{}}
	if res == nil {
		return out
	}
	out.IsError = res.IsError
	out.StructuredContent = res.Data
	if res.Text != "" || len(res.Images) == 0 {
		out.Content = append(out.Content, &mcp.TextContent{Text: res.Text})
	}
	for _, img := range res.Images {
		out.Content = append(out.Content, &mcp.ImageContent{MIMEType: img.MIME, Data: img.Data})
	}
	return out
}
